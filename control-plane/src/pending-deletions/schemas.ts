/**
 * Wire shapes of pending deletions (document 1, "Pending deletions"): the record, its list and
 * stats, and the recover request.
 */
import { z } from "@hono/zod-openapi";
import {
  DELETION_ACTION_TYPES,
  DELETION_REASONS,
  DELETION_VACUUM_MODES,
  PENDING_DELETION_STATUSES,
} from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";

export const PENDING_DELETION_PAGE_MAX = 100;

export const STATUS_DESCRIPTION =
  "PENDING_DELETE: proposed by a vacuum, a partition expiration, a Hive crunch or a prefix's removal of converted inputs; recoverable; hard-delete removes the file once `eligible_at` has passed. " +
  "RECOVERING: a recover job is putting the file back into the table (expired partitions only); it ends RECOVERED, or PENDING_DELETE again when the job fails (`note` says why). " +
  "RECOVERED: kept for good; never hard-deleted, and vacuum never proposes the path again. " +
  "DELETING: claimed by a hard-delete job (`hard_delete_job_id`). " +
  "DELETED: the agent deleted the file, or found it already absent (`note`). " +
  "RETAINED: right before deleting, the agent found the file referenced by the table's current snapshot again and kept it; never deleted. " +
  "Transitions: PENDING_DELETE → RECOVERED (recover of a vacuum record or of a prefix's converted input) or RECOVERING → RECOVERED | PENDING_DELETE (recover of an expiration record); " +
  "PENDING_DELETE → DELETING (hard-delete) → DELETED | RETAINED | PENDING_DELETE (the file's delete failed, or the job failed or was cancelled).";

export const PendingDeletionSchema = z
  .object({
    id: z.string().openapi({ example: "del_4k9x2m7q0c1v8b3n5z6t" }),
    table_id: z
      .string()
      .nullable()
      .openapi({ description: "The table whose file it is; null for a prefix's record." }),
    prefix_id: z.string().nullable().openapi({
      description:
        "The managed prefix (object maintenance) whose converted input it is (`remove_inputs`); null for a table's record.",
    }),
    source_job_id: z.string().openapi({
      description:
        "The vacuum, partition_expiration, (Hive) crunch or prefix_remove_inputs job that proposed the file.",
    }),
    action_type: z.enum(DELETION_ACTION_TYPES).openapi({
      description:
        "vacuum: proposed by a vacuum (on an Iceberg table: its snapshot expiry and orphan cleanup); partition_expiration: removed by a partition expiration (Delta); crunch: in a folder a crunch of a Hive table moved a partition (or the table) away from; remove_inputs: a managed prefix's JSON input, converted to Parquet longer ago than its policy's `remove_inputs.retention_days` (recover keeps it at once, and a later removal never proposes it again).",
    }),
    vacuum_mode: z.enum(DELETION_VACUUM_MODES).nullable().openapi({
      description:
        "The vacuum's mode; null for partition expiration. lite: tombstones (Delta) or expired snapshots' files (Iceberg) only; full: orphans too, from a listing of the table's folder.",
    }),
    reason: z.enum(DELETION_REASONS).openapi({
      description:
        "tombstone: removed from a Delta table longer ago than the retention; orphan: referenced by no metadata of the table (Delta log, or any Iceberg snapshot, manifest or metadata file) and older than 72 hours; " +
        "expired_partition: removed by a partition expiration; superseded: in a Hive partition's old folder, which the table no longer reads since a crunch moved the partition to its rewritten folder (recovering any one record of the folder moves the partition back and recovers every record of the folder; a recover job does it, as for expiration records); converted_input: a prefix's input whose rows the Parquet under the policy's target prefix holds (the conversion's manifest records it); expired_snapshot: referenced only by Iceberg snapshots that the vacuum expired (the snapshots are gone from the table's metadata; recovering the record keeps the file, it does not bring the snapshot back).",
    }),
    path: z.string().openapi({
      description: "Relative to the table's root, or to the prefix for a prefix's record.",
      example: "date=2026-01-01/part-0.parquet",
    }),
    size_bytes: z.number(),
    partition: z.string().nullable().openapi({
      description:
        "`col=value` of the expired partition, or the `col=value/...` of a Hive crunch's superseded partition; null for vacuum records and unpartitioned Hive tables.",
      example: "date=2026-01-01",
    }),
    status: z.enum(PENDING_DELETION_STATUSES).openapi({ description: STATUS_DESCRIPTION }),
    eligible_at: z.string().openapi({
      description:
        "From when hard-delete may pick the record. Vacuum: when the vacuum ended + pending_deletion_grace_hours. " +
        "Partition expiration: the later of the commit + the table's retention and the expiration's end + pending_deletion_grace_hours. " +
        "Converted input: when the removal ended + pending_deletion_grace_hours.",
    }),
    recoverable: z
      .boolean()
      .openapi({ description: "Whether POST .../recover is possible now (status PENDING_DELETE)." }),
    created_at: z.string(),
    updated_at: z.string(),
    recovered_at: z.string().nullable(),
    recover_reason: z.string().nullable(),
    recovered_by: z
      .string()
      .nullable()
      .openapi({ description: "The user or API key that asked for the recover." }),
    recover_job_id: z.string().nullable(),
    hard_delete_job_id: z
      .string()
      .nullable()
      .openapi({ description: "The hard-delete job that claimed the record last." }),
    deleted_at: z.string().nullable(),
    note: z.string().nullable(),
  })
  .openapi("PendingDeletion");
export type PendingDeletionWire = z.infer<typeof PendingDeletionSchema>;

export const PendingDeletionQuery = pageQuery(20, PENDING_DELETION_PAGE_MAX).extend({
  status: z.enum(PENDING_DELETION_STATUSES).optional(),
  table_id: z.string().min(1).max(64).optional(),
  prefix_id: z.string().min(1).max(64).optional().openapi({
    description: "Only the records of one managed prefix (converted inputs proposed for removal).",
  }),
  action_type: z.enum(DELETION_ACTION_TYPES).optional(),
  vacuum_mode: z.enum(DELETION_VACUUM_MODES).optional(),
  source_job_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only the records one vacuum or partition expiration job created." }),
});
export type PendingDeletionFilter = Omit<z.infer<typeof PendingDeletionQuery>, "offset" | "limit">;

const byStatus = (description: string) =>
  z
    .object(
      Object.fromEntries(PENDING_DELETION_STATUSES.map((s) => [s, z.number()])) as Record<
        (typeof PENDING_DELETION_STATUSES)[number],
        z.ZodNumber
      >,
    )
    .openapi({ description });

export const PendingDeletionStatsSchema = z
  .object({
    table_id: z.string().nullable(),
    prefix_id: z.string().nullable(),
    counts: byStatus("Records per status; every status is present, 0 when none."),
    bytes: byStatus("Sum of size_bytes per status."),
    total: z.number().int(),
    eligible_now: z.number().int().openapi({
      description:
        "PENDING_DELETE records whose eligible_at has passed: what POST /api/v1/vacuum/hard-delete would pick.",
    }),
  })
  .openapi("PendingDeletionStats");

export const StatsQuery = z.object({
  table_id: z.string().min(1).max(64).optional().openapi({ description: "Only this table's records." }),
  prefix_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only this managed prefix's records (ignored with table_id)." }),
});

export const RecoverRequestSchema = z
  .strictObject({
    reason: z
      .string()
      .trim()
      .min(1, "give a reason")
      .max(1000)
      .openapi({ description: "Why the file is kept; recorded on the record.", example: "legal hold" }),
  })
  .openapi("RecoverRequest");
