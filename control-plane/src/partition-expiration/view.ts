/**
 * The API's view of a partition expiration job: the payload says what was asked, the agent's
 * `PartitionExpirationResult` what happened. Scheduled payloads parse too (not a dry run).
 */
import {
  type PartitionExpirationPayload,
  PartitionExpirationPayloadSchema,
  PartitionExpirationResultSchema,
} from "@lakesmith/shared/maintenance";
import type { Job } from "../db/schema.ts";
import { iso, resultNote, tableJobFields } from "../jobs/view.ts";
import type { PartitionExpirationJobWire } from "./schemas.ts";

export function partitionExpirationJobView(job: Job): PartitionExpirationJobWire {
  const asked = PartitionExpirationPayloadSchema.safeParse(job.payload);
  const payload: Partial<PartitionExpirationPayload> = asked.success ? asked.data : {};
  const parsed = job.result ? PartitionExpirationResultSchema.safeParse(job.result) : undefined;
  const r = parsed?.success ? parsed.data : undefined;
  const recorded = job.result?.pending_deletions_recorded;
  return {
    ...tableJobFields(job),
    partition_column: payload.partition_column ?? payload.recipe?.date_filter_column ?? null,
    retention_days: payload.retention_days ?? r?.retention_days ?? 0,
    as_of: payload.as_of ?? null,
    dry_run: payload.dry_run ?? false,
    validate: payload.validate ?? false,
    summary: r
      ? {
          can_run: r.can_run,
          reason: r.reason,
          partition_column: r.partition_column,
          retention_days: r.retention_days,
          cutoff_date: r.cutoff_date,
          partitions: r.partitions,
          files_count: r.files_count,
          bytes: r.bytes,
          table_version: r.table_version,
          committed_version: r.committed_version,
          committed_at: iso(r.committed_at),
          table_retention_hours: r.table_retention_hours,
          duration_ms: r.duration_ms,
          pending_deletions_recorded: typeof recorded === "number" ? recorded : null,
        }
      : null,
    result_note: r ? null : resultNote(job, parsed?.error, "partition expiration"),
  };
}
