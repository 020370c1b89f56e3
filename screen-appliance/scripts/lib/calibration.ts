/**
 * Calibration and contrast arithmetic for the bias and toxicity evaluation.
 *
 * - Expected calibration error: scores cut into equal-width bins on [0, 1] (a score of exactly 1
 *   falls in the last bin); ECE = sum over bins of (bin size / n) * |mean score - positive rate|.
 *   Empty bins contribute nothing; an empty input gives NaN.
 * - Level rates: rows grouped by the level `levelOf` (src/screen/service.ts) reports for their score,
 *   each group's size and observed positive rate, so the levels can be read as probabilities.
 * - Contrast: pairs (harmful, benign twin); the share where the harmful one scores strictly higher
 *   (a tie counts as a failure) and the share of harmful ones at MEDIUM or above.
 * - Isotonic calibration (training): rows sorted by raw score are cut into runs of `minRun`, then
 *   pool-adjacent-violators merges runs until their positive rates strictly increase; each run
 *   gives a point (mean raw score, positive rate) of the map src/classify/calibration.ts applies;
 *   points less than MIN_X_GAP apart in raw score are merged, so the map has no near-vertical stretch.
 */
import { type Level, levelOf } from "../../src/screen/service.ts";

export function expectedCalibrationError(
  scores: readonly number[],
  labels: readonly number[],
  bins = 10,
): number {
  if (scores.length === 0) return Number.NaN;
  const count = new Array<number>(bins).fill(0);
  const scoreSum = new Array<number>(bins).fill(0);
  const positiveSum = new Array<number>(bins).fill(0);
  scores.forEach((s, i) => {
    const bin = Math.min(bins - 1, Math.max(0, Math.floor(s * bins)));
    count[bin] = (count[bin] ?? 0) + 1;
    scoreSum[bin] = (scoreSum[bin] ?? 0) + s;
    positiveSum[bin] = (positiveSum[bin] ?? 0) + (labels[i] ?? 0);
  });
  let ece = 0;
  count.forEach((n, b) => {
    if (n > 0) ece += (n / scores.length) * Math.abs((scoreSum[b] ?? 0) / n - (positiveSum[b] ?? 0) / n);
  });
  return ece;
}

export interface LevelRate {
  level: Level;
  rows: number;
  positives: number;
  /** NaN when no row landed at this level. */
  positiveRate: number;
}

export function levelRates(scores: readonly number[], labels: readonly number[]): LevelRate[] {
  return (["LOW", "MEDIUM", "HIGH"] as const).map((level) => {
    let rows = 0;
    let positives = 0;
    scores.forEach((s, i) => {
      if (levelOf(s) !== level) return;
      rows++;
      positives += labels[i] ?? 0;
    });
    return { level, rows, positives, positiveRate: rows ? positives / rows : Number.NaN };
  });
}

export interface ContrastResult {
  pairs: number;
  /** Share of pairs whose harmful sentence scores strictly above its benign twin. */
  harmfulHigher: number;
  /** Share of harmful sentences at MEDIUM or above. */
  harmfulFlagged: number;
  /** Share of benign twins at MEDIUM or above (what the model would wrongly report). */
  benignFlagged: number;
}

export function contrastResult(harmful: readonly number[], benign: readonly number[]): ContrastResult {
  const pairs = Math.min(harmful.length, benign.length);
  if (pairs === 0)
    return { pairs, harmfulHigher: Number.NaN, harmfulFlagged: Number.NaN, benignFlagged: Number.NaN };
  let higher = 0;
  let harmfulFlagged = 0;
  let benignFlagged = 0;
  for (let i = 0; i < pairs; i++) {
    const h = harmful[i] ?? 0;
    const b = benign[i] ?? 0;
    if (h > b) higher++;
    if (levelOf(h) !== "LOW") harmfulFlagged++;
    if (levelOf(b) !== "LOW") benignFlagged++;
  }
  return {
    pairs,
    harmfulHigher: higher / pairs,
    harmfulFlagged: harmfulFlagged / pairs,
    benignFlagged: benignFlagged / pairs,
  };
}

/** The least distance in raw score between two points of an isotonic map. */
export const MIN_X_GAP = 1e-3;

/** The isotonic map from raw scores to positive rates, from runs of at least `minRun` rows. */
export function fitIsotonic(
  scores: readonly number[],
  labels: readonly number[],
  minRun = 40,
): { x: number[]; y: number[] } {
  const order = scores.map((_, i) => i).sort((a, b) => (scores[a] ?? 0) - (scores[b] ?? 0));
  type Run = { n: number; scoreSum: number; positives: number };
  const runs: Run[] = [];
  for (let start = 0; start < order.length; start += minRun) {
    // A short tail joins the run before it.
    const end = order.length - (start + minRun) < minRun ? order.length : start + minRun;
    const run: Run = { n: 0, scoreSum: 0, positives: 0 };
    for (const i of order.slice(start, end)) {
      run.n++;
      run.scoreSum += scores[i] ?? 0;
      run.positives += labels[i] ?? 0;
    }
    runs.push(run);
    if (end === order.length) break;
  }
  const pooled: Run[] = [];
  for (const run of runs) {
    let current = { ...run };
    while (pooled.length > 0) {
      const prev = pooled[pooled.length - 1] as Run;
      if (prev.positives / prev.n < current.positives / current.n) break;
      pooled.pop();
      current = {
        n: prev.n + current.n,
        scoreSum: prev.scoreSum + current.scoreSum,
        positives: prev.positives + current.positives,
      };
    }
    pooled.push(current);
  }
  // Points closer than MIN_X_GAP in raw score are merged: a saturated sigmoid packs many rows into
  // 1e-6 of raw score, where ONNX Runtime's float32 output resolves only about 3e-8, so such a steep
  // stretch would turn rounding into probability.
  const merged: Run[] = [];
  for (const run of pooled) {
    const prev = merged[merged.length - 1];
    if (prev && run.scoreSum / run.n - prev.scoreSum / prev.n < MIN_X_GAP) {
      prev.n += run.n;
      prev.scoreSum += run.scoreSum;
      prev.positives += run.positives;
    } else merged.push({ ...run });
  }
  return { x: merged.map((r) => r.scoreSum / r.n), y: merged.map((r) => r.positives / r.n) };
}
