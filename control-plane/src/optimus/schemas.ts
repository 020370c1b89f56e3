/**
 * Wire shapes of Optimus (document 1, "Optimus"): the submission create and update bodies, the
 * submission with its effective status, its runs, and the answer to sync-now and retry; then the
 * latest run's recommendations, its tables, a table's per-day metrics with applied markers, and the
 * apply / dismiss / revert answers (`recommendations.ts`, `apply.ts`). A query-log
 * location must be `s3://`, `gs://`, `abfs://`/`abfss://`/`azure://` or `file://` and parse as a
 * location (`parseLocation`); anything else is a 422 naming `query_logs_uri`.
 */
import { z } from "@hono/zod-openapi";
import { LocationError, parseLocation } from "@lakesmith/shared/locations";
import { OPTIMUS_ENGINES } from "@lakesmith/shared/optimus";
import { OPTIMUS_RECOMMENDATION_STATUSES, OPTIMUS_RUN_TRIGGERS } from "../db/schema.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { LayoutSchema } from "../policies/schemas.ts";
import { SUBMISSION_STATUSES } from "./status.ts";

export const SUBMISSION_PAGE_MAX = 200;
const LOG_SCHEMES = ["s3", "gs", "abfs", "abfss", "azure", "file"];

const QueryLogsUriSchema = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((uri, ctx) => {
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(uri)?.[1]?.toLowerCase();
    if (!scheme || !LOG_SCHEMES.includes(scheme)) {
      ctx.addIssue({ code: "custom", message: "must start with s3://, gs://, abfs://, azure:// or file://" });
      return;
    }
    try {
      parseLocation(uri);
    } catch (err) {
      if (!(err instanceof LocationError)) throw err;
      ctx.addIssue({ code: "custom", message: `the location ${err.message}` });
    }
  })
  .openapi({
    description:
      "Where the engine's query logs are: `s3://bucket/path`, `gs://bucket/path`, `abfs://container@account.dfs.core.windows.net/path` (or `azure://account/container/path`), or `file:///path` (a local agent's folder).",
    example: "s3://logs/spark-events",
  });

const fields = {
  name: z.string().trim().min(1).max(100).openapi({ description: "1-100 characters." }),
  engine: z.enum(OPTIMUS_ENGINES).openapi({
    description: "Whose logs: `spark` event logs, `trino` QueryCompletedEvent JSON, or `sql` logs.",
  }),
  lookback_days: z
    .number()
    .int()
    .min(1)
    .max(365)
    .openapi({ description: "Whole UTC days before a run's day that it analyses, 1-365 (default 7)." }),
  daily_sync_time_utc: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be HH:MM (UTC, 00:00-23:59)")
    .openapi({
      description:
        "When the daily run fires (UTC, `HH:MM`): at the first 15-minute check at or after it, once per UTC day.",
      example: "02:00",
    }),
  query_logs_uri: QueryLogsUriSchema,
  active: z.boolean().openapi({
    description:
      "false pauses the submission: the schedule never fires it (default true). Created active, its first run is triggered at once (trigger `created`); it reads the window the day's scheduled run would, so the schedule does not fire again that UTC day. A PATCH to true triggers none.",
  }),
};

export const SubmissionCreateSchema = z
  .object({
    ...fields,
    lookback_days: fields.lookback_days.default(7),
    active: fields.active.default(true),
  })
  .openapi("OptimusSubmissionCreate");
export type SubmissionCreate = z.infer<typeof SubmissionCreateSchema>;

export const SubmissionUpdateSchema = z
  .object({
    name: fields.name.optional(),
    engine: fields.engine.optional(),
    lookback_days: fields.lookback_days.optional(),
    daily_sync_time_utc: fields.daily_sync_time_utc.optional(),
    query_logs_uri: fields.query_logs_uri.optional(),
    active: fields.active.optional(),
  })
  .openapi("OptimusSubmissionUpdate");
export type SubmissionUpdate = z.infer<typeof SubmissionUpdateSchema>;

export const SubmissionIdParam = z.object({
  submission_id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "submission_id", in: "path" } }),
});

export const SubmissionListQuery = pageQuery(50, SUBMISSION_PAGE_MAX);

const STATUS_DESCRIPTION =
  "`pending`: never run (created paused, then resumed). `running`: its latest run is queued or running. `succeeded` / `failed`: how its latest run ended (a cancelled run counts as failed). " +
  "`paused`: `active` is false. Retry moves `failed` to a new run (`running`).";

export const RunSchema = z
  .object({
    job_id: z.string(),
    trigger: z.enum(OPTIMUS_RUN_TRIGGERS).openapi({
      description:
        "What queued the run: `created` (the submission's create, when active), `schedule` (the daily check), `sync_now` or `retry`.",
    }),
    status: z.enum(["running", "succeeded", "failed"]).openapi({
      description:
        "`running` while its job is queued or running; then how it ended (cancelled counts as failed).",
    }),
    job_status: z.string().openapi({ description: "The `query_log_analysis` job's own status." }),
    window_start: z.string().openapi({ description: "First UTC day analysed (`YYYY-MM-DD`)." }),
    window_end: z.string().openapi({ description: "Last UTC day analysed, included." }),
    error: z.string().nullable(),
    created_at: z.string().openapi({ format: "date-time" }),
    started_at: z.string().nullable().openapi({ format: "date-time" }),
    finished_at: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("OptimusRun");

export const SubmissionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    engine: z.enum(OPTIMUS_ENGINES),
    lookback_days: z.number().int(),
    daily_sync_time_utc: z.string(),
    query_logs_uri: z.string(),
    active: z.boolean(),
    status: z.enum(SUBMISSION_STATUSES).openapi({ description: STATUS_DESCRIPTION }),
    last_run_status: z.enum(["succeeded", "failed"]).nullable(),
    last_run_error: z.string().nullable(),
    last_run_finished_at: z.string().nullable().openapi({ format: "date-time" }),
    created_at: z.string().openapi({ format: "date-time" }),
    updated_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("OptimusSubmission");

export const SubmissionDetailSchema = SubmissionSchema.extend({
  latest_run: RunSchema.extend({
    result: z.record(z.string(), z.unknown()).nullable().openapi({
      description: "The analysis' summary as the agent reported it; null until it succeeds.",
    }),
  })
    .nullable()
    .openapi({ description: "The latest run with its summary; null before the first." }),
  runs: z.array(RunSchema).openapi({ description: "The latest runs, newest first (at most 20)." }),
}).openapi("OptimusSubmissionDetail");

export const RunQueuedSchema = RunSchema.extend({ submission_id: z.string() }).openapi("OptimusRunQueued");

// --- recommendations, tables, metrics (issue 22, step 5) -----------------------------------------

export const RECOMMENDATION_PAGE_MAX = 500;

export const RecommendationListQuery = pageQuery(100, RECOMMENDATION_PAGE_MAX);

export const RecommendationIdParam = z.object({
  recommendation_id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "recommendation_id", in: "path" } }),
});

export const TableMetricsParams = SubmissionIdParam.extend({
  table_fqn: z
    .string()
    .min(1)
    .max(1000)
    .openapi({
      param: { name: "table_fqn", in: "path" },
      description: "The table's `table_fqn` as `GET .../tables` names it (URL-encoded).",
    }),
});

export const METRICS_DAYS_MAX = 365;

export const TableMetricsQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(METRICS_DAYS_MAX)
    .default(90)
    .openapi({ description: `UTC days ending today, today included (default 90, 1-${METRICS_DAYS_MAX}).` }),
});

const ratio = z.number().min(0).max(1);
const fraction = (description: string) => ratio.openapi({ description });

const PredicateSchema = z
  .object({
    column: z.string(),
    op: z.enum(["=", "<", "<=", ">", ">=", "in"]),
    values: z.array(z.string()),
  })
  .openapi("OptimusPredicate");

export const RecommendationQueriesSchema = z
  .object({
    predicates: z.array(PredicateSchema).openapi({ description: "The conjunction the scans filtered on." }),
    columns: z.array(z.string()).openapi({ description: "Every column the filters referenced." }),
    queries: z.number().int(),
    bytes_scanned: z.number(),
    examples: z
      .array(z.string())
      .openapi({ description: "Up to 3 of the queries (id, description or SQL head)." }),
  })
  .openapi("OptimusRecommendationQueries");

export const RECOMMENDATION_STATUS_DESCRIPTION =
  "`open`: not acted on. `applied`: written into the table's own policy (`POST .../apply`). `dismissed`: set aside (`POST .../dismiss`). `reverted`: an applied one undone (`POST .../revert`).";

export const RecommendationSchema = z
  .object({
    id: z.string(),
    submission_id: z.string(),
    run_id: z
      .string()
      .openapi({ description: "The run (its `query_log_analysis` job) whose workload was scored." }),
    table_fqn: z.string(),
    table_id: z.string().openapi({ description: "The Lakesmith table." }),
    layout: LayoutSchema,
    current_layout: LayoutSchema.nullable().openapi({
      description: "The layout the files had when scored; null when none.",
    }),
    expected_skip_fraction: fraction(
      "Fraction of the logged bytes the recommended layout lets the engines skip (simulated).",
    ),
    current_skip_fraction: fraction("The same for the current layout, simulated on the same sample."),
    measured_skip_fraction: ratio.nullable().openapi({
      description:
        "The workload replayed against the current files' real statistics; null where they carry none.",
    }),
    bytes_saved_per_day: z.number(),
    rewrite_bytes: z
      .number()
      .openapi({ description: "Bytes one rewrite reads and writes (the table's total)." }),
    reason: z.string(),
    queries: z.array(RecommendationQueriesSchema).openapi({
      description: "The queries behind it: the workload's top filter sets (at most 20), by bytes scanned.",
    }),
    evidence: z
      .object({
        candidates: z.array(z.object({ layout: LayoutSchema.nullable(), skip_fraction: ratio })),
        sample_rows: z.number().int(),
        pseudo_files: z.number().int(),
        method: z.string(),
        table_version: z.number().int(),
      })
      .openapi({ description: "Every candidate scored (the best first) and how." }),
    status: z
      .enum(OPTIMUS_RECOMMENDATION_STATUSES)
      .openapi({ description: RECOMMENDATION_STATUS_DESCRIPTION }),
    status_changed_at: z.string().nullable().openapi({ format: "date-time" }),
    status_changed_by: z.string().nullable(),
    applied_at: z
      .string()
      .nullable()
      .openapi({ format: "date-time", description: "When it was last applied." }),
    applied_policy_id: z
      .string()
      .nullable()
      .openapi({ description: "The table policy an apply wrote it into." }),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("OptimusRecommendation");

export const RecommendationPageSchema = pageOf(RecommendationSchema, "OptimusRecommendationPage")
  .extend({
    run_id: z
      .string()
      .nullable()
      .openapi({ description: "The latest succeeded run; null before the first." }),
  })
  .openapi("OptimusRecommendationPage");

export const TableSummarySchema = z
  .object({
    table_fqn: z.string(),
    table_id: z.string(),
    recommendations: z.number().int(),
    open: z.number().int(),
    applied: z.number().int(),
    best_expected_skip_fraction: ratio,
    bytes_saved_per_day: z.number().openapi({ description: "Summed over its recommendations." }),
    queries: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Its workload in the run; null when not kept." }),
    bytes_scanned: z.number().nullable(),
  })
  .openapi("OptimusTable");

export const TableListSchema = z
  .object({
    submission_id: z.string(),
    run_id: z.string().nullable(),
    items: z.array(TableSummarySchema),
  })
  .openapi("OptimusTableList");

export const MetricsDaySchema = z
  .object({
    day: z.string().openapi({ description: "UTC day, `YYYY-MM-DD`." }),
    queries: z.number().int().nullable(),
    bytes_scanned: z.number().nullable(),
    measured_skip_fraction: ratio.nullable(),
    predicted_skip_fraction: ratio.nullable(),
    run_id: z.string().nullable().openapi({ description: "The run whose measurement of the day this is." }),
  })
  .openapi("OptimusMetricsDay", {
    description:
      "A day no run measured has every figure null (no data, not zero queries). A measured day's `predicted_skip_fraction` is the newest open or applied recommendation's expected skip at measurement time (null when none).",
  });

export const MarkerSchema = z
  .object({
    recommendation_id: z.string(),
    layout: LayoutSchema,
    applied_at: z.string().openapi({ format: "date-time" }),
    applied_day: z.string(),
    applied_by: z.string().nullable(),
    reverted_at: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("OptimusAppliedMarker");

export const TableMetricsSchema = z
  .object({
    submission_id: z.string(),
    table_fqn: z.string(),
    table_id: z.string(),
    from: z.string(),
    to: z.string(),
    days: z
      .array(MetricsDaySchema)
      .openapi({ description: "One entry per UTC day, oldest first, today last." }),
    markers: z.array(MarkerSchema).openapi({
      description:
        "Recommendations applied while the window lasted (applied by its end, not reverted before its start).",
    }),
  })
  .openapi("OptimusTableMetrics");

export const RecommendationApplySchema = z
  .object({
    run_now: z.boolean().default(false).openapi({
      description:
        "Also queue the table's `improve_layout` action now (a crunch in the new layout, as `POST /api/v1/catalogs/{catalog_id}/tables/{table_id}/actions` would); otherwise the policy's schedule runs it.",
    }),
  })
  .strict()
  .openapi("OptimusRecommendationApplyRequest");
export type RecommendationApply = z.infer<typeof RecommendationApplySchema>;

export const RecommendationAppliedSchema = z
  .object({
    recommendation: RecommendationSchema,
    policy: z.object({
      policy_id: z.string(),
      catalog_id: z.string(),
      table_id: z.string().openapi({ description: "Document 2's `table_id` of the catalog table." }),
      created: z.boolean().openapi({ description: "True when the apply created the table's own policy." }),
      version: z.number().int(),
    }),
    run_now: z
      .object({ job_id: z.string().nullable(), error: z.string().nullable() })
      .nullable()
      .openapi({ description: "With `run_now`: the queued job, or why none was queued (the apply stands)." }),
  })
  .openapi("OptimusRecommendationApplied");

export const RecommendationRevertedSchema = z
  .object({
    recommendation: RecommendationSchema,
    policy_change: z.enum(["deleted", "restored", "none"]).openapi({
      description:
        "`deleted`: the table policy the apply created went (its inherited policy applies again). `restored`: the previous `improve_layout` came back. `none`: the policy no longer held the applied layout (deleted or changed since), so it was left alone.",
    }),
    detail: z.string(),
  })
  .openapi("OptimusRecommendationReverted");
