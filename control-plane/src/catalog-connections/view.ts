/**
 * The API's views of catalog connections, their jobs and their synced tables, from the rows. A
 * connection shows its type's plain fields and, for each of its type's secret fields, only whether
 * one is stored (`has_<field>`); the secrets' envelope is never read here.
 */
import {
  CatalogSyncPayloadSchema,
  CatalogSyncResultSchema,
  CatalogTestResultSchema,
  type CatalogType,
  SECRET_FIELDS,
} from "@lakesmith/shared/catalogs";
import { tryEndpointKey } from "@lakesmith/shared/locations";
import type { CatalogConnection, CatalogTable, Job } from "../db/schema.ts";
import { TERMINAL_STATUSES } from "../jobs/state.ts";
import { iso } from "../jobs/view.ts";
import { TYPE_FIELDS } from "./credentials.ts";
import type { ConnectionTestAnswer, ConnectionWire, SyncJobWire } from "./schemas.ts";

const HOUR_MS = 3_600_000;
const URL_FIELDS = ["workspace_url", "metastore_uri", "catalog_url", "token_url"];

/** A connection row with its count of live synced tables. */
export type ConnectionRow = CatalogConnection & { tablesCount: number };

/** When the scheduler queues the connection's next sync; null while inactive. */
export function nextSyncAt(row: CatalogConnection): Date | null {
  if (!row.isActive) return null;
  const from = row.syncRequestedAt ?? row.createdAt;
  return new Date(from.getTime() + row.syncIntervalHours * HOUR_MS);
}

export function connectionView(row: ConnectionRow): ConnectionWire {
  const type = row.type as CatalogType;
  const secrets = SECRET_FIELDS[type];
  const plain = TYPE_FIELDS[type].filter((f) => !secrets.includes(f));
  const endpoints = URL_FIELDS.map((f) => row.settings[f])
    .filter((u): u is string => typeof u === "string")
    .map(tryEndpointKey)
    .filter((k): k is string => k !== undefined);
  return {
    id: row.id,
    name: row.name,
    type,
    ...Object.fromEntries(plain.map((f) => [f, row.settings[f] ?? null])),
    ...Object.fromEntries(secrets.map((f) => [`has_${f}`, row.secretFields.includes(f)])),
    endpoints: [...new Set(endpoints)],
    is_active: row.isActive,
    sync_interval_hours: row.syncIntervalHours,
    sync_status: row.syncStatus,
    last_synced_at: iso(row.lastSyncedAt),
    last_sync_error: row.lastSyncError,
    last_sync_job_id: row.lastSyncJobId,
    next_sync_at: iso(nextSyncAt(row)),
    tables_count: row.tablesCount,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: iso(row.updatedAt),
  };
}

/** A `catalog_test` job as the test's answer: `ok` null until it ends. */
export function testAnswerView(job: Job): ConnectionTestAnswer {
  const endpoints = job.endpoints;
  const base = { job_id: job.id, status: job.status, endpoints };
  if (!TERMINAL_STATUSES.includes(job.status))
    return { ...base, ok: null, catalogs: [], message: null, duration_ms: null };
  if (job.status !== "succeeded")
    return {
      ...base,
      ok: false,
      catalogs: [],
      message: job.error ?? `the test ended ${job.status}`,
      duration_ms: null,
    };
  const parsed = CatalogTestResultSchema.safeParse(job.result);
  if (!parsed.success)
    return {
      ...base,
      ok: false,
      catalogs: [],
      message: "the agent's answer is not a catalog test result; is it a version that runs catalog tests?",
      duration_ms: null,
    };
  const { ok, catalogs, message, duration_ms } = parsed.data;
  return { ...base, ok, catalogs, message, duration_ms };
}

/** A `catalog_sync` job: what it was asked, and its counts once it succeeded (`record.ts` kept them). */
export function syncJobView(job: Job): SyncJobWire {
  const asked = CatalogSyncPayloadSchema.partial().safeParse(job.payload);
  const payload = asked.success ? asked.data : {};
  const stored = (job.result ?? {}) as Record<string, unknown>;
  const result = job.status === "succeeded" ? CatalogSyncResultSchema.safeParse(job.result) : undefined;
  return {
    id: job.id,
    connection_id: typeof job.payload.connection_id === "string" ? job.payload.connection_id : "",
    status: job.status,
    trigger: job.trigger,
    mode: payload.mode ?? "full",
    catalog: payload.catalog ?? null,
    min_size_bytes: payload.min_size_bytes ?? 0,
    summary: result?.success
      ? {
          mode: result.data.mode,
          catalogs: result.data.catalogs,
          schemas_count: result.data.schemas_count,
          tables_count: result.data.tables_count,
          unchanged_count: result.data.unchanged_count,
          tables_marked_deleted:
            typeof stored.tables_marked_deleted === "number" ? stored.tables_marked_deleted : 0,
          below_min_size: result.data.below_min_size,
          duration_ms: result.data.duration_ms,
        }
      : null,
    error: job.error,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
  };
}

/** What the list of synced tables reads of a row: not the catalog's own record (`detail`). */
export type CatalogTableListRow = Omit<
  CatalogTable,
  "connectionId" | "detail" | "syncJobId" | "syncFence" | "firstSyncedAt"
>;

export function catalogTableView(row: CatalogTableListRow) {
  return {
    full_name: row.fullName,
    catalog: row.catalog,
    schema: row.schema,
    name: row.name,
    format: row.format,
    table_type: row.tableType,
    location: row.location,
    size_bytes: row.sizeBytes,
    has_partitions: row.hasPartitions,
    updated_at: iso(row.updatedAt),
    synced_at: row.syncedAt.toISOString(),
    deleted_at: iso(row.deletedAt),
  };
}

export function catalogTableDetailView(row: CatalogTable) {
  return { ...catalogTableView(row), connection_id: row.connectionId, detail: row.detail };
}
