/**
 * PERSON_NAME from a customer-mounted Hugging Face token-classification model: tokenize with
 * offsets, classify the tokens in sliding windows of the model's maximum length (batched, framed by
 * the tokenizer's special tokens, padded to the longest window), softmax the logits, and aggregate
 * words into names (`aggregate.ts`). Replaces the built-in model and nothing else.
 */
import type * as ort from "onnxruntime-node";
import type { PersonNameFinder } from "../../detect/detect.ts";
import type { Finding } from "../../detect/types.ts";
import { type GraphInputs, sequenceFeeds, softmaxInto } from "../../ml/hf-graph.ts";
import { namesFromTokens } from "./aggregate.ts";
import type { Label } from "./labels.ts";
import type { HfTokenizer } from "./tokenizer.ts";
import { planWindows, type Window } from "./windows.ts";

/** How to feed the ONNX graph, read from its declared inputs and outputs (`load.ts`). */
export interface ModelIo extends GraphInputs {
  /** The output holding logits [batch, sequence, labels]. */
  output: string;
  /** Most tokens per sequence, special tokens included. */
  maxLength: number;
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
    const sequences = windows.map((w) => [...prefix, ...ids.slice(w.from, w.to), ...suffix]);
    const { feeds, length } = sequenceFeeds(this.io, sequences, padId);

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
