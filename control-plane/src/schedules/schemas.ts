/**
 * Wire shapes of schedules (document 1, "Schedule"). A daily schedule carries `lookback_start`,
 * `lookback_end` and `run_time_utc`; a backfill schedule carries `backfill_col`,
 * `backfill_start_date` and `backfill_end_date`. A field of the other type is a 422 naming it, not
 * something silently ignored.
 */
import { z } from "@hono/zod-openapi";
import { IsoDateSchema } from "@lakesmith/shared/jobs";
import { SCHEDULE_JOB_TYPES, SCHEDULE_TYPES, type Schedule } from "../db/schema.ts";

export const RUN_TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;

export const RunTimeSchema = z
  .string()
  .regex(RUN_TIME_PATTERN, "a UTC time as HH:MM, 24-hour (00:00 to 23:59)")
  .openapi({ example: "02:30" });

export const JobTypeSchema = z.enum(SCHEDULE_JOB_TYPES).openapi({
  description: "Which job the schedule fires: crunch, vacuum or partition_expiration.",
});

/** `job_type` as a query parameter; crunch when omitted. */
export const JobTypeQuery = z.object({
  job_type: JobTypeSchema.default("crunch").openapi({
    param: { name: "job_type", in: "query" },
    description: "crunch (default), vacuum or partition_expiration.",
  }),
});

const LOOKBACK = z.number().int().min(0).max(3650);
/**
 * An optional calendar date. Built by wrapping the shared schema: that instance may predate the
 * OpenAPI extension of zod (import order), so `.openapi` is only called on wrappers made here.
 */
const optionalDate = (description: string) =>
  IsoDateSchema.optional().openapi({ description, example: "2026-01-31" });
const COLUMN = z.string().trim().min(1).max(255).openapi({ example: "event_date" });

export const DAILY_FIELDS = ["lookback_start", "lookback_end", "run_time_utc"] as const;
export const BACKFILL_FIELDS = ["backfill_col", "backfill_start_date", "backfill_end_date"] as const;

export const ScheduleSchema = z
  .object({
    id: z.string(),
    table_id: z.string(),
    job_type: JobTypeSchema,
    schedule_type: z.enum(SCHEDULE_TYPES),
    lookback_start: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Days back from the run's date where the range starts (15 means T-15)." }),
    lookback_end: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Days back where the range ends (2 means T-2)." }),
    run_time_utc: z.string().nullable().openapi({ description: "HH:MM, UTC; daily schedules only." }),
    backfill_col: z.string().nullable(),
    backfill_start_date: z.string().nullable(),
    backfill_end_date: z.string().nullable(),
    enabled: z.boolean(),
    next_run_at: z.string().nullable().openapi({
      description:
        "When the scheduler fires it next; null for a backfill that has fired (it fires again only if its range changes).",
    }),
    last_slot: z.string().nullable().openapi({
      description:
        "The slot it last fired: the run's UTC date for daily schedules, `backfill:<col>:<start>..<end>` for backfill.",
    }),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  })
  .openapi("Schedule");
export type ScheduleWire = z.infer<typeof ScheduleSchema>;

export const ScheduleCreateSchema = z
  .strictObject({
    schedule_type: z.enum(SCHEDULE_TYPES).openapi({ description: "daily or backfill." }),
    job_type: JobTypeSchema.optional().openapi({
      description:
        "May be given here or as the `job_type` query parameter (crunch when both are omitted); if both are given they must agree.",
    }),
    lookback_start: LOOKBACK.optional().openapi({
      description: "Daily: days back where the range starts; must be greater than lookback_end.",
      example: 15,
    }),
    lookback_end: LOOKBACK.optional().openapi({
      description: "Daily: days back where the range ends.",
      example: 2,
    }),
    run_time_utc: RunTimeSchema.optional().openapi({ description: "Daily: HH:MM, 24-hour, UTC." }),
    backfill_col: COLUMN.optional().openapi({ description: "Backfill: the partition column of the range." }),
    backfill_start_date: optionalDate("Backfill: YYYY-MM-DD, not after the end."),
    backfill_end_date: optionalDate("Backfill: YYYY-MM-DD."),
    enabled: z.boolean().default(true),
  })
  .superRefine((body, ctx) => {
    const [needed, foreign] =
      body.schedule_type === "daily" ? [DAILY_FIELDS, BACKFILL_FIELDS] : [BACKFILL_FIELDS, DAILY_FIELDS];
    for (const field of needed)
      if (body[field] === undefined)
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `required for a ${body.schedule_type} schedule`,
        });
    for (const field of foreign)
      if (body[field] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `not allowed on a ${body.schedule_type} schedule`,
        });
    for (const issue of rangeIssues(body))
      ctx.addIssue({ code: "custom", path: [issue.path], message: issue.message });
  })
  .openapi("ScheduleCreate");
export type ScheduleCreate = z.infer<typeof ScheduleCreateSchema>;

export const ScheduleUpdateSchema = z
  .strictObject({
    lookback_start: LOOKBACK.optional(),
    lookback_end: LOOKBACK.optional(),
    run_time_utc: RunTimeSchema.optional(),
    enabled: z.boolean().optional(),
    backfill_col: COLUMN.optional(),
    backfill_start_date: optionalDate("Backfill: YYYY-MM-DD, not after the end."),
    backfill_end_date: optionalDate("Backfill: YYYY-MM-DD."),
  })
  .refine((body) => Object.keys(body).length > 0, { message: "nothing to update: give at least one field" })
  .openapi("ScheduleUpdate", {
    description:
      "Any subset. Daily schedules take lookback_start, lookback_end, run_time_utc and enabled; backfill schedules take backfill_col, backfill_start_date, backfill_end_date and enabled. A field of the other type is refused with 422.",
  });
export type ScheduleUpdate = z.infer<typeof ScheduleUpdateSchema>;

type RangeFields = {
  lookback_start?: number | null | undefined;
  lookback_end?: number | null | undefined;
  backfill_start_date?: string | null | undefined;
  backfill_end_date?: string | null | undefined;
};

/** The order rules of both ranges, for a body or for a schedule merged with an update. */
export function rangeIssues(body: RangeFields): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const { lookback_start: start, lookback_end: end } = body;
  if (start != null && end != null && start <= end)
    issues.push({
      path: "lookback_start",
      message: `must be further back than lookback_end (${start} <= ${end}); for T-15..T-2 send 15 and 2`,
    });
  const { backfill_start_date: from, backfill_end_date: to } = body;
  if (from != null && to != null && from > to)
    issues.push({
      path: "backfill_start_date",
      message: `must not be after backfill_end_date (${from} > ${to})`,
    });
  return issues;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function scheduleToWire(s: Schedule): ScheduleWire {
  return {
    id: s.id,
    table_id: s.tableId,
    job_type: s.jobType,
    schedule_type: s.scheduleType,
    lookback_start: s.lookbackStart,
    lookback_end: s.lookbackEnd,
    run_time_utc: s.runTimeUtc,
    backfill_col: s.backfillCol,
    backfill_start_date: s.backfillStartDate,
    backfill_end_date: s.backfillEndDate,
    enabled: s.enabled,
    next_run_at: iso(s.nextRunAt),
    last_slot: s.lastSlot,
    created_at: s.createdAt.toISOString(),
    updated_at: iso(s.updatedAt),
  };
}
