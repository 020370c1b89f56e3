/**
 * PERSON_NAME from a customer-mounted Hugging Face token-classification model: tokenize with
 * offsets, classify the tokens in sliding windows of the model's maximum length (batched, framed by
 * the tokenizer's special tokens, padded to the longest window), softmax the logits, and aggregate
 * words into names (`aggregate.ts`). Replaces the built-in model and nothing else.
 */
import * as ort from "onnxruntime-node";
import type { PersonNameFinder } from "../../detect/detect.ts";
import type { Finding } from "../../detect/types.ts";
import { namesFromTokens } from "./aggregate.ts";
import type { Label } from "./labels.ts";
import type { HfTokenizer } from "./tokenizer.ts";
import { planWindows, type Window } from "./windows.ts";

/** The inputs a token-classification export may declare; all are integer tensors [batch, tokens]. */
export const KNOWN_INPUTS = ["input_ids", "attention_mask", "token_type_ids", "position_ids"] as const;
export type KnownInput = (typeof KNOWN_INPUTS)[number];

/** How to feed the ONNX graph, read from its declared inputs and outputs (`load.ts`). */
export interface ModelIo {
  /** Declared inputs (`input_ids` always among them) with their element type: int64, some int32. */
  inputs: ReadonlyMap<KnownInput, "int64" | "int32">;
  /** The output holding logits [batch, sequence, labels]. */
  output: string;
  /** Most tokens per sequence, special tokens included. */
  maxLength: number;
  /** Set when the graph declares a fixed sequence length: every window is padded to it. */
  fixedLength?: number;
  /** Windows per run (1 when the graph declares a batch of 1). */
  batch: number;
}

export class MountedPersonNameFinder implements PersonNameFinder {
  constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: HfTokenizer,
    private readonly labels: readonly Label[],
    private readonly io: ModelIo,
  ) {}

  /** Tokens per window, the special tokens around it left out. */
  get windowTokens(): number {
    return this.io.maxLength - this.tokenizer.prefix.length - this.tokenizer.suffix.length;
  }

  async findPersonNames(text: string): Promise<Finding[]> {
    const { ids, spans, subword } = this.tokenizer.encode(text);
    if (ids.length === 0) return [];
    const probs = new Float32Array(ids.length * this.labels.length);
    const windows = planWindows(ids.length, this.windowTokens);
    for (let b = 0; b < windows.length; b += this.io.batch) {
      await this.classify(ids, windows.slice(b, b + this.io.batch), probs);
    }
    return namesFromTokens(text, spans, probs, this.labels, subword);
  }

  /** Runs one batch of windows and writes the softmax of each kept token's logits into `probs`. */
  private async classify(ids: readonly number[], windows: Window[], probs: Float32Array): Promise<void> {
    const { prefix, suffix, padId } = this.tokenizer;
    const longest = Math.max(...windows.map((w) => w.to - w.from)) + prefix.length + suffix.length;
    const length = this.io.fixedLength ?? longest;
    const count = windows.length * length;
    const inputIds = new Array<number>(count).fill(padId);
    const mask = new Array<number>(count).fill(0);
    windows.forEach((w, row) => {
      const sequence = [...prefix, ...ids.slice(w.from, w.to), ...suffix];
      sequence.forEach((id, i) => {
        inputIds[row * length + i] = id;
        mask[row * length + i] = 1;
      });
    });
    const columns = Array.from({ length: count }, (_, i) => i % length);
    const values: Record<KnownInput, number[]> = {
      input_ids: inputIds,
      attention_mask: mask,
      token_type_ids: new Array<number>(count).fill(0),
      position_ids: columns,
    };
    const feeds: Record<string, ort.Tensor> = {};
    for (const [name, type] of this.io.inputs) {
      const data = values[name];
      feeds[name] =
        type === "int64"
          ? new ort.Tensor("int64", BigInt64Array.from(data, BigInt), [windows.length, length])
          : new ort.Tensor("int32", Int32Array.from(data), [windows.length, length]);
    }

    const logits = (await this.session.run(feeds))[this.io.output];
    const labels = this.labels.length;
    if (!logits || !(logits.data instanceof Float32Array)) {
      throw new Error(`output '${this.io.output}' is not a float32 tensor`);
    }
    const [rows, tokens, scores] = logits.dims;
    if (rows !== windows.length || tokens !== length || scores !== labels) {
      throw new Error(
        `output '${this.io.output}' has shape [${logits.dims.join(", ")}], expected [${windows.length}, ${length}, ${labels}] (batch, tokens, labels in config.json id2label)`,
      );
    }
    const data = logits.data;
    windows.forEach((w, row) => {
      for (let t = w.keepFrom; t < w.keepTo; t++) {
        const at = (row * length + prefix.length + t - w.from) * labels;
        softmaxInto(data, at, labels, probs, t * labels);
      }
    });
  }
}

function softmaxInto(logits: Float32Array, at: number, n: number, out: Float32Array, to: number): void {
  let max = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < n; c++) max = Math.max(max, logits[at + c] ?? 0);
  let sum = 0;
  for (let c = 0; c < n; c++) sum += Math.exp((logits[at + c] ?? 0) - max);
  for (let c = 0; c < n; c++) out[to + c] = Math.exp((logits[at + c] ?? 0) - max) / sum;
}
