/** The API's view of a pending deletion record. */
import type { PendingDeletion } from "../db/schema.ts";
import { iso } from "../jobs/view.ts";
import type { PendingDeletionWire } from "./schemas.ts";

export function pendingDeletionView(r: PendingDeletion): PendingDeletionWire {
  return {
    id: r.id,
    table_id: r.tableId,
    prefix_id: r.prefixId,
    source_job_id: r.sourceJobId,
    action_type: r.actionType,
    vacuum_mode: r.vacuumMode,
    reason: r.reason,
    path: r.path,
    size_bytes: r.sizeBytes,
    partition: r.partition,
    status: r.status,
    eligible_at: r.eligibleAt.toISOString(),
    recoverable: r.status === "PENDING_DELETE",
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    recovered_at: iso(r.recoveredAt),
    recover_reason: r.recoverReason,
    recovered_by: r.recoveredBy,
    recover_job_id: r.recoverJobId,
    hard_delete_job_id: r.hardDeleteJobId,
    deleted_at: iso(r.deletedAt),
    note: r.note,
  };
}
