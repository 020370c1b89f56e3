/**
 * Loads the appliance's ONNX models from the model folder (the committed `models/` by default) on
 * the chosen execution provider, and reports which provider and files are in use.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RuntimeInfo } from "./app.ts";
import { OnnxTextScorer } from "./classify/text-scorer.ts";
import type { BiasType, ToxicityType } from "./detect/types.ts";
import { readModelSpec } from "./ml/model-spec.ts";
import { openSession, type ProviderPreference } from "./ml/session.ts";
import { OnnxPersonNameFinder } from "./ner/person-model.ts";

export const DEFAULT_MODEL_DIR = join(dirname(fileURLToPath(import.meta.url)), "../models");

export interface LoadedModels {
  names: OnnxPersonNameFinder;
  bias: OnnxTextScorer<BiasType>;
  toxicity: OnnxTextScorer<ToxicityType>;
  runtime: RuntimeInfo;
  /** Why CUDA was not used, when `auto` tried it. */
  fallbackReason?: string;
}

export async function loadModels(dir: string, preference: ProviderPreference): Promise<LoadedModels> {
  const open = async (name: string) => {
    const file = join(dir, `${name}.onnx`);
    const [opened, spec] = await Promise.all([
      openSession(file, preference),
      readModelSpec(join(dir, `${name}.json`)),
    ]);
    return { ...opened, spec, file };
  };
  const ner = await open("person-ner");
  const bias = await open("bias");
  const toxicity = await open("toxicity");
  const all = [ner, bias, toxicity];
  const providers = [...new Set(all.map((m) => m.provider))];
  return {
    names: new OnnxPersonNameFinder(ner.session, ner.spec),
    bias: new OnnxTextScorer<BiasType>(bias.session, bias.spec),
    toxicity: new OnnxTextScorer<ToxicityType>(toxicity.session, toxicity.spec),
    runtime: {
      executionProvider: providers.join("+"),
      models: all.map((m) => ({ name: m.spec.name, file: m.file, executionProvider: m.provider })),
      ...(ner.fallbackReason ? { cudaFallbackReason: ner.fallbackReason } : {}),
    },
    ...(ner.fallbackReason ? { fallbackReason: ner.fallbackReason } : {}),
  };
}
