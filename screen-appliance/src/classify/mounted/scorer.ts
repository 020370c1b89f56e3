/**
 * Bias or toxicity scores from a customer-mounted Hugging Face text classifier:
 *
 * - Tokens: the text's tokens without special tokens; a text with no tokens scores 0.
 * - Windows: a text longer than the model's length (less its special tokens) is cut into windows
 *   of that length which overlap by 2·min(64, ⌊window/4⌋) tokens (`planWindows`, as the mounted
 *   name model does), so any passage up to that many tokens is seen whole by some window. Each window is
 *   framed by the special tokens and scored alone; windows of several texts share a run (`batch`).
 * - Per window: single-label models get a softmax over all labels and a type's score is the sum of
 *   its labels' probabilities (negative and ignored classes keep their share); multi-label models
 *   get a sigmoid per label and a type's score is its most probable label.
 * - Per text: a type's score is its maximum over the windows, so a passage counts as much inside a
 *   long text as on its own.
 * - Types that no label names are answered by the built-in model (`fallback`).
 */
import type * as ort from "onnxruntime-node";
import { type GraphInputs, sequenceFeeds, softmaxInto } from "../../ml/hf-graph.ts";
import type { HfTokenizer } from "../../ner/mounted/tokenizer.ts";
import { planWindows } from "../../ner/mounted/windows.ts";
import type { BatchTextScorer } from "../text-scorer.ts";
import type { ClassLabel } from "./labels.ts";

/** How to run the graph (`load.ts`). */
export interface ClassifierIo extends GraphInputs {
  /** The output holding logits [batch, labels]. */
  output: string;
  /** Most tokens per sequence, special tokens included. */
  maxLength: number;
  activation: "softmax" | "sigmoid";
}

export class MountedTextScorer<T extends string> implements BatchTextScorer<T> {
  /** The types the mounted labels name, in the family's order. */
  readonly covered: readonly T[];
  /** Label ids per covered type. */
  private readonly labelsOf: readonly number[][];

  constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: HfTokenizer,
    private readonly labels: readonly ClassLabel<T>[],
    private readonly io: ClassifierIo,
    readonly types: readonly T[],
    private readonly fallback: BatchTextScorer<T> | undefined,
  ) {
    this.covered = types.filter((t) => labels.some((l) => l.type === t));
    this.labelsOf = this.covered.map((t) => labels.flatMap((l, id) => (l.type === t ? [id] : [])));
    const missing = types.filter((t) => !this.covered.includes(t));
    if (missing.length > 0 && !fallback) {
      throw new Error(`no model scores ${missing.join(", ")}: the mounted labels name none of them`);
    }
  }

  /** Tokens per window, the special tokens around it left out. */
  get windowTokens(): number {
    return this.io.maxLength - this.tokenizer.prefix.length - this.tokenizer.suffix.length;
  }

  async score(text: string, requested: readonly T[]): Promise<Map<T, number>> {
    const scores = new Map<T, number>();
    const mounted = requested.filter((t) => this.covered.includes(t));
    if (mounted.length > 0) {
      const row = await this.mountedScores([text]);
      for (const t of mounted) scores.set(t, row[this.covered.indexOf(t)] ?? 0);
    }
    const rest = requested.filter((t) => !this.covered.includes(t));
    if (rest.length > 0 && this.fallback) {
      for (const [t, v] of await this.fallback.score(text, rest)) scores.set(t, v);
    }
    return scores;
  }

  async scoreBatch(texts: readonly string[]): Promise<Float32Array> {
    const mounted = await this.mountedScores(texts);
    const needsFallback = this.covered.length < this.types.length;
    const builtIn = needsFallback && this.fallback ? await this.fallback.scoreBatch(texts) : undefined;
    const out = new Float32Array(texts.length * this.types.length);
    texts.forEach((_, i) => {
      this.types.forEach((t, k) => {
        const c = this.covered.indexOf(t);
        const f = this.fallback?.types.indexOf(t) ?? -1;
        out[i * this.types.length + k] =
          c >= 0
            ? (mounted[i * this.covered.length + c] ?? 0)
            : (builtIn?.[i * (this.fallback?.types.length ?? 0) + f] ?? 0);
      });
    });
    return out;
  }

  /** The covered types' scores, row-major [texts, covered]. */
  private async mountedScores(texts: readonly string[]): Promise<Float32Array> {
    const { prefix, suffix } = this.tokenizer;
    const windows: { text: number; sequence: number[] }[] = [];
    texts.forEach((text, i) => {
      const ids = this.tokenizer.ids(text);
      for (const w of ids.length > 0 ? planWindows(ids.length, this.windowTokens) : []) {
        windows.push({ text: i, sequence: [...prefix, ...ids.slice(w.from, w.to), ...suffix] });
      }
    });
    const out = new Float32Array(texts.length * this.covered.length);
    for (let b = 0; b < windows.length; b += this.io.batch) {
      const batch = windows.slice(b, b + this.io.batch);
      const probs = await this.run(batch.map((w) => w.sequence));
      batch.forEach((w, row) => {
        this.labelsOf.forEach((ids, k) => {
          let score = 0;
          for (const id of ids) {
            const p = probs[row * this.labels.length + id] ?? 0;
            score = this.io.activation === "softmax" ? score + p : Math.max(score, p);
          }
          const at = w.text * this.covered.length + k;
          out[at] = Math.max(out[at] ?? 0, score);
        });
      });
    }
    return out;
  }

  /** Label probabilities of a batch of framed sequences, row-major [sequences, labels]. */
  private async run(sequences: number[][]): Promise<Float32Array> {
    const { feeds } = sequenceFeeds(this.io, sequences, this.tokenizer.padId);
    const logits = (await this.session.run(feeds))[this.io.output];
    const labels = this.labels.length;
    if (!logits || !(logits.data instanceof Float32Array)) {
      throw new Error(`output '${this.io.output}' is not a float32 tensor`);
    }
    if (logits.dims.length !== 2 || logits.dims[0] !== sequences.length || logits.dims[1] !== labels) {
      throw new Error(
        `output '${this.io.output}' has shape [${logits.dims.join(", ")}], expected [${sequences.length}, ${labels}] (batch, labels in config.json id2label)`,
      );
    }
    const data = logits.data;
    const probs = new Float32Array(data.length);
    for (let row = 0; row < sequences.length; row++) {
      if (this.io.activation === "softmax") softmaxInto(data, row * labels, labels, probs, row * labels);
      else for (let c = 0; c < labels; c++) probs[row * labels + c] = sigmoid(data[row * labels + c] ?? 0);
    }
    return probs;
  }
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}
