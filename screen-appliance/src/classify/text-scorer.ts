/**
 * Bias and toxicity scores from a multi-label ONNX classifier trained by
 * `npm run train:classifiers`: one sigmoid output per label, in the order of the model spec, each
 * mapped through the label's calibration in the spec (calibration.ts) so a score is a probability
 * and the levels are probability bands.
 */
import type * as ort from "onnxruntime-node";
import type { ModelSpec } from "../ml/model-spec.ts";
import { runBagModel } from "../ml/session.ts";
import type { WordVocabulary } from "../ml/vocabulary.ts";
import type { TextScorer } from "../screen/service.ts";
import { type CalibrationCurve, calibrate } from "./calibration.ts";
import { textRows } from "./features.ts";

/** A scorer that also scores many texts at once (the evaluation, the mounted model's fallback). */
export interface BatchTextScorer<T extends string> extends TextScorer<T> {
  /** The types it scores, in the column order of `scoreBatch`. */
  readonly types: readonly T[];
  /** Every type's score for each text, row-major [texts, types]. */
  scoreBatch(texts: readonly string[]): Promise<Float32Array>;
}

export class OnnxTextScorer<T extends string> implements BatchTextScorer<T> {
  /** Per output column, its calibration, or none (raw scores: a model trained before calibration). */
  private readonly curves: (CalibrationCurve | undefined)[];

  constructor(
    private readonly session: ort.InferenceSession,
    readonly spec: ModelSpec,
    private readonly vocabulary?: WordVocabulary,
  ) {
    if (spec.words && !vocabulary)
      throw new Error(`${spec.name}: trained with word vectors, no vocabulary given`);
    this.curves = spec.labels.map((label) => spec.calibration?.[label]);
  }

  get types(): readonly T[] {
    return this.spec.labels as T[];
  }

  /** All labels' scores for a batch of texts, row-major [texts, labels]. */
  async scoreBatch(texts: readonly string[]): Promise<Float32Array> {
    const bags = texts.map((t) => textRows(t, this.spec.buckets, this.vocabulary));
    const width = Math.max(1, ...bags.map((b) => b.rows.length));
    const rows = new Int32Array(texts.length * width);
    bags.forEach((b, i) => {
      rows.set(b.rows, i * width);
    });
    const scale = Float32Array.from(bags, (b) => b.scale);
    const raw = await runBagModel(this.session, rows, scale, texts.length, width);
    const columns = this.curves.length;
    return raw.map((p, i) => {
      const curve = this.curves[i % columns];
      return curve ? calibrate(curve, p) : p;
    });
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
