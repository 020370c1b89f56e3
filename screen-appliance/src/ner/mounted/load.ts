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
import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type * as ort from "onnxruntime-node";
import { type OpenedSession, openSession, type ProviderPreference } from "../../ml/session.ts";
import { KNOWN_INPUTS, type KnownInput, type ModelIo, MountedPersonNameFinder } from "./finder.ts";
import { readLabels } from "./labels.ts";
import { HfTokenizer } from "./tokenizer.ts";
import { wordPieceFromVocab } from "./vocab-tokenizer.ts";

type Json = Record<string, unknown>;

/** What `/health` and the start-up log say about the mounted model. */
export interface MountedModelInfo {
  directory: string;
  /** The ONNX file in use. */
  file: string;
  /** `config.json`'s `_name_or_path`, else its first architecture, else the directory's name. */
  name: string;
  /** `tokenizer.json`, or `vocab.txt` when the directory has only a BERT vocabulary. */
  tokenizer: string;
  /** The tokenizer algorithm: WordPiece, BPE, Unigram. */
  tokenizerModel: string;
  labels: string[];
  /** The labels read as PERSON_NAME; every other entity type is ignored. */
  personLabels: string[];
  /** Tokens per model run, special tokens included; longer texts are windowed. */
  maxTokens: number;
}

export interface MountedModel extends OpenedSession {
  finder: MountedPersonNameFinder;
  info: MountedModelInfo;
}

/** Windows per ONNX run when the graph takes any batch size: bounds memory on long texts. */
const MAX_BATCH = 8;
/** Used when neither the config nor the tokenizer states a limit (BERT's). */
const DEFAULT_MAX_TOKENS = 512;
/** Model families whose position ids start after the padding id, so two positions are not usable. */
const OFFSET_POSITIONS = /roberta|camembert|longformer|bart|luke|markuplm/i;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function readJson(path: string): Promise<Json> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${path} must hold a JSON object`);
  }
  return parsed as Json;
}

async function optionalJson(path: string): Promise<Json | undefined> {
  return (await exists(path)) ? readJson(path) : undefined;
}

/** The files the directory must have; throws naming every one that is missing. */
async function locateFiles(directory: string) {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new Error(
      `SCREEN_NER_MODEL_DIR=${directory} is not a directory; mount the exported model there or unset the variable to use the built-in name model`,
    );
  }
  const first = async (names: string[]) => {
    for (const name of names) if (await exists(join(directory, name))) return name;
    return undefined;
  };
  const config = await first(["config.json"]);
  const tokenizer = await first(["tokenizer.json", "vocab.txt"]);
  const model = await first(["model.onnx", "onnx/model.onnx"]);
  const missing = [
    config ? undefined : "config.json (with id2label)",
    tokenizer ? undefined : "tokenizer.json (or a BERT vocab.txt)",
    model ? undefined : "model.onnx (or onnx/model.onnx)",
  ].filter((m) => m !== undefined);
  if (!config || !tokenizer || !model) {
    throw new Error(
      `SCREEN_NER_MODEL_DIR=${directory} is not a complete token-classification model: missing ${missing.join(", ")}. ` +
        "Export one with `optimum-cli export onnx --task token-classification --model <model> <dir>`.",
    );
  }
  return { config, tokenizer, model };
}

/** The tokenizer files: `tokenizer.json` as it is, or one built from a BERT `vocab.txt`. */
async function readTokenizer(directory: string, file: string) {
  const tokenizerConfig = await optionalJson(join(directory, "tokenizer_config.json"));
  const specialTokensMap = await optionalJson(join(directory, "special_tokens_map.json"));
  const path = join(directory, file);
  const json =
    file === "vocab.txt"
      ? wordPieceFromVocab(await readFile(path, "utf8"), tokenizerConfig ?? {}, path)
      : await readJson(path);
  return { path, json, tokenizerConfig, specialTokensMap };
}

/** The smallest sequence limit that the config, the tokenizer files or the graph state. */
function maxTokensOf(config: Json, tokenizerConfig: Json | undefined, tokenizerJson: Json): number {
  const limits: number[] = [];
  const positions = config.max_position_embeddings;
  if (typeof positions === "number" && positions > 0) {
    const modelType = String(config.model_type ?? "");
    limits.push(OFFSET_POSITIONS.test(modelType) ? positions - 2 : positions);
  }
  // `model_max_length` is a huge sentinel (1e30) when the tokenizer has no limit.
  const declared = tokenizerConfig?.model_max_length;
  if (typeof declared === "number" && declared > 0 && declared < 1_000_000) limits.push(declared);
  const truncation = (tokenizerJson.truncation as Json | null | undefined)?.max_length;
  if (typeof truncation === "number" && truncation > 0) limits.push(truncation);
  return limits.length > 0 ? Math.min(...limits) : DEFAULT_MAX_TOKENS;
}

/** Reads how to feed the graph from its declared inputs and outputs; throws on what it cannot feed. */
export function modelIoOf(
  session: ort.InferenceSession,
  labelCount: number,
  maxTokens: number,
  source: string,
): ModelIo {
  const inputs = new Map<KnownInput, "int64" | "int32">();
  let idShape: readonly (number | string)[] = [];
  for (const meta of session.inputMetadata) {
    if (!(KNOWN_INPUTS as readonly string[]).includes(meta.name)) {
      throw new Error(
        `${source} has an input '${meta.name}' this appliance cannot fill; a token-classification export takes ${KNOWN_INPUTS.join(", ")}`,
      );
    }
    const type = meta.isTensor ? meta.type : undefined;
    if (type !== "int64" && type !== "int32") {
      throw new Error(
        `${source}: input '${meta.name}' is ${type ?? "not a tensor"}, expected int64 or int32`,
      );
    }
    inputs.set(meta.name as KnownInput, type);
    if (meta.name === "input_ids" && meta.isTensor) idShape = meta.shape;
  }
  if (!inputs.has("input_ids")) {
    throw new Error(`${source} has no 'input_ids' input (inputs: ${session.inputNames.join(", ")})`);
  }
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
  const [batchDim, lengthDim] = idShape;
  if (typeof batchDim === "number" && batchDim !== 1) {
    throw new Error(
      `${source} has a fixed batch of ${batchDim}; export it with a dynamic batch axis or a batch of 1`,
    );
  }
  const fixedLength = typeof lengthDim === "number" && lengthDim > 0 ? lengthDim : undefined;
  return {
    inputs,
    output,
    maxLength: fixedLength ? Math.min(fixedLength, maxTokens) : maxTokens,
    ...(fixedLength ? { fixedLength } : {}),
    batch: typeof batchDim === "number" ? 1 : MAX_BATCH,
  };
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
  const files = await locateFiles(directory);
  const configPath = join(directory, files.config);
  const config = await readJson(configPath);
  const labels = readLabels(config.id2label, configPath);
  const { path, json, tokenizerConfig, specialTokensMap } = await readTokenizer(directory, files.tokenizer);
  let tokenizer: HfTokenizer;
  try {
    tokenizer = new HfTokenizer(json, {
      ...(tokenizerConfig ? { tokenizerConfig } : {}),
      ...(specialTokensMap ? { specialTokensMap } : {}),
      config,
    });
  } catch (err) {
    throw new Error(`${path} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }

  const file = join(directory, files.model);
  let opened: OpenedSession;
  try {
    opened = await openSession(file, preference, { cpuThreads: 0 });
  } catch (err) {
    throw new Error(
      `${file} cannot be opened by ONNX Runtime: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const io = modelIoOf(opened.session, labels.length, maxTokensOf(config, tokenizerConfig, json), file);
  const frame = tokenizer.prefix.length + tokenizer.suffix.length;
  if (io.maxLength <= frame) {
    throw new Error(
      `${directory}: a sequence of ${io.maxLength} tokens leaves no room inside the ${frame} special tokens`,
    );
  }
  const architectures = Array.isArray(config.architectures) ? config.architectures : [];
  const named =
    typeof config._name_or_path === "string" && config._name_or_path !== ""
      ? config._name_or_path
      : undefined;
  return {
    ...opened,
    finder: new MountedPersonNameFinder(opened.session, tokenizer, labels, io),
    info: {
      directory,
      file,
      name: named ?? String(architectures[0] ?? directory.split(/[\\/]/).at(-1)),
      tokenizer: files.tokenizer,
      tokenizerModel: tokenizer.kind,
      labels: labels.map((l) => l.name),
      personLabels: labels.filter((l) => l.person).map((l) => l.name),
      maxTokens: io.maxLength,
    },
  };
}
