/**
 * The parts of a customer-mounted Hugging Face ONNX export directory that do not depend on the
 * model's task: finding its files (laid out as `optimum-cli export onnx` writes them), reading its
 * JSON, the longest sequence the model takes, its name, and opening the graph. The task readers
 * (`ner/mounted/load.ts`, `classify/mounted/load.ts`) add the labels and the output checks.
 * Everything is read from local files, so nothing here can reach a network or a hub cache.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { type OpenedSession, openSession, type ProviderPreference, workerThreadShare } from "./session.ts";

export type Json = Record<string, unknown>;

/** Used when neither the config nor the tokenizer states a limit (BERT's). */
const DEFAULT_MAX_TOKENS = 512;
/** Model families whose position ids start after the padding id, so two positions are not usable. */
const OFFSET_POSITIONS = /roberta|camembert|longformer|bart|luke|markuplm/i;

/** The environment variable and task a directory is mounted for; its messages name both. */
export interface ExportKind {
  /** `SCREEN_NER_MODEL_DIR`, `SCREEN_TOXICITY_MODEL_DIR`... */
  variable: string;
  /** The `optimum-cli export onnx --task` value: `token-classification`, `text-classification`. */
  task: string;
  /** What the appliance uses when the variable is unset ("the built-in name model"). */
  builtIn: string;
}

/** The directory's files, relative to it. */
/** What `/health` and the start-up log say of every mounted export, whatever its task. */
export interface MountedExportInfo {
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
}

export interface ExportFiles {
  config: string;
  /** `tokenizer.json`, or `vocab.txt` when the directory has only a BERT vocabulary. */
  tokenizer: string;
  model: string;
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

export async function readJson(path: string): Promise<Json> {
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

export async function optionalJson(path: string): Promise<Json | undefined> {
  return (await exists(path)) ? readJson(path) : undefined;
}

/** The files the directory must have; throws naming every one that is missing. */
export async function locateExport(directory: string, kind: ExportKind): Promise<ExportFiles> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new Error(
      `${kind.variable}=${directory} is not a directory; mount the exported model there or unset the variable to use ${kind.builtIn}`,
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
      `${kind.variable}=${directory} is not a complete ${kind.task} model: missing ${missing.join(", ")}. ` +
        `Export one with \`optimum-cli export onnx --task ${kind.task} --model <model> <dir>\`.`,
    );
  }
  return { config, tokenizer, model };
}

/** The smallest sequence limit that the config or the tokenizer files state, special tokens included. */
export function maxTokensOf(config: Json, tokenizerConfig: Json | undefined, tokenizerJson: Json): number {
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

/**
 * `config.json`'s `id2label` (an object keyed by the id as a string) as label names indexed by id.
 * Throws when it is missing or its ids are not 0..n-1.
 */
export function labelNames(id2label: unknown, source: string, task: string): string[] {
  if (typeof id2label !== "object" || id2label === null || Array.isArray(id2label)) {
    throw new Error(`${source} has no "id2label" object; ${task} exports write one`);
  }
  const entries = Object.entries(id2label as Record<string, unknown>);
  const names: string[] = [];
  for (const [key, value] of entries) {
    const id = Number(key);
    const valid = Number.isInteger(id) && id >= 0 && id < entries.length && names[id] === undefined;
    if (!valid || typeof value !== "string") {
      throw new Error(`${source}: id2label must map the ids 0..${entries.length - 1} to label names`);
    }
    names[id] = value;
  }
  return names;
}

/** `config.json`'s `_name_or_path`, else its first architecture, else the directory's name. */
export function modelName(config: Json, directory: string): string {
  const named = config._name_or_path;
  if (typeof named === "string" && named !== "") return named;
  const architectures = Array.isArray(config.architectures) ? config.architectures : [];
  return String(architectures[0] ?? directory.split(/[\\/]/).at(-1));
}

/**
 * Opens the graph on the preferred provider. On CPU a transformer gains from several threads per
 * run: every core when the process serves alone, its share of them in a worker process.
 */
export async function openExport(file: string, preference: ProviderPreference): Promise<OpenedSession> {
  try {
    return await openSession(file, preference, { cpuThreads: workerThreadShare() ?? 0 });
  } catch (err) {
    throw new Error(
      `${file} cannot be opened by ONNX Runtime: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
