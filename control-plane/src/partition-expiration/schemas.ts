/**
 * Wire shapes of partition expiration (document 1, "Partition expiration job"): the trigger (and
 * the validate request, which takes the same fields) and the job as the API shows it.
 */
import { z } from "@hono/zod-openapi";
import { ExpiredPartitionSchema } from "@lakesmith/shared/maintenance";
import { JOB_STATUSES, PRIORITIES } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";

export const EXPIRATION_PAGE_MAX = 1000;

const fields = {
  partition_column: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .openapi({
      description:
        "The date partition column whose old partitions expire. Absent: the recipe's date filter column. " +
        "When onboarding has produced the table's recipe, the column must be one of its partition columns (422 otherwise).",
      example: "event_date",
    }),
  retention_days: z.number().int().min(1).max(36_500).optional().openapi({
    description:
      "Partitions dated before today (UTC) minus this many days expire. Absent: the default_partition_expiration_days setting (30 by default).",
    example: 30,
  }),
  dry_run: z
    .boolean()
    .default(false)
    .openapi({
      description:
        "true: the agent plans and reports the partitions and files that would expire and commits nothing; no pending deletion is recorded. " +
        "Has no effect on .../validate, which never writes.",
    }),
};

export const PartitionExpirationTriggerSchema = z.strictObject(fields).openapi("PartitionExpirationTrigger");
export type PartitionExpirationTrigger = z.infer<typeof PartitionExpirationTriggerSchema>;

export const PartitionExpirationValidateSchema = z
  .strictObject(fields)
  .openapi("PartitionExpirationValidateRequest", {
    description:
      "The fields of PartitionExpirationTrigger, so the same body can be validated first and then sent for real.",
  });

export const TableExpirationQuery = pageQuery(100, EXPIRATION_PAGE_MAX).extend({
  status: z.enum(JOB_STATUSES).optional().openapi({ description: "Only jobs in this status." }),
});

const SummarySchema = z
  .object({
    can_run: z
      .boolean()
      .openapi({ description: "False when the policy can't run on this table; `reason` says why." }),
    reason: z.string().nullable(),
    partition_column: z.string().nullable(),
    retention_days: z.number().int(),
    cutoff_date: z.string().openapi({ description: "Partitions dated before this expire." }),
    partitions: z.array(ExpiredPartitionSchema),
    files_count: z.number().int(),
    bytes: z.number(),
    table_version: z.number().int().nullable(),
    committed_version: z.number().int().nullable().openapi({
      description:
        "The table version whose commit removed the files; null for dry runs, validates and when nothing expired.",
    }),
    committed_at: z.string().nullable(),
    table_retention_hours: z.number(),
    duration_ms: z.number(),
    pending_deletions_recorded: z.number().int().nullable().openapi({
      description:
        "Real runs that committed: the PENDING_DELETE records created (GET /api/v1/pending-deletions?source_job_id=...). Null otherwise.",
    }),
  })
  .openapi("PartitionExpirationSummary");

export const PartitionExpirationJobSchema = z
  .object({
    id: z.string().openapi({ description: "The job id; poll GET /api/v1/jobs/{job_id} for its raw result." }),
    table_id: z.string().nullable(),
    status: z.enum(JOB_STATUSES).openapi({
      description:
        "queued → offered → running → succeeded, failed or cancelled; a failed attempt with attempts left goes back to queued.",
    }),
    trigger: z
      .string()
      .openapi({ description: "manual, or schedule (the table's partition_expiration schedule)." }),
    schedule_id: z.string().nullable(),
    priority: z.enum(PRIORITIES),
    partition_column: z.string().nullable(),
    retention_days: z.number().int(),
    as_of: z.string().nullable().openapi({ description: "The UTC day the retention counts back from." }),
    dry_run: z.boolean(),
    validate: z.boolean().openapi({ description: "A preflight (POST .../validate): writes nothing." }),
    attempt: z.number().int(),
    agent_id: z.string().nullable(),
    error: z.string().nullable(),
    summary: SummarySchema.nullable().openapi({
      description: "The agent's result once the job succeeded; `result_note` says why it is null.",
    }),
    result_note: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("PartitionExpirationJob");
export type PartitionExpirationJobWire = z.infer<typeof PartitionExpirationJobSchema>;
