/**
 * The API's view of a vacuum job, read from the job row: the payload says what was asked, the
 * agent's `VacuumResult` what happened. Scheduled runs' payloads parse as vacuum payloads too
 * (lite, not a dry run). A recorded real run's stored result has no files any more
 * (`pending-deletions/record.ts`); its counts by reason were kept as `files_by_reason`.
 */
import {
  type VacuumPayload,
  VacuumPayloadSchema,
  type VacuumResult,
  VacuumResultSchema,
} from "@lakesmith/shared/maintenance";
import type { Job } from "../db/schema.ts";
import { resultNote, tableJobFields } from "../jobs/view.ts";
import type { VacuumJobWire } from "./schemas.ts";

export function vacuumJobView(job: Job): VacuumJobWire {
  const asked = VacuumPayloadSchema.safeParse(job.payload);
  const payload: Partial<VacuumPayload> = asked.success ? asked.data : {};
  const parsed = job.result ? VacuumResultSchema.safeParse(job.result) : undefined;
  const result = parsed?.success ? parsed.data : undefined;
  return {
    ...tableJobFields(job),
    mode: payload.mode ?? "lite",
    dry_run: payload.dry_run ?? false,
    retention_hours: payload.retention_hours ?? null,
    keep_count: payload.keep?.length ?? 0,
    summary: result ? summaryOf(result, job.result ?? {}) : null,
    result_note: result ? null : resultNote(job, parsed?.error, "vacuum"),
  };
}

function summaryOf(r: VacuumResult, stored: Record<string, unknown>): NonNullable<VacuumJobWire["summary"]> {
  const kept = stored.files_by_reason as
    | { tombstone?: number; orphan?: number; expired_snapshot?: number }
    | undefined;
  const recorded = stored.pending_deletions_recorded;
  return {
    files_count: r.files_count,
    bytes: r.bytes,
    tombstones: kept?.tombstone ?? r.files.filter((f) => f.reason === "tombstone").length,
    orphans: kept?.orphan ?? r.files.filter((f) => f.reason === "orphan").length,
    expired_snapshot_files:
      kept?.expired_snapshot ?? r.files.filter((f) => f.reason === "expired_snapshot").length,
    table_version: r.table_version,
    retention_hours: r.retention_hours,
    table_retention_hours: r.table_retention_hours,
    retention_shortened: r.retention_shortened,
    orphan_min_age_hours: r.orphan_min_age_hours,
    kept: r.kept,
    objects_listed: r.objects_listed,
    duration_ms: r.duration_ms,
    pending_deletions_recorded: typeof recorded === "number" ? recorded : null,
  };
}
