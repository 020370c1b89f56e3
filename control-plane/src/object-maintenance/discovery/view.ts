/** Discovery rows as the API shows them (`schemas.ts`). */
import type { DiscoveredPrefix, DiscoverySchedule } from "../../db/schema.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function scheduleView(row: DiscoverySchedule) {
  return {
    id: row.id,
    location_id: row.locationId,
    status: row.status,
    trigger: row.trigger,
    job_id: row.jobId,
    report: row.report,
    bins_total: row.binsTotal,
    bins_done: row.binsDone,
    bins_skipped: row.binsSkipped,
    files_seen: row.filesSeen,
    bytes_seen: row.bytesSeen,
    objects_scanned: row.objectsScanned,
    error: row.error,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    ended_at: iso(row.endedAt),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function stateView(row: DiscoverySchedule) {
  return {
    id: row.id,
    status: row.status,
    files_seen: row.filesSeen,
    bytes_seen: row.bytesSeen,
    objects_scanned: row.objectsScanned,
    bins_done: row.binsDone,
    bins_skipped: row.binsSkipped,
    bins_total: row.binsTotal,
    updated_at: row.updatedAt.toISOString(),
  };
}

export function discoveredView(row: DiscoveredPrefix) {
  return {
    uri: row.uri,
    prefix: row.prefix,
    files: row.files,
    bytes: row.bytes,
    data_files: row.dataFiles,
    data_bytes: row.dataBytes,
    oldest_object_at: iso(row.oldestAt),
    newest_object_at: iso(row.newestAt),
    filtered: row.filter !== null,
    filter_reason: row.filter,
  };
}
