/**
 * The savings formulas, in one place: the savings API (`savings/service.ts`) and the reports
 * (`notifications/figures.ts`) both take them from here.
 *
 * - Units are binary: a GB is 2^30 bytes, a PB is 2^50 bytes.
 * - bytes saved = max(0, bytes before - bytes after), over sums of rewrites.
 * - DRR (percent) = 100 x (1 - bytes after / bytes before); null when nothing was rewritten.
 * - effective rate = `storage_cost_usd_per_gb_month` x (1 - `cloud_discount_percent` / 100);
 *   dollars per month = bytes saved / GB x effective rate; projected = per month x
 *   `projection_period_months`, null while that setting is unset.
 * - operational cost = `operational_cost_usd_per_pb` x bytes processed / PB, where bytes processed
 *   are the bytes the rewrites read (their bytes before); null while the setting is unset.
 * - goal progress = bytes saved in the current UTC quarter / (`quarterly_goal_pb` x PB), absent
 *   while the goal is 0.
 */
import type { Config } from "../config/definitions.ts";

export const GB = 2 ** 30;
export const PB = 2 ** 50;

/** The storage dollars a saving is worth, as the settings say. */
export interface Dollars {
  /** Storage cost after the discount, USD per GB-month. */
  effectiveRate: number;
  perMonth: number;
  projectionMonths: number | null;
  projected: number | null;
}

/** How far the current quarter's savings are toward the quarterly goal. */
export interface GoalProgress {
  goalPb: number;
  /** `YYYY-Qn` of the UTC quarter. */
  quarter: string;
  /** The quarter's first and last UTC days, `YYYY-MM-DD`. */
  start: string;
  end: string;
  bytesSaved: number;
  percent: number;
}

export type SavingsSettings = Pick<
  Config,
  | "storage_cost_usd_per_gb_month"
  | "cloud_discount_percent"
  | "projection_period_months"
  | "operational_cost_usd_per_pb"
  | "quarterly_goal_pb"
>;

/** @example bytesSaved(10 * GB, 4 * GB) // 6 GiB; never below 0 */
export const bytesSaved = (before: number, after: number) => Math.max(0, before - after);

/** @example drrPercent(100, 25) // 75 */
export const drrPercent = (before: number, after: number): number | null =>
  before > 0 ? 100 * (1 - after / before) : null;

/** Monthly dollars saved for `saved` bytes, and the projection. */
export function dollarsSaved(saved: number, values: SavingsSettings): Dollars {
  const effectiveRate = values.storage_cost_usd_per_gb_month * (1 - values.cloud_discount_percent / 100);
  const perMonth = (saved / GB) * effectiveRate;
  const months = values.projection_period_months;
  return {
    effectiveRate,
    perMonth,
    projectionMonths: months,
    projected: months === null ? null : perMonth * months,
  };
}

/** The estimated cost of processing `bytesProcessed`; null while the rate is unset. */
export const operationalCost = (bytesProcessed: number, values: SavingsSettings): number | null =>
  values.operational_cost_usd_per_pb === null
    ? null
    : (bytesProcessed / PB) * values.operational_cost_usd_per_pb;

/** The UTC quarter holding `now`: its key and first and last days. */
export function quarterOf(now: Date): { quarter: string; start: string; end: string } {
  const year = now.getUTCFullYear();
  const q = Math.floor(now.getUTCMonth() / 3);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return {
    quarter: `${year}-Q${q + 1}`,
    start: day(new Date(Date.UTC(year, q * 3, 1))),
    end: day(new Date(Date.UTC(year, q * 3 + 3, 0))),
  };
}

/** Progress toward the quarterly goal; undefined while the goal is 0 (hidden). */
export function goalProgress(
  savedThisQuarter: number,
  now: Date,
  values: SavingsSettings,
): GoalProgress | undefined {
  const goalPb = values.quarterly_goal_pb;
  if (goalPb <= 0) return undefined;
  return {
    goalPb,
    ...quarterOf(now),
    bytesSaved: savedThisQuarter,
    percent: (100 * savedThisQuarter) / (goalPb * PB),
  };
}
