/**
 * Percentile bootstrap intervals for the evaluation's figures: how far a figure could move on
 * another draw of the same kind of data. The held-out sets are small (136 gold names, 275 HATE
 * positives), so a figure a hundredth below its goal may or may not be below it; the interval says
 * which.
 *
 * `units` are what is drawn with replacement: rows for the classifiers, whole templates for the
 * PII records (the records of one template share their sentence, so they are not independent).
 */
import { mulberry32 } from "./bag-mlp.ts";

export const BOOTSTRAP_DRAWS = 1000;
/** Fixed, so the printed intervals are reproducible. */
const BOOTSTRAP_SEED = 20261127;

export interface Interval {
  low: number;
  high: number;
}

/**
 * The central `level` (0.95) interval of `statistic` over `draws` resamples of `units` units: each
 * resample is `units` indices drawn uniformly with replacement. Draws where the statistic is not a
 * number (an AUC over a resample with no positive) are left out.
 */
export function bootstrapInterval(
  units: number,
  statistic: (indices: Int32Array) => number,
  { draws = BOOTSTRAP_DRAWS, level = 0.95, seed = BOOTSTRAP_SEED } = {},
): Interval {
  if (units === 0) return { low: Number.NaN, high: Number.NaN };
  const random = mulberry32(seed);
  const values: number[] = [];
  const indices = new Int32Array(units);
  for (let d = 0; d < draws; d++) {
    for (let i = 0; i < units; i++) indices[i] = Math.floor(random() * units);
    const value = statistic(indices);
    if (!Number.isNaN(value)) values.push(value);
  }
  if (values.length === 0) return { low: Number.NaN, high: Number.NaN };
  values.sort((a, b) => a - b);
  const tail = (1 - level) / 2;
  return { low: quantile(values, tail), high: quantile(values, 1 - tail) };
}

/** Linear interpolation between the order statistics of sorted `values`. */
function quantile(values: readonly number[], q: number): number {
  const position = q * (values.length - 1);
  const below = Math.floor(position);
  const above = Math.min(values.length - 1, below + 1);
  const lo = values[below] as number;
  return lo + ((values[above] as number) - lo) * (position - below);
}

export const formatInterval = ({ low, high }: Interval) =>
  Number.isNaN(low) ? "n/a" : `${low.toFixed(3)}-${high.toFixed(3)}`;
