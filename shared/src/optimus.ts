/**
 * Payload of `query_log_analysis` (Optimus, issue 22): an agent allowed to read a submission's query
 * logs reads what the engine ran in the lookback window and scores table layouts. The control plane
 * queues one job per run of a submission (its daily schedule, sync-now or retry); the window is
 * whole UTC days, `window_start` to `window_end` inclusive, ending the day before the run was asked.
 *
 * @example
 * const payload = QueryLogAnalysisPayloadSchema.parse(offer.payload); // payload.query_logs_uri
 */
import { z } from "zod";

export const QUERY_LOG_ANALYSIS_KIND = "query_log_analysis";

/** The engines whose logs a submission names: Spark event logs, Trino query events, or plain SQL logs. */
export const OPTIMUS_ENGINES = ["spark", "trino", "sql"] as const;
export type OptimusEngine = (typeof OPTIMUS_ENGINES)[number];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export const QueryLogAnalysisPayloadSchema = z.object({
  submission_id: z.string().min(1),
  engine: z.enum(OPTIMUS_ENGINES),
  query_logs_uri: z.string().min(1),
  /** The first UTC day of the window (`YYYY-MM-DD`). */
  window_start: z.string().regex(DAY),
  /** The last UTC day of the window, included. */
  window_end: z.string().regex(DAY),
});
export type QueryLogAnalysisPayload = z.infer<typeof QueryLogAnalysisPayloadSchema>;

const DAY_MS = 86_400_000;

/** The UTC date of `at` as `YYYY-MM-DD`. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * The lookback window of a run asked at `at`: the `lookbackDays` whole UTC days before its day.
 *
 * @example lookbackWindow(new Date("2026-04-08T02:00:00Z"), 7) // { start: "2026-04-01", end: "2026-04-07" }
 */
export function lookbackWindow(at: Date, lookbackDays: number): { start: string; end: string } {
  const today = Date.parse(`${utcDay(at)}T00:00:00Z`);
  return { start: utcDay(new Date(today - lookbackDays * DAY_MS)), end: utcDay(new Date(today - DAY_MS)) };
}
