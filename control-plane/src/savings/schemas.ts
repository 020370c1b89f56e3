/**
 * Wire shapes of savings and metrics: one savings summary (per table, per catalog or of every
 * table) and a daily metrics series over a date range. The formulas live in `formulas.ts`; the
 * descriptions here state them for API readers.
 */
import { z } from "@hono/zod-openapi";
import { IsoDateSchema } from "@lakesmith/shared/jobs";

/** The longest metrics range, in days (both ends counted). */
export const MAX_RANGE_DAYS = 366;
/** The range when none is asked: the last 30 UTC days, today included. */
export const DEFAULT_RANGE_DAYS = 30;

export const SAVED_BYTES =
  "Bytes saved = max(0, `bytes_before` - `bytes_after`), where both are summed over every committed rewrite (a crunch or optimize job that succeeded and committed): `bytes_before` is the size of the files a rewrite replaced, `bytes_after` of the files it wrote. A later rewrite of the same data counts again from its own before (the previous rewrite's after), so the sum is the reduction of the table's footprint by Lakesmith's rewrites since they began, not the bytes stored now: files written or deleted by others are not in it.";
const SCOPE =
  "`all`: every table, including tables deleted since (their figures stay in the sum); `table`: one Lakesmith table; `catalog`: the jobs of Lakesmith tables linked to a synced table of the catalog (onboarded through its catalog connection; the synced table's own `catalog` names it), counted for the catalog when each job ended.";

const bytes = (description: string) => z.number().openapi({ description });
const count = (description: string) => z.number().int().openapi({ description });

export const SavingsSchema = z
  .object({
    scope: z.enum(["all", "table", "catalog"]).openapi({ description: SCOPE }),
    table_id: z.string().nullable().openapi({ description: "The table, for scope `table`; else null." }),
    catalog_id: z
      .string()
      .nullable()
      .openapi({ description: "The catalog, for scope `catalog`; else null." }),
    rewrites: count("Committed rewrites (crunch and optimize jobs) counted."),
    bytes_before: bytes("Bytes of the files the rewrites replaced."),
    bytes_after: bytes("Bytes of the files the rewrites wrote in their place."),
    bytes_saved: bytes(SAVED_BYTES),
    files_before: count("Files the rewrites replaced."),
    files_after: count("Files the rewrites wrote."),
    drr_percent: z
      .number()
      .nullable()
      .openapi({ description: "100 x (1 - bytes_after / bytes_before); null when nothing was rewritten." }),
    storage: z
      .object({
        usd_per_gb_month: z.number().openapi({ description: "Setting `storage_cost_usd_per_gb_month`." }),
        cloud_discount_percent: z.number().openapi({ description: "Setting `cloud_discount_percent`." }),
        effective_usd_per_gb_month: z
          .number()
          .openapi({ description: "usd_per_gb_month x (1 - cloud_discount_percent / 100)." }),
        saved_usd_per_month: z
          .number()
          .openapi({ description: "bytes_saved / 2^30 (GB) x effective_usd_per_gb_month." }),
        projection_period_months: z
          .number()
          .int()
          .nullable()
          .openapi({ description: "Setting `projection_period_months`; null when unset." }),
        projected_usd: z.number().nullable().openapi({
          description: "saved_usd_per_month x projection_period_months; null when the period is unset.",
        }),
      })
      .openapi({ description: "What the saved bytes are worth in storage, at the current settings." }),
    goal: z
      .object({
        quarterly_goal_pb: z
          .number()
          .openapi({ description: "Setting `quarterly_goal_pb` (PB of 2^50 bytes)." }),
        quarter: z
          .string()
          .openapi({ description: "The current UTC quarter, `YYYY-Qn`.", example: "2026-Q4" }),
        start: z.string().openapi({ description: "Its first UTC day.", example: "2026-10-01" }),
        end: z.string().openapi({ description: "Its last UTC day.", example: "2026-12-31" }),
        bytes_saved: bytes("Bytes saved (as `bytes_saved`) by the rewrites that finished in the quarter."),
        progress_percent: z.number().openapi({
          description: "100 x bytes_saved / (quarterly_goal_pb x 2^50); above 100 past the goal.",
        }),
      })
      .nullable()
      .openapi({
        description: "Progress toward the quarterly goal; null while `quarterly_goal_pb` is 0 (hidden).",
      }),
    operational_cost: z
      .object({
        usd_per_pb: z
          .number()
          .nullable()
          .openapi({ description: "Setting `operational_cost_usd_per_pb`; null when unset." }),
        bytes_processed: bytes(
          "Bytes the rewrites processed: the bytes they read and replaced (`bytes_before`).",
        ),
        estimate_usd: z.number().nullable().openapi({
          description: "usd_per_pb x bytes_processed / 2^50 (PB): a heuristic; null when the rate is unset.",
        }),
      })
      .openapi({ description: "The estimated cost of the processing that bought the savings." }),
    deletions: z
      .object({
        partitions_deleted: count("Partitions removed from tables by committed partition expirations."),
        files_deleted: count("Files hard deletes removed from storage (reported `deleted` by the agent)."),
        bytes_deleted: bytes("Their bytes, as recorded when they became pending deletions."),
      })
      .openapi({ description: "What was deleted for good. Not part of `bytes_saved`." }),
  })
  .openapi("Savings");
export type SavingsWire = z.infer<typeof SavingsSchema>;

const MetricsFields = {
  bytes_crunched: bytes("Bytes of the files committed rewrites replaced that day (their `bytes_before`)."),
  bytes_after: bytes("Bytes of the files those rewrites wrote."),
  bytes_saved: bytes("max(0, bytes_crunched - bytes_after)."),
  partitions_crunched: count("Partitions those rewrites crunched."),
  files_reduced: count("Files replaced minus files written; negative when a rewrite split files."),
  drr_percent: z
    .number()
    .nullable()
    .openapi({ description: "100 x (1 - bytes_after / bytes_crunched); null when nothing was crunched." }),
  partitions_deleted: count("Partitions removed by committed partition expirations."),
  files_deleted: count("Files hard deletes removed from storage."),
  bytes_deleted: bytes("Their bytes."),
};

export const MetricsDaySchema = z
  .object({ date: z.string().openapi({ example: "2026-11-26" }), ...MetricsFields })
  .openapi("MetricsDay");
export type MetricsDayWire = z.infer<typeof MetricsDaySchema>;

export const MetricsSchema = z
  .object({
    scope: z.enum(["all", "table", "catalog"]).openapi({ description: SCOPE }),
    table_id: z.string().nullable(),
    catalog_id: z.string().nullable(),
    start: z.string(),
    end: z.string(),
    days: z.array(MetricsDaySchema).openapi({
      description:
        "Every UTC day from `start` to `end`, oldest first, zeros where nothing happened. A job counts on the UTC day it finished.",
    }),
    totals: z.object(MetricsFields).openapi({ description: "The same figures over the whole range." }),
  })
  .openapi("Metrics");
export type MetricsWire = z.infer<typeof MetricsSchema>;

export const MetricsQuery = z.object({
  start: IsoDateSchema.optional().openapi({
    description: `First UTC day, \`YYYY-MM-DD\`. Default: ${DEFAULT_RANGE_DAYS - 1} days before \`end\`.`,
    example: "2026-11-01",
  }),
  end: IsoDateSchema.optional().openapi({
    description: `Last UTC day, \`YYYY-MM-DD\`, included. Default: today (UTC). At most ${MAX_RANGE_DAYS} days from \`start\`, both counted; \`start\` after \`end\` or a longer range is a 422.`,
    example: "2026-11-30",
  }),
});
export type MetricsRange = z.infer<typeof MetricsQuery>;
