/**
 * Wire shapes of crunch jobs (document 1, "Crunch job"). A trigger has exactly one of three modes:
 * lookback (`lookback_start`, `lookback_end`: days back from today, UTC), backfill
 * (`backfill_start_date`, `backfill_end_date`, optional `cluster_columns`), or whole table
 * (`whole_table: true`, optional `cluster_columns`; an addition to the spec's two, for a crunch of
 * every file whatever its date). A field of another mode, two modes or none is a 422 naming the
 * fields, never something silently ignored. `layout` (any mode; an extension) names a linear sort or
 * a Z-order over 2-4 distinct columns instead of `cluster_columns`.
 */
import { z } from "@hono/zod-openapi";
import {
  CRUNCH_KINDS,
  CrunchPartitionSchema,
  CrunchSettingsSchema,
  IsoDateSchema,
} from "@lakesmith/shared/jobs";
import { JOB_STATUSES, PRIORITIES } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";
import { rangeIssues } from "../schedules/schemas.ts";

export const LOOKBACK_FIELDS = ["lookback_start", "lookback_end"] as const;
export const BACKFILL_FIELDS = ["backfill_start_date", "backfill_end_date"] as const;
export const WHOLE_TABLE_FIELDS = ["whole_table"] as const;
const MODE_FIELDS = [...LOOKBACK_FIELDS, ...BACKFILL_FIELDS, ...WHOLE_TABLE_FIELDS] as const;

/** Names a Delta table without column mapping can use: no space, comma, semicolon, braces, parentheses or `=`. */
const COLUMN_NAME = /^[^\s,;{}()=]{1,255}$/;
const MAX_CLUSTER_COLUMNS = 32;

/**
 * The names in a comma-separated `cluster_columns` string, trimmed, with a message per problem.
 *
 * @example clusterColumnNames(" customer_id, region ") // { names: ["customer_id", "region"], problems: [] }
 */
export function clusterColumnNames(text: string): { names: string[]; problems: string[] } {
  const names = text.split(",").map((n) => n.trim());
  return { names, problems: columnNameProblems(names) };
}

/** A message per name that is empty, not a column name, or named twice, and for too many names. */
function columnNameProblems(names: readonly string[]): string[] {
  const problems: string[] = [];
  names.forEach((name, i) => {
    if (name === "") problems.push(`name ${i + 1} is empty; separate column names with single commas`);
    else if (!COLUMN_NAME.test(name))
      problems.push(
        `'${name}' is not a column name (no spaces, ';', '{}', '()' or '=', at most 255 characters)`,
      );
    else if (names.indexOf(name) !== i) problems.push(`'${name}' is named twice`);
  });
  if (names.length > MAX_CLUSTER_COLUMNS) problems.push(`at most ${MAX_CLUSTER_COLUMNS} columns`);
  return problems;
}

/** A layout's columns: between `min` and `max` names (the agent's `LayoutSchema` holds the same bounds). */
const layoutColumns = (type: string, min: number, max: number) =>
  z
    .array(z.string().max(255))
    .superRefine((columns, ctx) => {
      if (columns.length < min || columns.length > max)
        ctx.addIssue({
          code: "custom",
          message: `a ${type} layout takes ${min} to ${max} columns, not ${columns.length}`,
        });
      for (const message of columnNameProblems(columns)) ctx.addIssue({ code: "custom", message });
    })
    .openapi({
      description: `${min} to ${max} distinct column names.`,
      example: ["customer_id", "event_time"],
    });

const LayoutBody = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("linear"), columns: layoutColumns("linear", 1, 8) }),
    z.strictObject({ type: z.literal("zorder"), columns: layoutColumns("zorder", 2, 4) }),
  ])
  .openapi("CrunchLayout", {
    description:
      "The rewrite's row order (an extension of document 1). linear sorts by the columns in order: a filter on the " +
      "first skips most files, one on a later column few. zorder sorts by a Z-value, the interleaved bits of each " +
      "column's rank among the rows sorted together (skewed data, strings and nulls alike; nulls last), so a filter " +
      "on any one of the columns, or several, skips files. Applied as asked: the agent's tuning then only chooses " +
      "the encoding and compression level (its reason says when the sort measured costly). An optimize pass never " +
      "re-sorts and says so in the job's notes. Names the table lacks fail the job, naming them.",
    example: { type: "zorder", columns: ["customer_id", "event_time"] },
  });

const LOOKBACK = z.number().int().min(0).max(3650);
/** Wrapped here: the shared schema's zod instance may predate the OpenAPI extension (see schedules). */
const optionalDate = (description: string) =>
  IsoDateSchema.optional().openapi({ description, example: "2026-01-31" });

export const CrunchTriggerSchema = z
  .strictObject({
    lookback_start: LOOKBACK.optional().openapi({
      description: "Lookback mode: days back from today (UTC) where the range starts; at least lookback_end.",
      example: 15,
    }),
    lookback_end: LOOKBACK.optional().openapi({
      description: "Lookback mode: days back from today (UTC) where the range ends; 0 is today.",
      example: 2,
    }),
    backfill_start_date: optionalDate("Backfill mode: first partition date, YYYY-MM-DD, not after the end."),
    backfill_end_date: optionalDate("Backfill mode: last partition date, YYYY-MM-DD (inclusive)."),
    whole_table: z
      .literal(true)
      .optional()
      .openapi({
        description:
          "Whole-table mode: `true` crunches every file of the table, whatever its date (files without a date too). " +
          "Exclusive with the lookback and backfill fields; only `true` is accepted.",
        example: true,
      }),
    cluster_columns: z
      .string()
      .max(8192)
      .optional()
      .openapi({
        description:
          "Backfill or whole-table mode: the sort (cluster) columns of the rewrite, one string separated by commas. " +
          "Defaults to the recipe's cluster columns. Names are checked for shape here; the agent refuses names the table lacks. " +
          "Each rewritten bin is sorted by them, unless the agent measures the sort too costly for the bin; the job's " +
          "metrics then say so and why (`notes`, `settings.reason`).",
        example: "customer_id,region",
      }),
    layout: LayoutBody.optional(),
    priority: z
      .enum(PRIORITIES)
      .optional()
      .openapi({ description: "P1 jobs are handed to agents first; defaults to the table's priority." }),
  })
  .superRefine((body, ctx) => {
    const given = (fields: readonly (typeof MODE_FIELDS)[number][]) =>
      fields.filter((f) => body[f] !== undefined);
    const modes = [
      { mode: "lookback", fields: LOOKBACK_FIELDS, given: given(LOOKBACK_FIELDS) },
      { mode: "backfill", fields: BACKFILL_FIELDS, given: given(BACKFILL_FIELDS) },
      { mode: "whole-table", fields: WHOLE_TABLE_FIELDS, given: given(WHOLE_TABLE_FIELDS) },
    ].filter((m) => m.given.length > 0);
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (modes.length > 1) {
      for (const field of modes.flatMap((m) => m.given))
        issue(
          field,
          `${modes.map((m) => m.mode).join(" mode and ")} mode are exclusive: send the fields of one of them`,
        );
      return;
    }
    const [chosen] = modes;
    if (!chosen) {
      for (const field of MODE_FIELDS)
        issue(
          field,
          "choose a mode: lookback_start and lookback_end, backfill_start_date and backfill_end_date, or whole_table: true",
        );
      return;
    }
    for (const field of chosen.fields)
      if (body[field] === undefined) issue(field, `required in ${chosen.mode} mode`);
    if (chosen.mode === "lookback" && body.cluster_columns !== undefined)
      issue(
        "cluster_columns",
        "only in backfill or whole-table mode; lookback crunches use the recipe's cluster columns",
      );
    const { lookback_start: start, lookback_end: end } = body;
    if (start !== undefined && end !== undefined && start < end)
      issue(
        "lookback_start",
        `must be at least lookback_end (${start} < ${end}); for T-15..T-2 send 15 and 2`,
      );
    const { backfill_start_date, backfill_end_date } = body;
    for (const problem of rangeIssues({ backfill_start_date, backfill_end_date }))
      issue(problem.path, problem.message);
    if (body.cluster_columns !== undefined)
      for (const problem of clusterColumnNames(body.cluster_columns).problems)
        issue("cluster_columns", problem);
    if (body.cluster_columns !== undefined && body.layout !== undefined)
      issue(
        "layout",
        "send layout or cluster_columns, not both: a linear layout sorts as cluster_columns do",
      );
  })
  .openapi("CrunchTrigger", {
    description:
      "Exactly one mode: lookback `{lookback_start, lookback_end, priority?}`, backfill " +
      "`{backfill_start_date, backfill_end_date, cluster_columns?, priority?}`, or whole table `{whole_table: true, cluster_columns?, priority?}`. " +
      "Fields of two modes, or of none, are a 422 naming each field. Any mode takes `layout` (a linear sort or a Z-order " +
      "over 2-4 columns) instead of `cluster_columns`.",
  });
export type CrunchTrigger = z.infer<typeof CrunchTriggerSchema>;

export const SkipRecipeCheckQuery = z.object({
  skip_recipe_check: z
    .enum(["true", "false"])
    .default("false")
    .openapi({
      param: { name: "skip_recipe_check", in: "query" },
      description:
        "Boolean, default false. true skips the check that onboarding is active and produced the table's recipe; the crunch then runs without one.",
    }),
});

const JobTypeFilter = z.enum(CRUNCH_KINDS).optional().openapi({
  description: "crunch or optimize: what the job ran as (a crunch routed to optimize counts as optimize).",
});
const StatusFilter = z.enum(JOB_STATUSES).optional().openapi({ description: "Only jobs in this status." });

export const CRUNCH_PAGE_MAX = 1000;

export const TableCrunchQuery = pageQuery(100, CRUNCH_PAGE_MAX).extend({
  status: StatusFilter,
  job_type: JobTypeFilter,
});

export const CrunchQuery = TableCrunchQuery.extend({
  table_id: z.string().min(1).max(64).optional().openapi({ description: "Only jobs of this table." }),
});

export const CRUNCH_STATUS_DESCRIPTION =
  "The job's status. queued (waiting for an agent) → offered (to one agent, awaiting its ack) → running → " +
  "succeeded, failed or cancelled. A failed attempt with attempts left goes back to queued. " +
  "After POST /api/v1/crunch/{crunch_id}/cancel a queued job is cancelled at once; a running one is cancelling " +
  "until its agent confirms (it never commits) or its lease lapses, then cancelled.";

const SummarySchema = z
  .object({
    drr: z.number().openapi({ description: "Data reduction rate: percent of the rewritten bytes saved." }),
    bytes_before: z.number(),
    bytes_after: z.number(),
    files_before: z.number().int(),
    files_after: z.number().int(),
    committed_version: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The table version the crunch committed; null when there was nothing to do." }),
  })
  .openapi("CrunchSummary");

export const CrunchJobSchema = z
  .object({
    id: z.string().openapi({ description: "The crunch id (a job id; see also GET /api/v1/jobs/{job_id})." }),
    table_id: z.string().nullable(),
    job_type: z.enum(CRUNCH_KINDS).openapi({
      description:
        "What the job runs as: crunch (re-sort and recompress) or optimize (bin-packing only). A crunch that the " +
        "agent routed to optimize (the table had a recent commit; mutation interval setting) reports optimize once it ends.",
    }),
    requested_job_type: z.enum(CRUNCH_KINDS).openapi({ description: "What was queued." }),
    status: z.enum(JOB_STATUSES).openapi({ description: CRUNCH_STATUS_DESCRIPTION }),
    trigger: z.string().openapi({
      description:
        "manual (POST /api/v1/tables/{table_id}/crunch) or schedule (the table's crunch schedule).",
    }),
    schedule_id: z.string().nullable(),
    priority: z.enum(PRIORITIES),
    date_range: z
      .object({ start: z.string(), end: z.string() })
      .nullable()
      .openapi({ description: "Inclusive partition dates, YYYY-MM-DD; null for the whole table." }),
    backfill_col: z.string().nullable(),
    partition: z.string().nullable().openapi({
      description:
        "The one partition this job works on when its crunch fanned out (`col=YYYY-MM-DD`, or `col=YYYY-MM-DD/hour=HH` for an hourly job); null for a job over its whole range or table.",
      example: "event_date=2026-01-02",
    }),
    cluster_columns: z.array(z.string()).openapi({ description: "Sort columns of the rewrite." }),
    layout: z
      .object({ type: z.enum(["linear", "zorder"]), columns: z.array(z.string()) })
      .nullable()
      .openapi({
        description:
          "The layout the trigger named, which the rewrite applies instead of cluster_columns; null when none.",
      }),
    target_file_size_mb: z.number().int().nullable(),
    attempt: z.number().int(),
    agent_id: z.string().nullable(),
    error: z.string().nullable(),
    summary: SummarySchema.nullable().openapi({
      description: "The result's headline numbers once it is known.",
    }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("CrunchJob");
export type CrunchJobWire = z.infer<typeof CrunchJobSchema>;

/** A trigger's answer: its first job's fields, as before fan-out, and every job it queued. */
export const CrunchTriggerResponseSchema = CrunchJobSchema.extend({
  jobs: z.array(CrunchJobSchema).openapi({
    description:
      "Every job the trigger queued, in partition order: one per partition when the crunch fanned out, else the one job. The fields beside `jobs` are its first job's.",
  }),
}).openapi("CrunchTriggerResponse");

export const CrunchMetricsSchema = z
  .object({
    job: CrunchJobSchema,
    progress: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        "The agent's latest progress report while the job is queued, running or cancelling; null once it ends.",
    }),
    metrics: z
      .object({
        job_type: z.enum(CRUNCH_KINDS),
        job_type_reason: z.string().nullable(),
        notes: z.array(z.string()).openapi({
          description:
            "What the job wants its reader to know beyond the figures: that no file fell in the requested date range " +
            "(naming the range), or that the cluster columns were not applied and why.",
        }),
        drr: z.number(),
        bytes_before: z.number(),
        bytes_after: z.number(),
        bytes_saved: z.number(),
        files_before: z.number().int(),
        files_after: z.number().int(),
        rows_in: z.number(),
        rows_out: z.number(),
        partitions_crunched: z.number().int(),
        partitions_skipped: z.number().int(),
        partitions: z.array(CrunchPartitionSchema),
        settings: CrunchSettingsSchema.nullable().openapi({
          description: "The rewrite settings chosen, with the reason and the trials behind them.",
        }),
        duration_ms: z.number(),
        table_version_before: z.number().int(),
        committed_version: z.number().int().nullable(),
        validation: z.object({
          rows_match: z.boolean().openapi({ description: "rows_out equals rows_in." }),
        }),
      })
      .nullable()
      .openapi({ description: "Null until the agent reports a result; `metrics_note` says why." }),
    metrics_note: z.string().nullable(),
  })
  .openapi("CrunchMetrics");
export type CrunchMetricsWire = z.infer<typeof CrunchMetricsSchema>;
