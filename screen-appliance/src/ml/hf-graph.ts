/**
 * Feeding the graph of a mounted Hugging Face export: which integer inputs it declares (read once
 * at start, anything else refused), and one batch of token sequences as ONNX feeds, padded to the
 * longest sequence (or to the graph's fixed length) with the attention mask marking real tokens.
 * Shared by the mounted name model and the mounted bias and toxicity classifiers.
 */
import * as ort from "onnxruntime-node";

/** The inputs a Hugging Face export may declare; all are integer tensors [batch, tokens]. */
export const KNOWN_INPUTS = ["input_ids", "attention_mask", "token_type_ids", "position_ids"] as const;
export type KnownInput = (typeof KNOWN_INPUTS)[number];

/** Sequences per run when the graph takes any batch size: bounds memory on long texts. */
const MAX_BATCH = 8;

export interface GraphInputs {
  /** Declared inputs (`input_ids` always among them) with their element type: int64, some int32. */
  inputs: ReadonlyMap<KnownInput, "int64" | "int32">;
  /** Set when the graph declares a fixed sequence length: every sequence is padded to it. */
  fixedLength?: number;
  /** Sequences per run (1 when the graph declares a batch of 1). */
  batch: number;
}

/**
 * Reads the graph's declared inputs; throws on one it cannot fill, a non-integer one, a missing
 * `input_ids` or a fixed batch other than 1. `task` names the export in the messages.
 */
export function graphInputs(session: ort.InferenceSession, source: string, task: string): GraphInputs {
  const inputs = new Map<KnownInput, "int64" | "int32">();
  let idShape: readonly (number | string)[] = [];
  for (const meta of session.inputMetadata) {
    if (!(KNOWN_INPUTS as readonly string[]).includes(meta.name)) {
      throw new Error(
        `${source} has an input '${meta.name}' this appliance cannot fill; a ${task} export takes ${KNOWN_INPUTS.join(", ")}`,
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
  const [batchDim, lengthDim] = idShape;
  if (typeof batchDim === "number" && batchDim !== 1) {
    throw new Error(
      `${source} has a fixed batch of ${batchDim}; export it with a dynamic batch axis or a batch of 1`,
    );
  }
  const fixedLength = typeof lengthDim === "number" && lengthDim > 0 ? lengthDim : undefined;
  return {
    inputs,
    ...(fixedLength ? { fixedLength } : {}),
    batch: typeof batchDim === "number" ? 1 : MAX_BATCH,
  };
}

/**
 * The feeds for a batch of sequences (special tokens already in place), and the padded length
 * every row has. `token_type_ids` are all 0 (one segment), `position_ids` count from 0.
 */
export function sequenceFeeds(
  graph: GraphInputs,
  sequences: readonly (readonly number[])[],
  padId: number,
): { feeds: Record<string, ort.Tensor>; length: number } {
  const length = graph.fixedLength ?? Math.max(...sequences.map((s) => s.length));
  const count = sequences.length * length;
  const inputIds = new Array<number>(count).fill(padId);
  const mask = new Array<number>(count).fill(0);
  sequences.forEach((sequence, row) => {
    sequence.forEach((id, i) => {
      inputIds[row * length + i] = id;
      mask[row * length + i] = 1;
    });
  });
  const values: Record<KnownInput, () => number[]> = {
    input_ids: () => inputIds,
    attention_mask: () => mask,
    token_type_ids: () => new Array<number>(count).fill(0),
    position_ids: () => Array.from({ length: count }, (_, i) => i % length),
  };
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, type] of graph.inputs) {
    const data = values[name]();
    feeds[name] =
      type === "int64"
        ? new ort.Tensor("int64", BigInt64Array.from(data, BigInt), [sequences.length, length])
        : new ort.Tensor("int32", Int32Array.from(data), [sequences.length, length]);
  }
  return { feeds, length };
}

/** Softmax of `logits[at .. at+n)` written to `out[to .. to+n)`. */
export function softmaxInto(
  logits: Float32Array,
  at: number,
  n: number,
  out: Float32Array,
  to: number,
): void {
  let max = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < n; c++) max = Math.max(max, logits[at + c] ?? 0);
  let sum = 0;
  for (let c = 0; c < n; c++) sum += Math.exp((logits[at + c] ?? 0) - max);
  for (let c = 0; c < n; c++) out[to + c] = Math.exp((logits[at + c] ?? 0) - max) / sum;
}
