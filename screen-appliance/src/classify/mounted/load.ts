/**
 * Opens a customer-mounted Hugging Face text-classification model directory
 * (`SCREEN_TOXICITY_MODEL_DIR`, `SCREEN_BIAS_MODEL_DIR`) as the family's scorer. The directory is
 * what `optimum-cli export onnx --task text-classification` writes: `config.json` (`id2label`,
 * `problem_type`, `max_position_embeddings`), `tokenizer.json` (or a BERT `vocab.txt`) and
 * `model.onnx` (or `onnx/model.onnx`) with integer inputs `input_ids` (+ `attention_mask`,
 * `token_type_ids`) and an output `logits` [batch, labels]. A directory that is incomplete, names
 * none of the family's types or has a graph the appliance cannot feed is refused at start, because
 * a half-loaded classifier would answer LOW to everything.
 */
import { join, resolve } from "node:path";
import type * as ort from "onnxruntime-node";
import {
  type ExportKind,
  type Json,
  labelNames,
  locateExport,
  type MountedExportInfo,
  modelName,
  openExport,
  readJson,
} from "../../ml/hf-export.ts";
import { graphInputs } from "../../ml/hf-graph.ts";
import type { OpenedSession, ProviderPreference } from "../../ml/session.ts";
import { loadTokenizer } from "../../ner/mounted/tokenizer.ts";
import type { BatchTextScorer } from "../text-scorer.ts";
import { type ClassifierFamily, type ClassLabel, mapLabels } from "./labels.ts";
import { type ClassifierIo, MountedTextScorer } from "./scorer.ts";

const TASK = "text-classification";

/** What `/health` and the start-up log say about a mounted classifier. */
export interface MountedClassifierInfo extends MountedExportInfo {
  /** softmax for single-label models, sigmoid for multi-label ones (`problem_type`). */
  activation: "softmax" | "sigmoid";
  /** Type -> the labels read as it. */
  types: Record<string, string[]>;
  /** Labels read as the absence of every category. */
  negativeLabels: string[];
  /** Labels that name none of the family's types; their scores are not used. */
  ignoredLabels: string[];
  /** The family's types no label names, answered by the built-in model. */
  builtInTypes: string[];
  /** Tokens per model run, special tokens included; longer texts are cut into windows. */
  maxTokens: number;
}

export interface MountedClassifier<T extends string> extends OpenedSession {
  scorer: MountedTextScorer<T>;
  info: MountedClassifierInfo;
}

/**
 * The Hugging Face text-classification pipeline's rule: sigmoid for `multi_label_classification`
 * or a single label, softmax for `single_label_classification` or several labels; regression
 * outputs are not probabilities and are refused.
 */
export function activationOf(config: Json, labelCount: number, source: string): "softmax" | "sigmoid" {
  const problem = config.problem_type;
  if (problem === "regression") {
    throw new Error(
      `${source}: problem_type "regression" gives scores, not class probabilities; mount a single_label_classification or multi_label_classification model`,
    );
  }
  if (problem === "multi_label_classification" || labelCount === 1) return "sigmoid";
  return "softmax";
}

/** Reads how to feed the graph; throws on an input it cannot fill or an output that is not logits [batch, labels]. */
export function classifierIoOf(
  session: ort.InferenceSession,
  labelCount: number,
  maxTokens: number,
  source: string,
): Omit<ClassifierIo, "activation"> {
  const graph = graphInputs(session, source, TASK);
  const output = "logits";
  const outMeta = session.outputMetadata.find((m) => m.name === output);
  if (!outMeta) {
    throw new Error(
      `${source} has no output '${output}' (outputs: ${session.outputNames.join(", ")}); a ${TASK} export names its output logits`,
    );
  }
  if (outMeta.isTensor && outMeta.shape.length > 0) {
    const last = outMeta.shape.at(-1);
    if (outMeta.shape.length !== 2 || (typeof last === "number" && last !== labelCount)) {
      throw new Error(
        `${source}: output '${output}' has shape [${outMeta.shape.join(", ")}], expected [batch, ${labelCount}] for the ${labelCount} labels of config.json id2label`,
      );
    }
  }
  const maxLength = graph.fixedLength ? Math.min(graph.fixedLength, maxTokens) : maxTokens;
  return { ...graph, output, maxLength };
}

/**
 * Loads the directory as the scorer of `family`. Types its labels do not name go to the built-in
 * model, which `builtIn` opens only then.
 *
 * @example
 * const { scorer, info } = await loadMountedClassifier("/models/toxicity", TOXICITY, "auto", openBuiltIn);
 * await scorer.score("some text", ["HATE"]);
 */
export async function loadMountedClassifier<T extends string>(
  dir: string,
  family: ClassifierFamily<T>,
  preference: ProviderPreference,
  builtIn: () => Promise<BatchTextScorer<T>>,
): Promise<MountedClassifier<T>> {
  const directory = resolve(dir);
  const kind: ExportKind = {
    variable: family.variable,
    task: TASK,
    builtIn: `the built-in ${family.name} model`,
  };
  const files = await locateExport(directory, kind);
  const configPath = join(directory, files.config);
  const config = await readJson(configPath);
  const labels = mapLabels(family, labelNames(config.id2label, configPath, TASK), configPath);
  const activation = activationOf(config, labels.length, configPath);
  const { tokenizer, maxTokens } = await loadTokenizer(directory, files.tokenizer, config);
  const file = join(directory, files.model);
  const opened = await openExport(file, preference);
  const io = { ...classifierIoOf(opened.session, labels.length, maxTokens, file), activation };
  const frame = tokenizer.prefix.length + tokenizer.suffix.length;
  if (io.maxLength <= frame) {
    throw new Error(
      `${directory}: a sequence of ${io.maxLength} tokens leaves no room inside the ${frame} special tokens`,
    );
  }
  const covered = family.types.filter((t) => labels.some((l) => l.type === t));
  const fallback = covered.length < family.types.length ? await builtIn() : undefined;
  const scorer = new MountedTextScorer(opened.session, tokenizer, labels, io, family.types, fallback);
  return {
    ...opened,
    scorer,
    info: {
      directory,
      file,
      name: modelName(config, directory),
      tokenizer: files.tokenizer,
      tokenizerModel: tokenizer.kind,
      labels: labels.map((l) => l.name),
      activation,
      types: Object.fromEntries(scorer.covered.map((t) => [t, namesOf(labels, (l) => l.type === t)])),
      negativeLabels: namesOf(labels, (l) => l.negative),
      ignoredLabels: namesOf(labels, (l) => !l.type && !l.negative),
      builtInTypes: family.types.filter((t) => !scorer.covered.includes(t)),
      maxTokens: io.maxLength,
    },
  };
}

/**
 * One line for the start-up log and the evaluation: where the model is, how it reads its labels,
 * the labels it ignores and the types left to the built-in model.
 */
export function describeMounted(info: MountedClassifierInfo): string {
  const types = Object.entries(info.types).map(([type, labels]) => `${type} <- ${labels.join(" + ")}`);
  const parts = [
    `${info.tokenizerModel} tokenizer, ${info.maxTokens} tokens per window, ${info.activation}`,
    types.join(", "),
    ...(info.negativeLabels.length ? [`negative: ${info.negativeLabels.join(", ")}`] : []),
    ...(info.ignoredLabels.length ? [`ignored labels: ${info.ignoredLabels.join(", ")}`] : []),
    ...(info.builtInTypes.length ? [`${info.builtInTypes.join(", ")} from the built-in model`] : []),
  ];
  return `mounted ${info.name} from ${info.directory} (${parts.join("; ")})`;
}

function namesOf<T extends string>(labels: readonly ClassLabel<T>[], keep: (l: ClassLabel<T>) => boolean) {
  return labels.filter(keep).map((l) => l.name);
}
