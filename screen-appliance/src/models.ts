/**
 * Loads the appliance's ONNX models from the model folder (the committed `models/` by default) on
 * the chosen execution provider, and reports which provider and files are in use. A mounted
 * Hugging Face token-classification directory, when configured, replaces the built-in name model.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RuntimeInfo } from "./app.ts";
import { OnnxTextScorer } from "./classify/text-scorer.ts";
import type { PersonNameFinder } from "./detect/detect.ts";
import type { BiasType, ToxicityType } from "./detect/types.ts";
import { readModelSpec } from "./ml/model-spec.ts";
import { type OpenedSession, openSession, type ProviderPreference } from "./ml/session.ts";
import { loadMountedNer } from "./ner/mounted/load.ts";
import { OnnxPersonNameFinder } from "./ner/person-model.ts";

export const DEFAULT_MODEL_DIR = join(dirname(fileURLToPath(import.meta.url)), "../models");

export interface LoadedModels {
  names: PersonNameFinder;
  bias: OnnxTextScorer<BiasType>;
  toxicity: OnnxTextScorer<ToxicityType>;
  runtime: RuntimeInfo;
  /** Why CUDA was not used, when `auto` tried it. */
  fallbackReason?: string;
}

export interface ModelOptions {
  /** `SCREEN_NER_MODEL_DIR`: a Hugging Face token-classification export used for PERSON_NAME. */
  nerModelDir?: string | undefined;
}

export async function loadModels(
  dir: string,
  preference: ProviderPreference,
  options: ModelOptions = {},
): Promise<LoadedModels> {
  const open = async (name: string) => {
    const file = join(dir, `${name}.onnx`);
    const [opened, spec] = await Promise.all([
      openSession(file, preference),
      readModelSpec(join(dir, `${name}.json`)),
    ]);
    return { ...opened, spec, file, name: spec.name };
  };
  // The mounted model is opened first so a broken directory stops the start before anything else loads.
  const mounted = options.nerModelDir ? await loadMountedNer(options.nerModelDir, preference) : undefined;
  let names: PersonNameFinder;
  let ner: OpenedSession & { name: string; file: string };
  if (mounted) {
    names = mounted.finder;
    ner = { ...mounted, name: "person-ner (mounted)", file: mounted.info.file };
  } else {
    const builtIn = await open("person-ner");
    names = new OnnxPersonNameFinder(builtIn.session, builtIn.spec);
    ner = builtIn;
  }
  const bias = await open("bias");
  const toxicity = await open("toxicity");
  const all = [ner, bias, toxicity];
  const providers = [...new Set(all.map((m) => m.provider))];
  const fallbackReason = all.find((m) => m.fallbackReason)?.fallbackReason;
  return {
    names,
    bias: new OnnxTextScorer<BiasType>(bias.session, bias.spec),
    toxicity: new OnnxTextScorer<ToxicityType>(toxicity.session, toxicity.spec),
    runtime: {
      executionProvider: providers.join("+"),
      models: all.map((m) => ({ name: m.name, file: m.file, executionProvider: m.provider })),
      personNameModel: mounted
        ? { source: "mounted", ...mounted.info }
        : { source: "built-in", name: ner.name, file: ner.file },
      ...(fallbackReason ? { cudaFallbackReason: fallbackReason } : {}),
    },
    ...(fallbackReason ? { fallbackReason } : {}),
  };
}
