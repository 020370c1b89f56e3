/**
 * Wire shapes of document 2's table actions and runs: the action request (one variant per action,
 * its parameters beside `action`), the supported-actions list, and the action and run views, both
 * over the job they name.
 */
import { z } from "@hono/zod-openapi";
import { TableIdParam } from "../catalogs/schemas.ts";
import { CrunchTriggerSchema } from "../crunch/schemas.ts";
import { keysetQuery } from "../http/pagination.ts";
import { JobSchema } from "../jobs/view.ts";
import { ACTIONS, type Action } from "../policies/actions.ts";
import { RUN_STATUSES, RUN_TRIGGERS, STATUS_DESCRIPTION, TRIGGER_DESCRIPTION } from "./status.ts";

export const ACTIONS_PAGE = { default: 50, max: 500 } as const;
export const RUNS_PAGE = { default: 50, max: 500 } as const;
/** How far ahead an action may be scheduled. */
export const MAX_SCHEDULE_DAYS = 366;

const ScheduleSchema = z
  .strictObject({
    at: z.iso.datetime({ offset: true }).openapi({
      description: `Run once, not before this time (ISO 8601, at most ${MAX_SCHEDULE_DAYS} days ahead; a past time runs now).`,
      example: "2026-06-01T02:00:00Z",
    }),
  })
  .openapi("ActionSchedule", { description: "Absent: run now." });

const common = { schedule: ScheduleSchema.optional() };

/** The crunch trigger's layout (document 1's extension): the same rules, stated once. */
const ActionLayoutSchema = CrunchTriggerSchema.shape.layout.unwrap();

/** Each action's parameters, stated once: the request's fields and `GET .../actions` read them. */
export const PARAMETERS = {
  compress: [],
  compact: [],
  improve_layout: [
    {
      name: "layout",
      type: "object",
      required: true,
      description: "The layout: `{type: linear|zorder, columns: [...]}`.",
    },
  ],
  expire_snapshots: [
    {
      name: "retention_hours",
      type: "number",
      required: false,
      description:
        "Snapshots and removed files younger than this are kept. Absent: the table's own retention (Delta 168 h, Iceberg 120 h by default). Below the format's default it needs `shorten_retention: true` (a 422 naming `retention_hours` otherwise).",
    },
    {
      name: "shorten_retention",
      type: "boolean",
      required: false,
      description:
        "Allow `retention_hours` below the format's default retention, and below the table's own where that is longer; the run's result records it. Without it, a table whose own retention is longer keeps its own.",
    },
    {
      name: "dry_run",
      type: "boolean",
      required: false,
      description: "true: the agent reports the files it would propose and no pending deletion is recorded.",
    },
  ],
  expire_partitions: [
    {
      name: "retention_days",
      type: "integer",
      required: false,
      description:
        "Date partitions older than this many days expire. Absent: the `default_partition_expiration_days` setting.",
    },
    {
      name: "partition_column",
      type: "string",
      required: false,
      description:
        "The date partition column. Absent: the recipe's date filter column; required while the table's onboarding has not found one.",
    },
    {
      name: "dry_run",
      type: "boolean",
      required: false,
      description: "true: the agent reports what would expire and commits nothing.",
    },
  ],
} as const satisfies Record<Action, readonly ParameterDoc[]>;

interface ParameterDoc {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The description of `action`'s parameter `name`. */
function doc(action: keyof typeof PARAMETERS, name: string): { description: string } {
  const found = (PARAMETERS[action] as readonly ParameterDoc[]).find((p) => p.name === name);
  if (!found) throw new Error(`no parameter ${name} of ${action}`);
  return { description: found.description };
}

export const ActionRequestSchema = z
  .discriminatedUnion("action", [
    z.strictObject({ action: z.literal("compress"), ...common }).openapi("CompressAction", {
      description:
        "Rewrite the whole table with the codec and encodings the agent's trials find smallest (a crunch job).",
    }),
    z.strictObject({ action: z.literal("compact"), ...common }).openapi("CompactAction", {
      description: "Merge small files up to the table's target size, without re-sorting (an optimize job).",
    }),
    z
      .strictObject({ action: z.literal("improve_layout"), layout: ActionLayoutSchema, ...common })
      .openapi("ImproveLayoutAction", {
        description: "Rewrite the whole table in this layout (a crunch job).",
      }),
    z
      .strictObject({
        action: z.literal("expire_snapshots"),
        retention_hours: z
          .number()
          .min(0)
          .max(87_600)
          .optional()
          .openapi(doc("expire_snapshots", "retention_hours")),
        shorten_retention: z.boolean().default(false).openapi(doc("expire_snapshots", "shorten_retention")),
        dry_run: z.boolean().default(false).openapi(doc("expire_snapshots", "dry_run")),
        ...common,
      })
      .openapi("ExpireSnapshotsAction", {
        description:
          "Expire old snapshots and vacuum (a vacuum job): the files no kept snapshot needs become pending deletions.",
      }),
    z
      .strictObject({
        action: z.literal("expire_partitions"),
        retention_days: z
          .number()
          .int()
          .min(1)
          .max(36_500)
          .optional()
          .openapi(doc("expire_partitions", "retention_days")),
        partition_column: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .openapi(doc("expire_partitions", "partition_column")),
        dry_run: z.boolean().default(false).openapi(doc("expire_partitions", "dry_run")),
        ...common,
      })
      .openapi("ExpirePartitionsAction", {
        description:
          "Remove old date partitions from a partitioned Delta table (a partition_expiration job).",
      }),
  ])
  .openapi("ActionRequest");
export type ActionRequest = z.infer<typeof ActionRequestSchema>;

const ParameterSchema = z
  .object({
    name: z.string(),
    type: z.string().openapi({ description: "JSON type: number, integer, boolean, string or object." }),
    required: z.boolean(),
    default: z.unknown().openapi({ description: "The value used when it is absent (null: none)." }),
    description: z.string(),
  })
  .openapi("ActionParameter");

export const SupportedActionSchema = z
  .object({
    action: z.enum(ACTIONS),
    job_kind: z.string().openapi({ description: "The document-1 job kind the action runs as." }),
    destructive: z.boolean().openapi({ description: "Files leave the table (as pending deletions)." }),
    parameters: z.array(ParameterSchema),
  })
  .openapi("SupportedAction");

export const ActionSchema = z
  .object({
    action_id: z
      .string()
      .openapi({ description: "The job's id (`GET /api/v1/jobs/{job_id}` shows the same job)." }),
    action: z.enum(ACTIONS),
    status: z.enum(RUN_STATUSES).openapi({ description: STATUS_DESCRIPTION }),
    not_before: z.string().nullable().openapi({
      description:
        "When a SCHEDULED action may start (`schedule.at`); null once it may start, or while it waits for the table's onboarding.",
    }),
    waiting_for_onboarding: z.boolean().openapi({
      description:
        "Held until the Lakesmith table's onboarding succeeds (then released; cancelled with the reason if onboarding fails).",
    }),
    lakesmith_table_id: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    error: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        "The job's result summary as its kind reports it (crunch metrics, vacuum plan, expired partitions); null until it ends.",
    }),
  })
  .openapi("TableAction");

export const ActionDetailSchema = ActionSchema.extend({ job: JobSchema }).openapi("TableActionDetail");

export const ActionListSchema = z
  .object({
    supported: z.array(SupportedActionSchema).openapi({ description: "The actions this table supports." }),
    unsupported: z
      .array(z.object({ action: z.enum(ACTIONS), reason: z.string() }))
      .openapi({ description: "The other actions, each with why this table can't take it." }),
    items: z.array(ActionSchema).openapi({ description: "Actions triggered on this table, newest first." }),
    total: z.number().int(),
    page_size: z.number().int(),
    next_page_token: z.string().nullable(),
  })
  .openapi("TableActions");

export const RunSchema = z
  .object({
    run_id: z.string().openapi({ description: "The job's id." }),
    kind: z.string().openapi({
      description: "The job kind: crunch, optimize, vacuum, partition_expiration, onboarding, ...",
    }),
    action: z
      .enum(ACTIONS)
      .nullable()
      .openapi({ description: "The action the run carried out; null for kinds no action runs as." }),
    trigger: z.enum(RUN_TRIGGERS).openapi({ description: TRIGGER_DESCRIPTION }),
    job_trigger: z
      .string()
      .openapi({ description: "The job's own trigger: policy, schedule, action, manual, ..." }),
    status: z.enum(RUN_STATUSES).openapi({ description: STATUS_DESCRIPTION }),
    lakesmith_table_id: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    error: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("TableRun");

export const RunDetailSchema = RunSchema.extend({ job: JobSchema }).openapi("TableRunDetail");

export const ActionsQuery = keysetQuery(ACTIONS_PAGE.default, ACTIONS_PAGE.max);

export const RunsQuery = keysetQuery(RUNS_PAGE.default, RUNS_PAGE.max).extend({
  start: z.iso.datetime({ offset: true }).optional().openapi({
    description: "Only runs created at or after this time (ISO 8601).",
  }),
  end: z.iso.datetime({ offset: true }).optional().openapi({
    description: "Only runs created before this time (ISO 8601).",
  }),
  status: z.enum(RUN_STATUSES).optional().openapi({ description: STATUS_DESCRIPTION }),
  trigger: z.enum(RUN_TRIGGERS).optional().openapi({ description: TRIGGER_DESCRIPTION }),
});
export type RunsFilter = z.infer<typeof RunsQuery>;

export const ActionParams = TableIdParam.extend({
  action_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "action_id", in: "path" } }),
});
export const RunParams = TableIdParam.extend({
  run_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "run_id", in: "path" } }),
});
