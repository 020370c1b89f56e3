/**
 * Wire shapes of Optimus submissions (document 1, "Optimus"): the create and update bodies, the
 * submission with its effective status, its runs, and the answer to sync-now and retry. A query-log
 * location must be `s3://`, `gs://`, `abfs://`/`abfss://`/`azure://` or `file://` and parse as a
 * location (`parseLocation`); anything else is a 422 naming `query_logs_uri`.
 */
import { z } from "@hono/zod-openapi";
import { LocationError, parseLocation } from "@lakesmith/shared/locations";
import { OPTIMUS_ENGINES } from "@lakesmith/shared/optimus";
import { OPTIMUS_RUN_TRIGGERS } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";
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
  active: z
    .boolean()
    .openapi({ description: "false pauses the submission: the schedule never fires it (default true)." }),
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
  "`pending`: never run. `running`: its latest run is queued or running. `succeeded` / `failed`: how its latest run ended (a cancelled run counts as failed). " +
  "`paused`: `active` is false. Retry moves `failed` to a new run (`running`).";

export const RunSchema = z
  .object({
    job_id: z.string(),
    trigger: z.enum(OPTIMUS_RUN_TRIGGERS),
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
