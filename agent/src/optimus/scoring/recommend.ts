/**
 * Which scored layout to recommend, and why in words. Pure.
 *
 * The rule: the best candidate (highest predicted skip fraction; on a tie the current layout, then
 * fewer columns, then a linear sort before a Z-order) is recommended only when
 * 1. it is not the current layout and gains at least `minGain` (and more than nothing) in skipped
 *    fraction over the current layout, simulated alike; and
 * 2. the bytes it saves a day, the workload's bytes scanned a day times the gain, exceed the
 *    rewrite's cost spread over `AMORTIZE_DAYS` days: a rewrite reads and writes the table's bytes
 *    once (2 × total bytes).
 * A workload logged without byte figures is taken to read the whole table per query.
 * Candidates never hold a low-cardinality column alone (`candidates.ts`).
 */
import type { Layout } from "@lakesmith/shared/jobs";
import type { LayoutScoringResult } from "@lakesmith/shared/optimus";
import { describeLayout } from "./candidates.ts";

/** The days a rewrite's cost is spread over. */
export const AMORTIZE_DAYS = 30;

export interface ScoredLayout {
  layout: Layout | null;
  skip: number;
  current: boolean;
}

export interface RecommendInput {
  /** Every scored layout, the current one among them. */
  scored: readonly ScoredLayout[];
  minGain: number;
  /** The workload's bytes scanned a day (see the module comment for logs without bytes). */
  bytesPerDay: number;
  totalBytes: number;
}

/** The scored layouts best first (see the module comment for ties). */
export function rank(scored: readonly ScoredLayout[]): ScoredLayout[] {
  const size = (l: Layout | null) => l?.columns.length ?? 0;
  return scored
    .map((s, i) => ({ s, i }))
    .sort(
      (a, b) =>
        b.s.skip - a.s.skip ||
        Number(b.s.current) - Number(a.s.current) ||
        size(a.s.layout) - size(b.s.layout) ||
        Number(a.s.layout?.type === "zorder") - Number(b.s.layout?.type === "zorder") ||
        a.i - b.i,
    )
    .map(({ s }) => s);
}

export function recommend(
  input: RecommendInput,
): Pick<LayoutScoringResult, "recommendation" | "no_recommendation_reason"> {
  const ranked = rank(input.scored);
  const current = ranked.find((s) => s.current);
  const best = ranked.find((s) => !s.current && s.layout !== null);
  const none = (reason: string) => ({ recommendation: null, no_recommendation_reason: reason });
  if (!current) return none("the current layout could not be scored");
  const now = `the current layout (${describeLayout(current.layout)}) skips ${pct(current.skip)} of the bytes the workload scans`;
  if (!best?.layout) return none(`no candidate layout to compare: ${now}`);
  const gain = best.skip - current.skip;
  const name = describeLayout(best.layout);
  if (gain <= 0 || gain < input.minGain)
    return none(
      gain <= 0
        ? `no candidate skips more than the current layout: ${now}; the best other, ${name}, skips ${pct(best.skip)}`
        : `the best candidate, ${name}, skips ${pct(best.skip)} against ${pct(current.skip)} now: ` +
            `a gain of ${fixed(gain)}, under the least gain worth a rewrite (${fixed(input.minGain)})`,
    );
  const saved = input.bytesPerDay * gain;
  const rewrite = 2 * input.totalBytes;
  const perDay = rewrite / AMORTIZE_DAYS;
  const weighed = `${bytes(saved)} a day saved against a rewrite of ${bytes(rewrite)} (${bytes(perDay)} a day over ${AMORTIZE_DAYS} days)`;
  if (saved <= perDay)
    return none(
      `${name} would skip ${pct(best.skip)} against ${pct(current.skip)} now, but the workload is too small ` +
        `to pay for the rewrite: ${weighed}`,
    );
  return {
    recommendation: {
      layout: best.layout,
      expected_skip_fraction: best.skip,
      bytes_saved_per_day: saved,
      rewrite_bytes: rewrite,
      reason:
        `${name} lets the workload skip ${pct(best.skip)} of the bytes it scans, against ${pct(current.skip)} ` +
        `with the current layout (${describeLayout(current.layout)}) (gain ${fixed(gain)} ≥ ${fixed(input.minGain)}); ${weighed}`,
    },
    no_recommendation_reason: null,
  };
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

function fixed(n: number): string {
  return n.toFixed(3);
}

function bytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)} bytes` : `${v.toFixed(1)} ${units[u]}`;
}
