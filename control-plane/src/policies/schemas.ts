/**
 * Wire shapes of document 2's policies: what a policy says (`PolicyBody`: its actions, their
 * parameters and schedules) and the policy record around it. Only named actions run: an action
 * absent from `actions` never runs, and nothing destructive has a default that turns it on.
 */
import { z } from "@hono/zod-openapi";
import { ACTIONS } from "./actions.ts";

export const WEEKDAYS = [
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Default schedule of a policy that names none: every day at 02:00 UTC. */
export const DEFAULT_SCHEDULE = { frequency: "daily", time_utc: "02:00" } as const;

export const ScheduleSchema = z
  .object({
    frequency: z.enum(["daily", "weekly"]).openapi({ description: "How often the action runs." }),
    time_utc: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "a time as HH:MM (UTC, 00:00-23:59)")
      .openapi({ description: "When it runs, HH:MM in UTC.", example: "02:00" }),
    day_of_week: z.enum(WEEKDAYS).optional().openapi({
      description: "The day a weekly action runs; required with `weekly`, refused with `daily`.",
    }),
  })
  .superRefine((s, ctx) => {
    if (s.frequency === "weekly" && !s.day_of_week)
      ctx.addIssue({ code: "custom", path: ["day_of_week"], message: "required with frequency weekly" });
    if (s.frequency === "daily" && s.day_of_week)
      ctx.addIssue({ code: "custom", path: ["day_of_week"], message: "only with frequency weekly" });
  })
  .openapi("PolicySchedule");
export type Schedule = z.infer<typeof ScheduleSchema>;

const scheduled = {
  schedule: ScheduleSchema.optional().openapi({
    description: "When this action runs; absent: the policy's `schedule`.",
  }),
};

export const LayoutSchema = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("linear"),
      columns: z.array(z.string().min(1).max(255)).min(1).max(8),
    }),
    z.object({
      type: z.literal("zorder"),
      columns: z.array(z.string().min(1).max(255)).min(2).max(4),
    }),
  ])
  .superRefine((l, ctx) => {
    if (new Set(l.columns).size !== l.columns.length)
      ctx.addIssue({ code: "custom", path: ["columns"], message: "columns must be distinct" });
  })
  .openapi("Layout", {
    description:
      "`linear`: rows sorted by the columns in order (1-8). `zorder`: rows ordered by the interleaved bits of order-preserving keys of 2-4 columns, so a filter on any of them skips files.",
  });
export type Layout = z.infer<typeof LayoutSchema>;

export const PolicyActionsSchema = z
  .object({
    compress: z.object(scheduled).strict().optional().openapi({
      description: "Rewrite files with the codec and encodings the agent's trials find smallest.",
    }),
    compact: z
      .object(scheduled)
      .strict()
      .optional()
      .openapi({ description: "Merge small files up to the target size, without re-sorting." }),
    improve_layout: z
      .object({ layout: LayoutSchema, ...scheduled })
      .strict()
      .optional()
      .openapi({ description: "Rewrite files in this layout (a linear sort or a Z-order)." }),
    expire_snapshots: z
      .object({
        retention_hours: z.number().min(0).max(87_600).optional().openapi({
          description:
            "Snapshots and removed files younger than this are kept. Absent: the table's own retention (Delta's `delta.deletedFileRetentionDuration`, 7 days by default; Iceberg's `history.expire.max-snapshot-age-ms`, 5 days by default). A value below a table's own retention applies to that table only with `shorten_retention: true`; without it, that table keeps its own.",
        }),
        shorten_retention: z.boolean().default(false).openapi({
          description: "Allow `retention_hours` to go below a table's own retention. Recorded on each run.",
        }),
        ...scheduled,
      })
      .strict()
      .optional()
      .openapi({
        description:
          "Expire old snapshots and vacuum: the files no kept snapshot needs become pending deletions (deleted after the grace period).",
      }),
    expire_partitions: z
      .object({
        retention_days: z.number().int().min(1).max(36_500).optional().openapi({
          description:
            "Date partitions older than this many days are removed from the table (their files become pending deletions). Absent: the `default_partition_expiration_days` setting (30 by default) when the run is queued.",
        }),
        ...scheduled,
      })
      .strict()
      .optional()
      .openapi({ description: "Expire old date partitions. Runs only when named here." }),
  })
  .strict()
  .refine((a) => Object.keys(a).length > 0, "name at least one action")
  .openapi("PolicyActions", {
    description: `The actions the policy runs, by name (${ACTIONS.join(", ")}). An action not named never runs.`,
  });
export type PolicyActions = z.infer<typeof PolicyActionsSchema>;

export const PolicyBodySchema = z
  .object({
    name: z.string().min(1).max(100).optional().openapi({ description: "A label for people." }),
    enabled: z.boolean().default(true).openapi({
      description:
        "A disabled policy keeps its tables managed and runs nothing; it is not anyone's effective policy.",
    }),
    actions: PolicyActionsSchema,
    schedule: ScheduleSchema.optional().openapi({
      description: "The default schedule of the policy's actions; absent: daily at 02:00 UTC.",
    }),
    target_file_size_mb: z.number().int().min(16).max(2048).optional().openapi({
      description: "The file size rewrites aim for; absent: the Lakesmith table's own (512 MB by default).",
    }),
    lookback_days: z.number().int().min(1).max(365).default(7).openapi({
      description:
        "Rewrites of a table partitioned by date cover the partitions of the last this-many days before the run's date (each day its own job); an unpartitioned table is rewritten whole (files already in shape are skipped).",
    }),
  })
  .strict()
  .openapi("PolicyBody");
export type PolicyBody = z.infer<typeof PolicyBodySchema>;
