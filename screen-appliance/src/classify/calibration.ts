/**
 * Calibrated probabilities for the bias and toxicity classifiers. Training fits, per label, an
 * isotonic (monotone) map from the model's raw sigmoid output to the positive rate observed on a
 * calibration split it never trained on (scripts/lib/calibration.ts) and stores its points in the
 * model spec; scoring applies it here. Between points the map is linear; below the first point it
 * runs linearly from (0, 0), above the last one to (1, 1). A small share of the raw score is mixed
 * in so the map is strictly increasing: two texts the model ranks apart never tie after it.
 */

export interface CalibrationCurve {
  /** Raw scores, ascending. */
  x: readonly number[];
  /** Calibrated probabilities at `x`, non-decreasing. */
  y: readonly number[];
}

/** Weight of the raw score in the result, enough to keep order, too small to move a level. */
export const RAW_SHARE = 1e-3;

export function calibrate(curve: CalibrationCurve, raw: number): number {
  const { x, y } = curve;
  const n = Math.min(x.length, y.length);
  if (n === 0) return raw;
  let mapped: number;
  if (raw <= (x[0] as number)) {
    const x0 = x[0] as number;
    mapped = x0 > 0 ? ((y[0] as number) * raw) / x0 : (y[0] as number);
  } else if (raw >= (x[n - 1] as number)) {
    const xn = x[n - 1] as number;
    const yn = y[n - 1] as number;
    mapped = xn < 1 ? yn + ((1 - yn) * (raw - xn)) / (1 - xn) : yn;
  } else {
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((x[mid] as number) <= raw) lo = mid;
      else hi = mid;
    }
    const x0 = x[lo] as number;
    const x1 = x[hi] as number;
    const t = x1 > x0 ? (raw - x0) / (x1 - x0) : 0;
    mapped = (y[lo] as number) + t * ((y[hi] as number) - (y[lo] as number));
  }
  return Math.min(1, Math.max(0, (1 - RAW_SHARE) * mapped + RAW_SHARE * raw));
}
