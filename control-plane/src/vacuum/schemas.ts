/**
 * Wire shapes of vacuum (document 1, "Vacuum job"): the trigger, the job as the API shows it, and
 * the hard-delete call's query and answer.
 */
import { z } from "@hono/zod-openapi";
import { VACUUM_MODES } from "@lakesmith/shared/maintenance";
import { JOB_STATUSES, PRIORITIES } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";
import { PendingDeletionSchema } from "../pending-deletions/schemas.ts";

export const VACUUM_PAGE_MAX = 1000;
/** Hard-delete records per call: document 1, section 8. */
export const HARD_DELETE_DEFAULT_LIMIT = 500;
export const HARD_DELETE_MAX_LIMIT = 5000;

export const VacuumTriggerSchema = z
  .strictObject({
    retention_hours: z
      .number()
      .min(0)
      .max(87_600)
      .optional()
      .openapi({
        description:
          "Delta: tombstones younger than this are kept; absent, the table's own `delta.deletedFileRetentionDuration` (7 days by default). " +
          "Iceberg: snapshots younger than this are kept (and each branch's `min-snapshots-to-keep`, never a branch or tag head); absent, the table's `history.expire.max-snapshot-age-ms` (5 days by default). " +
          "A value below the table's retention is honoured because it was asked for explicitly, and the job's result records it (`retention_shortened`).",
        example: 168,
      }),
    mode: z
      .enum(VACUUM_MODES)
      .default("lite")
      .openapi({
        description:
          "lite (default): Delta: tombstones only, the files the table's log removed longer ago than the retention; Iceberg: snapshot expiry and the files only expired snapshots referenced. " +
          "full: also orphans, files under the table's root that no log entry (Delta) or metadata (Iceberg) references, older than 72 hours.",
      }),
    dry_run: z.boolean().default(false).openapi({
      description:
        "true: the agent plans and reports the files it would propose (in the job's result, GET /api/v1/jobs/{job_id}), and no pending deletion is recorded.",
    }),
  })
  .openapi("VacuumTrigger");
export type VacuumTrigger = z.infer<typeof VacuumTriggerSchema>;

export const TableVacuumQuery = pageQuery(100, VACUUM_PAGE_MAX).extend({
  status: z.enum(JOB_STATUSES).optional().openapi({ description: "Only jobs in this status." }),
});

const VacuumSummarySchema = z
  .object({
    files_count: z.number().int().openapi({ description: "Files the plan proposed for deletion." }),
    bytes: z.number(),
    tombstones: z
      .number()
      .int()
      .openapi({ description: "Delta: files removed longer ago than the retention." }),
    orphans: z.number().int(),
    expired_snapshot_files: z.number().int().openapi({
      description: "Iceberg: files only the snapshots this vacuum expired referenced.",
    }),
    table_version: z.number().int().openapi({ description: "The snapshot the plan was made against." }),
    retention_hours: z.number().openapi({ description: "The retention applied." }),
    table_retention_hours: z.number().openapi({ description: "The table's own retention." }),
    retention_shortened: z.boolean().openapi({
      description: "The retention applied was shorter than the table's own (asked for explicitly).",
    }),
    orphan_min_age_hours: z.number(),
    kept: z.record(z.string(), z.number().int()).openapi({
      description:
        "What the plan looked at and kept, with counts (tombstones within retention, young orphans, ...).",
    }),
    objects_listed: z.number().int(),
    duration_ms: z.number(),
    pending_deletions_recorded: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "Real runs: the PENDING_DELETE records the run created (list them with GET /api/v1/pending-deletions?source_job_id=...). " +
          "Fewer than files_count when some files were pending already. Null for dry runs.",
      }),
  })
  .openapi("VacuumSummary");

export const VacuumJobSchema = z
  .object({
    id: z.string().openapi({ description: "The job id (see also GET /api/v1/jobs/{job_id})." }),
    table_id: z.string().nullable(),
    status: z.enum(JOB_STATUSES).openapi({
      description:
        "queued → offered → running → succeeded, failed or cancelled; a failed attempt with attempts left goes back to queued. " +
        "Cancel with POST /api/v1/jobs/{job_id}/cancel.",
    }),
    trigger: z
      .string()
      .openapi({ description: "manual (POST .../vacuum) or schedule (the table's vacuum schedule)." }),
    schedule_id: z.string().nullable(),
    priority: z.enum(PRIORITIES),
    mode: z.enum(VACUUM_MODES),
    dry_run: z.boolean(),
    retention_hours: z
      .number()
      .nullable()
      .openapi({ description: "The retention asked for; null: the table's own." }),
    keep_count: z.number().int().openapi({
      description: "Paths the agent was told never to propose: the table's RECOVERED vacuum records.",
    }),
    attempt: z.number().int(),
    agent_id: z.string().nullable(),
    error: z.string().nullable(),
    summary: VacuumSummarySchema.nullable().openapi({
      description: "The agent's result once the job succeeded; `result_note` says why it is null.",
    }),
    result_note: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("VacuumJob");
export type VacuumJobWire = z.infer<typeof VacuumJobSchema>;

export const HardDeleteQuery = z.object({
  dry_run: z
    .enum(["true", "false"])
    .default("false")
    .openapi({
      param: { name: "dry_run", in: "query" },
      description:
        "Boolean, default false. true lists the records a real call would claim and changes nothing.",
    }),
  table_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only records of this table (404 when no such table)." }),
  prefix_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only records of this managed prefix (404 when no such prefix)." }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(HARD_DELETE_MAX_LIMIT)
    .default(HARD_DELETE_DEFAULT_LIMIT)
    .openapi({
      description: `Records per call (default ${HARD_DELETE_DEFAULT_LIMIT}, maximum ${HARD_DELETE_MAX_LIMIT}; above is a 422).`,
    }),
});

export const HardDeleteJobSchema = z
  .object({
    id: z.string().openapi({ description: "The hard_delete job; follow it with GET /api/v1/jobs/{job_id}." }),
    table_id: z.string().nullable(),
    prefix_id: z.string().nullable().openapi({ description: "A prefix_hard_delete job's managed prefix." }),
    status: z.enum(JOB_STATUSES),
    files: z.number().int().openapi({ description: "Records the job claimed." }),
    created_at: z.string(),
  })
  .openapi("HardDeleteJob");

export const HardDeleteResponseSchema = z
  .object({
    dry_run: z.boolean(),
    records: z.number().int().openapi({ description: "Records claimed (or, on a dry run, that would be)." }),
    bytes: z.number(),
    files_by_table: z
      .array(z.object({ table_id: z.string(), files: z.number().int(), bytes: z.number() }))
      .openapi({ description: "The same records, counted per table." }),
    files_by_prefix: z
      .array(z.object({ prefix_id: z.string(), files: z.number().int(), bytes: z.number() }))
      .openapi({ description: "Records of managed prefixes (converted inputs), counted per prefix." }),
    jobs: z.array(HardDeleteJobSchema).openapi({
      description:
        "One hard_delete job per table and one prefix_hard_delete job per prefix; empty on a dry run.",
    }),
    items: z.array(PendingDeletionSchema).openapi({
      description:
        "The records, oldest eligible first: DELETING (claimed) on a real run, PENDING_DELETE on a dry run.",
    }),
  })
  .openapi("HardDeleteResponse");
export type HardDeleteResponseWire = z.infer<typeof HardDeleteResponseSchema>;
