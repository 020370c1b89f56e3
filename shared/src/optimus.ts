/**
 * The jobs of Optimus (issue 22), their payloads, parts and results.
 *
 * - `query_log_analysis`: an agent allowed to read a submission's query logs reads what the engine
 *   ran in the lookback window and maps the scans to tables. The control plane queues one job per
 *   run of a submission (its daily schedule, sync-now or retry); the window is whole UTC days,
 *   `window_start` to `window_end` inclusive, ending the day before the run was asked.
 * - `layout_scoring`: one table's workload replayed against candidate layouts (below).
 *
 * @example
 * const payload = QueryLogAnalysisPayloadSchema.parse(offer.payload); // payload.query_logs_uri
 */
import { z } from "zod";
import { CatalogRefSchema, LayoutSchema } from "./jobs.ts";

export const QUERY_LOG_ANALYSIS_KIND = "query_log_analysis";

/** The engines whose logs a submission names: Spark event logs, Trino query events, or plain SQL logs. */
export const OPTIMUS_ENGINES = ["spark", "trino", "sql"] as const;
export type OptimusEngine = (typeof OPTIMUS_ENGINES)[number];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The tables a run maps scans to, as the control plane knows them (no credentials). */
export const OptimusTableRefSchema = z.object({
  /** How the API names the table: a catalog table's full name, else the Lakesmith table's name. */
  table_fqn: z.string().min(1),
  /** The Lakesmith table. */
  table_id: z.string().min(1),
  /** Other names an engine may print for it (`schema.table`, the catalog's spelling), compared case-insensitively. */
  names: z.array(z.string().min(1)).default([]),
  /** The table's root(s) (`s3://bucket/path`); a scan whose location lies under one is the table's. */
  uris: z.array(z.string().min(1)).min(1),
});
export type OptimusTableRef = z.infer<typeof OptimusTableRefSchema>;

/** The most tables one run maps scans to. */
export const OPTIMUS_MAX_TABLES = 5_000;

export const QueryLogAnalysisPayloadSchema = z.object({
  submission_id: z.string().min(1),
  engine: z.enum(OPTIMUS_ENGINES),
  query_logs_uri: z.string().min(1),
  /** The first UTC day of the window (`YYYY-MM-DD`). */
  window_start: z.string().regex(DAY),
  /** The last UTC day of the window, included. */
  window_end: z.string().regex(DAY),
  /** The tables scans are mapped to (`OptimusTableRef`); a scan of none of them is counted as unmatched. */
  tables: z.array(OptimusTableRefSchema).max(OPTIMUS_MAX_TABLES).default([]),
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

// ---------------------------------------------------------------------------------------------
// The analysis, in two job kinds (issue 22). `query_log_analysis` reads the logs of the window and
// sends, per table it mapped scans to, the table's workload as a part (`OptimusWorkloadPart`); its
// result is the read's summary (`QueryLogAnalysisResult`). When it succeeds, the control plane
// queues one `layout_scoring` job per table with a workload: that job loads the table (through its
// format and catalog, like any table job), simulates candidate layouts on a bounded sample, replays
// the workload against them and against the table's real file statistics, and reports the best
// layout (`LayoutScoringResult`). Two kinds, because the logs and the tables may live where
// different agents are allowed, and a table job carries its catalog's credentials, a log job none.
// ---------------------------------------------------------------------------------------------

/** One column-versus-literals comparison a scan filtered on, as the engine logged it. */
export const OptimusPredicateSchema = z.object({
  column: z.string().min(1),
  op: z.enum(["=", "<", "<=", ">", ">=", "in"]),
  /** The literals as text (`2000`, `2024-03-01`, `CA`); the replay reads them in the column's type. */
  values: z.array(z.string()).min(1).max(1_000),
});
export type OptimusPredicate = z.infer<typeof OptimusPredicateSchema>;

/** Queries and bytes scanned. */
export const OptimusVolumeSchema = z.object({
  queries: z.number().int().nonnegative(),
  bytes_scanned: z.number().nonnegative(),
});
export type OptimusVolume = z.infer<typeof OptimusVolumeSchema>;

/**
 * The scans of a table that filtered alike: the same conjunction of predicates (sorted, each once;
 * a predicate under an `OR` is left out, since it narrows nothing alone), with how often and how
 * much, in total and per UTC day. `columns` is every column the filters referenced, predicates or
 * not (a join key, a computed comparison), for the evidence.
 */
export const OptimusFilterSetSchema = OptimusVolumeSchema.extend({
  predicates: z.array(OptimusPredicateSchema).max(64),
  columns: z.array(z.string()).max(256),
  /** Per UTC day (`YYYY-MM-DD`) of the window. */
  days: z.record(z.string().regex(DAY), OptimusVolumeSchema),
  /** Up to 3 of the queries behind it (an id, a Spark description, the head of the SQL). */
  examples: z.array(z.string().max(300)).max(3),
});
export type OptimusFilterSet = z.infer<typeof OptimusFilterSetSchema>;

/** The most filter sets a table's workload keeps: the largest by bytes scanned, the rest folded into `other`. */
export const OPTIMUS_MAX_FILTER_SETS = 500;

/** A part of `query_log_analysis`: one table's workload over the window. */
export const OptimusWorkloadPartSchema = OptimusVolumeSchema.extend({
  type: z.literal("table_workload"),
  table_fqn: z.string().min(1),
  table_id: z.string().min(1),
  filter_sets: z.array(OptimusFilterSetSchema).max(OPTIMUS_MAX_FILTER_SETS),
  /** Scans beyond the kept filter sets, counted but not replayed. */
  other: OptimusVolumeSchema,
});
export type OptimusWorkloadPart = z.infer<typeof OptimusWorkloadPartSchema>;

/** The result of `query_log_analysis`: what was read, and what was left out and why. */
export const QueryLogAnalysisResultSchema = z.object({
  logs: z.number().int().nonnegative(),
  lines: z.number().int().nonnegative(),
  malformed_lines: z.number().int().nonnegative(),
  /** Queries read, those in the window, and Lakesmith's own reads among them (never counted). */
  queries_read: z.number().int().nonnegative(),
  queries_in_window: z.number().int().nonnegative(),
  own_queries_skipped: z.number().int().nonnegative(),
  scans: z.number().int().nonnegative(),
  scans_matched: z.number().int().nonnegative(),
  /** The names or locations of unmatched scans, the most scanned first (at most 20). */
  unmatched: z.array(OptimusVolumeSchema.extend({ name: z.string() })).max(20),
  tables: z.number().int().nonnegative(),
});
export type QueryLogAnalysisResult = z.infer<typeof QueryLogAnalysisResultSchema>;

export const LAYOUT_SCORING_KIND = "layout_scoring";

/** The most rows of a table one scoring reads into its sample. */
export const DEFAULT_SCORING_SAMPLE_ROWS = 1_000_000;

export const LayoutScoringPayloadSchema = z.object({
  submission_id: z.string().min(1),
  /** The `query_log_analysis` job whose workload this scores. */
  run_id: z.string().min(1),
  table_fqn: z.string().min(1),
  table_id: z.string().min(1),
  uri: z.string().min(1),
  format: z.enum(["delta", "iceberg", "hive"]),
  /** Filled by the control plane as for any table job (`catalog-connections/table-ref.ts`). */
  catalog: CatalogRefSchema.optional(),
  /** The layout the table's files are written in now (its policy's or recipe's); null when none. */
  current_layout: LayoutSchema.nullable(),
  filter_sets: z.array(OptimusFilterSetSchema).max(OPTIMUS_MAX_FILTER_SETS),
  /**
   * The analysed window's first and last UTC days, which a day's bytes are averaged over; without
   * them, the span from the workload's first day to its last.
   */
  window_start: z.string().regex(DAY).optional(),
  window_end: z.string().regex(DAY).optional(),
  /**
   * The file size a rewrite of the table writes (its effective policy's, else the table's): the
   * layouts are simulated in as many pseudo-files as a rewrite at this size would write, since that
   * is the table the engines will skip over. Without it, as many as the table has now.
   */
  target_file_size_mb: z.number().int().positive().optional(),
  sample_max_rows: z.number().int().positive().max(10_000_000).default(DEFAULT_SCORING_SAMPLE_ROWS),
  /** The least gain in skipped fraction (of bytes scanned) over the current layout worth recommending. */
  min_gain: z.number().min(0).max(1).default(0.1),
});
export type LayoutScoringPayload = z.infer<typeof LayoutScoringPayloadSchema>;

/** A layout's skipping on the workload: the fraction of the logged bytes it lets the engine skip. */
export const ScoredCandidateSchema = z.object({
  layout: LayoutSchema.nullable(),
  skip_fraction: z.number().min(0).max(1),
});

export const LayoutScoringResultSchema = z.object({
  measured_at: z.string(),
  /** The snapshot scored (Delta: log version; Iceberg: sequence number; Hive: 0). */
  table_version: z.number().int().nonnegative(),
  files: z.number().int().nonnegative(),
  total_bytes: z.number().nonnegative(),
  sample_rows: z.number().int().nonnegative(),
  /** The pseudo-files the sample was cut into: as many as the table has files (at least 1). */
  pseudo_files: z.number().int().nonnegative(),
  /** How the figures were measured, in words. */
  method: z.string(),
  current: z.object({
    layout: LayoutSchema.nullable(),
    /** The current layout simulated on the sample. */
    predicted_skip_fraction: z.number().min(0).max(1),
    /** The workload replayed against the table's real file statistics (null where files carry none). */
    measured_skip_fraction: z.number().min(0).max(1).nullable(),
  }),
  /** Every candidate scored, the best first. */
  candidates: z.array(ScoredCandidateSchema),
  recommendation: z
    .object({
      layout: LayoutSchema,
      expected_skip_fraction: z.number().min(0).max(1),
      /** Bytes a day of the workload would no longer read, against the bytes a rewrite reads and writes. */
      bytes_saved_per_day: z.number().nonnegative(),
      rewrite_bytes: z.number().nonnegative(),
      /** Why this one, in words. */
      reason: z.string(),
    })
    .nullable(),
  /** Why nothing is recommended, when nothing is. */
  no_recommendation_reason: z.string().nullable(),
  /** Per UTC day of the workload: its volume and its skipping measured against the real files. */
  days: z.array(
    OptimusVolumeSchema.extend({
      day: z.string().regex(DAY),
      measured_skip_fraction: z.number().min(0).max(1).nullable(),
    }),
  ),
});
export type LayoutScoringResult = z.infer<typeof LayoutScoringResultSchema>;
