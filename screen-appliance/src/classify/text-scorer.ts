/**
 * Bias and toxicity scores from a multi-label ONNX classifier trained by
 * `npm run train:classifiers`: one sigmoid output per label, in the order of the model spec.
 */
import type * as ort from "onnxruntime-node";
import type { ModelSpec } from "../ml/model-spec.ts";
import { runBagModel } from "../ml/session.ts";
import type { TextScorer } from "../screen/service.ts";
import { textRows } from "./features.ts";

/** A scorer that also scores many texts at once (the evaluation, the mounted model's fallback). */
export interface BatchTextScorer<T extends string> extends TextScorer<T> {
  /** The types it scores, in the column order of `scoreBatch`. */
  readonly types: readonly T[];
  /** Every type's score for each text, row-major [texts, types]. */
  scoreBatch(texts: readonly string[]): Promise<Float32Array>;
}

export class OnnxTextScorer<T extends string> implements BatchTextScorer<T> {
  constructor(
    private readonly session: ort.InferenceSession,
    readonly spec: ModelSpec,
  ) {}

  get types(): readonly T[] {
    return this.spec.labels as T[];
  }

  /** All labels' scores for a batch of texts, row-major [texts, labels]. */
  async scoreBatch(texts: readonly string[]): Promise<Float32Array> {
    const bags = texts.map((t) => textRows(t, this.spec.buckets));
    const width = Math.max(1, ...bags.map((b) => b.rows.length));
    const rows = new Int32Array(texts.length * width);
    bags.forEach((b, i) => {
      rows.set(b.rows, i * width);
    });
    const scale = Float32Array.from(bags, (b) => b.scale);
    return runBagModel(this.session, rows, scale, texts.length, width);
  }

  async score(text: string, labels: readonly T[]): Promise<Map<T, number>> {
    const probs = await this.scoreBatch([text]);
    const scores = new Map<T, number>();
    for (const label of labels) {
      const index = this.spec.labels.indexOf(label);
      if (index >= 0) scores.set(label, probs[index] ?? 0);
    }
    return scores;
  }
}
