/**
 * Opens a customer-mounted Hugging Face token-classification model directory (`SCREEN_NER_MODEL_DIR`)
 * as the PERSON_NAME detector. The directory is what `optimum-cli export onnx --task
 * token-classification` writes: `config.json` (with `id2label`), `tokenizer.json` (or a BERT
 * `vocab.txt`), `model.onnx` (or `onnx/model.onnx`), optionally `tokenizer_config.json` and
 * `special_tokens_map.json`. Everything is read from local files: the tokenizer is pure JavaScript
 * fed from memory and ONNX Runtime opens a path, so nothing here can reach a network or a hub cache.
 * An incomplete or inconsistent directory is refused at start with one message that lists every
 * problem, because a half-loaded name model would silently redact nothing.
 */
import { join, resolve } from "node:path";
import type * as ort from "onnxruntime-node";
import {
  type ExportKind,
  locateExport,
  type MountedExportInfo,
  modelName,
  openExport,
  readJson,
} from "../../ml/hf-export.ts";
import { graphInputs } from "../../ml/hf-graph.ts";
import type { OpenedSession, ProviderPreference } from "../../ml/session.ts";
import { type ModelIo, MountedPersonNameFinder } from "./finder.ts";
import { readLabels } from "./labels.ts";
import { loadTokenizer } from "./tokenizer.ts";

const KIND: ExportKind = {
  variable: "SCREEN_NER_MODEL_DIR",
  task: "token-classification",
  builtIn: "the built-in name model",
};

/** What `/health` and the start-up log say about the mounted model. */
export interface MountedModelInfo extends MountedExportInfo {
  /** The labels read as PERSON_NAME; every other entity type is ignored. */
  personLabels: string[];
  /** Tokens per model run, special tokens included; longer texts are windowed. */
  maxTokens: number;
}

export interface MountedModel extends OpenedSession {
  finder: MountedPersonNameFinder;
  info: MountedModelInfo;
}

/** Reads how to feed the graph from its declared inputs and outputs; throws on what it cannot feed. */
export function modelIoOf(
  session: ort.InferenceSession,
  labelCount: number,
  maxTokens: number,
  source: string,
): ModelIo {
  const graph = graphInputs(session, source, KIND.task);
  const output = session.outputNames.includes("logits") ? "logits" : session.outputNames[0];
  const outMeta = session.outputMetadata.find((m) => m.name === output);
  if (!output || !outMeta) throw new Error(`${source} declares no output`);
  if (outMeta.isTensor && outMeta.shape.length > 0) {
    const last = outMeta.shape.at(-1);
    if (outMeta.shape.length !== 3 || (typeof last === "number" && last !== labelCount)) {
      throw new Error(
        `${source}: output '${output}' has shape [${outMeta.shape.join(", ")}], expected [batch, tokens, ${labelCount}] for the ${labelCount} labels of config.json id2label`,
      );
    }
  }
  const maxLength = graph.fixedLength ? Math.min(graph.fixedLength, maxTokens) : maxTokens;
  return { ...graph, output, maxLength };
}

/**
 * Loads the directory as a PERSON_NAME finder on the preferred execution provider.
 *
 * @example
 * const { finder, info } = await loadMountedNer("/models/ner", "auto");
 * await finder.findPersonNames("Call Ana Pérez");
 */
export async function loadMountedNer(dir: string, preference: ProviderPreference): Promise<MountedModel> {
  const directory = resolve(dir);
  const files = await locateExport(directory, KIND);
  const configPath = join(directory, files.config);
  const config = await readJson(configPath);
  const labels = readLabels(config.id2label, configPath);
  const { tokenizer, maxTokens } = await loadTokenizer(directory, files.tokenizer, config);
  const file = join(directory, files.model);
  const opened = await openExport(file, preference);
  const io = modelIoOf(opened.session, labels.length, maxTokens, file);
  const frame = tokenizer.prefix.length + tokenizer.suffix.length;
  if (io.maxLength <= frame) {
    throw new Error(
      `${directory}: a sequence of ${io.maxLength} tokens leaves no room inside the ${frame} special tokens`,
    );
  }
  return {
    ...opened,
    finder: new MountedPersonNameFinder(opened.session, tokenizer, labels, io),
    info: {
      directory,
      file,
      name: modelName(config, directory),
      tokenizer: files.tokenizer,
      tokenizerModel: tokenizer.kind,
      labels: labels.map((l) => l.name),
      personLabels: labels.filter((l) => l.person).map((l) => l.name),
      maxTokens: io.maxLength,
    },
  };
}
