/**
 * Loads the appliance's ONNX models from the model folder (the committed `models/` by default) on
 * the chosen execution provider, and reports which provider and files are in use. Mounted Hugging
 * Face directories, when configured, replace the built-in models: a token-classification model the
 * name model, text-classification models the bias or toxicity model (the built-in one still answers
 * the types the mounted labels do not name).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RuntimeInfo } from "./app.ts";
import { BIAS, type ClassifierFamily, TOXICITY } from "./classify/mounted/labels.ts";
import { loadMountedClassifier } from "./classify/mounted/load.ts";
import { type BatchTextScorer, OnnxTextScorer } from "./classify/text-scorer.ts";
import type { PersonNameFinder } from "./detect/detect.ts";
import type { BiasType, ToxicityType } from "./detect/types.ts";
import { type ModelSpec, readModelSpec } from "./ml/model-spec.ts";
import { type OpenedSession, openSession, type ProviderPreference } from "./ml/session.ts";
import { readVocabulary, type WordVocabulary } from "./ml/vocabulary.ts";
import { loadMountedNer } from "./ner/mounted/load.ts";
import { OnnxPersonNameFinder } from "./ner/person-model.ts";

export const DEFAULT_MODEL_DIR = join(dirname(fileURLToPath(import.meta.url)), "../models");

export interface LoadedModels {
  names: PersonNameFinder;
  bias: BatchTextScorer<BiasType>;
  toxicity: BatchTextScorer<ToxicityType>;
  runtime: RuntimeInfo;
  /** Why CUDA was not used, when `auto` tried it. */
  fallbackReason?: string;
}

export interface ModelOptions {
  /** `SCREEN_NER_MODEL_DIR`: a Hugging Face token-classification export used for PERSON_NAME. */
  nerModelDir?: string | undefined;
  /** `SCREEN_TOXICITY_MODEL_DIR`: a Hugging Face text-classification export used for toxicity. */
  toxicityModelDir?: string | undefined;
  /** `SCREEN_BIAS_MODEL_DIR`: a Hugging Face text-classification export used for bias. */
  biasModelDir?: string | undefined;
}

type Session = OpenedSession & { name: string; file: string };

/** The built-in models of `dir`, each opened once and only when first asked for. */
function builtInModels(dir: string, preference: ProviderPreference) {
  const opened = new Map<string, Promise<Session & { spec: ModelSpec; vocabulary?: WordVocabulary }>>();
  // Models trained with word vectors share one vocabulary file; it is read once.
  const vocabularies = new Map<string, Promise<WordVocabulary>>();
  const vocabularyOf = (spec: ModelSpec) => {
    if (!spec.words) return Promise.resolve(undefined);
    const key = `${spec.words.file}@${spec.buckets}`;
    let vocabulary = vocabularies.get(key);
    if (!vocabulary) {
      vocabulary = readVocabulary(join(dir, spec.words.file), spec.buckets).then((v) => {
        if (v.index.size !== spec.words?.count)
          throw new Error(
            `${spec.words?.file}: ${v.index.size} words, model ${spec.name} expects ${spec.words?.count}`,
          );
        return v;
      });
      vocabularies.set(key, vocabulary);
    }
    return vocabulary;
  };
  const open = (name: string) => {
    let model = opened.get(name);
    if (!model) {
      const file = join(dir, `${name}.onnx`);
      model = Promise.all([openSession(file, preference), readModelSpec(join(dir, `${name}.json`))]).then(
        async ([session, spec]) => {
          const vocabulary = await vocabularyOf(spec);
          return { ...session, spec, file, name: spec.name, ...(vocabulary ? { vocabulary } : {}) };
        },
      );
      opened.set(name, model);
    }
    return model;
  };
  return {
    names: () => open("person-ner").then((m) => new OnnxPersonNameFinder(m.session, m.spec, m.vocabulary)),
    scorer: <T extends string>(family: ClassifierFamily<T>) =>
      open(family.name).then((m) => new OnnxTextScorer<T>(m.session, m.spec, m.vocabulary)),
    /** The model as `/health` names it, or none when it was never opened. */
    used: async (name: string): Promise<Session[]> => (opened.has(name) ? [await open(name)] : []),
  };
}

export async function loadModels(
  dir: string,
  preference: ProviderPreference,
  options: ModelOptions = {},
): Promise<LoadedModels> {
  const builtIn = builtInModels(dir, preference);
  // Mounted models are opened first so a broken directory stops the start before anything else
  // loads. A mounted classifier opens its family's built-in model only for the types it lacks.
  const ner = options.nerModelDir ? await loadMountedNer(options.nerModelDir, preference) : undefined;
  const mountedBias = options.biasModelDir
    ? await loadMountedClassifier(options.biasModelDir, BIAS, preference, () => builtIn.scorer(BIAS))
    : undefined;
  const mountedToxicity = options.toxicityModelDir
    ? await loadMountedClassifier(options.toxicityModelDir, TOXICITY, preference, () =>
        builtIn.scorer(TOXICITY),
      )
    : undefined;
  const names = ner?.finder ?? (await builtIn.names());
  const bias = mountedBias?.scorer ?? (await builtIn.scorer(BIAS));
  const toxicity = mountedToxicity?.scorer ?? (await builtIn.scorer(TOXICITY));

  const mountedSession = (model: OpenedSession & { info: { file: string } }, name: string): Session[] => [
    { ...model, name: `${name} (mounted)`, file: model.info.file },
  ];
  const sessions = [
    ...(ner ? mountedSession(ner, "person-ner") : await builtIn.used("person-ner")),
    ...(mountedBias ? mountedSession(mountedBias, BIAS.name) : []),
    ...(await builtIn.used(BIAS.name)),
    ...(mountedToxicity ? mountedSession(mountedToxicity, TOXICITY.name) : []),
    ...(await builtIn.used(TOXICITY.name)),
  ];
  const builtInInfo = async (name: string) => {
    const [model] = await builtIn.used(name);
    return { source: "built-in" as const, name: model?.name ?? name, file: model?.file ?? "" };
  };
  const providers = [...new Set(sessions.map((m) => m.provider))];
  const fallbackReason = sessions.find((m) => m.fallbackReason)?.fallbackReason;
  return {
    names,
    bias,
    toxicity,
    runtime: {
      executionProvider: providers.join("+"),
      models: sessions.map((m) => ({ name: m.name, file: m.file, executionProvider: m.provider })),
      personNameModel: ner ? { source: "mounted", ...ner.info } : await builtInInfo("person-ner"),
      biasModel: mountedBias ? { source: "mounted", ...mountedBias.info } : await builtInInfo(BIAS.name),
      toxicityModel: mountedToxicity
        ? { source: "mounted", ...mountedToxicity.info }
        : await builtInInfo(TOXICITY.name),
      ...(fallbackReason ? { cudaFallbackReason: fallbackReason } : {}),
    },
    ...(fallbackReason ? { fallbackReason } : {}),
  };
}
