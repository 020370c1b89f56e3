/**
 * What the four deleting jobs (vacuum, partition expiration, recover, hard delete) share: the format
 * check, an engine for the snapshot's checkpoints, the table's own retention, the rules for which
 * store keys a deleting job may ever name, and bounded HEAD requests.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { DEFAULT_DELETED_FILE_RETENTION_HOURS } from "@lakesmith/shared/maintenance";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import {
  dataFileLocation,
  isAbsolutePath,
  loadSnapshot,
  type Metadata,
  parseInterval,
  type Snapshot,
  writeRefusal,
} from "../delta/index.ts";
import { LOG_DIR } from "../delta/log.ts";
import { Engine } from "../engine/index.ts";
import { JobError } from "../registry.ts";
import type { ObjectInfo, ObjectStore } from "../store/index.ts";
import { checkKey } from "../store/keys.ts";

export interface MaintenanceOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  /** "Now" for retention and ages; tests move it instead of waiting days. */
  clock?: Clock;
}

export const HOUR_MS = 3_600_000;

export function nowOf(options: Pick<MaintenanceOptions, "clock">): number {
  return (options.clock ?? systemClock).now().getTime();
}

/** Fails the job for good unless the table is a Delta table: the only format these jobs read yet. */
export function requireDelta(format: string, job: string): void {
  if (format !== "delta")
    throw new JobError(`${job} of ${format} tables is not supported yet; only delta`, { retryable: false });
}

/** Runs `work` with a DuckDB engine (checkpoints are Parquet) that is closed afterwards. */
export async function withEngine<T>(
  scratchDir: string,
  memoryLimitMb: number,
  work: (engine: Engine) => Promise<T>,
): Promise<T> {
  const engine = await Engine.open({ memoryLimitMb, tempDir: join(scratchDir, "duckdb") });
  try {
    return await work(engine);
  } finally {
    engine.close();
  }
}

/** Loads the latest snapshot; each call reads into its own scratch folder. */
export function loadTable(store: ObjectStore, engine: Engine, scratchDir: string): Promise<Snapshot> {
  return loadSnapshot(store, engine, { scratchDir: join(scratchDir, `log-${randomUUID()}`) });
}

/** Fails the job for good when the agent may not write to this table (the reason says why). */
export function refuseUnwritable(snapshot: Snapshot, job: string): void {
  const refusal = writeRefusal(snapshot);
  if (refusal) throw new JobError(`${job} refused: ${refusal}`, { retryable: false });
}

/**
 * The table's `delta.deletedFileRetentionDuration` in hours, 168 when unset. A value the agent can't
 * read fails the job for good: guessing a retention could delete files a reader still needs.
 */
export function tableRetentionHours(metadata: Pick<Metadata, "configuration">): number {
  const value = metadata.configuration["delta.deletedFileRetentionDuration"];
  if (value === undefined) return DEFAULT_DELETED_FILE_RETENTION_HOURS;
  const ms = parseInterval(value);
  if (ms === undefined || ms < 0)
    throw new JobError(
      `the table's delta.deletedFileRetentionDuration '${value}' is not an interval the agent can read ` +
        `(e.g. 'interval 7 days'); fix the table property`,
      { retryable: false },
    );
  return ms / HOUR_MS;
}

/**
 * Whether a deleting job must never touch the key: `_delta_log/`, and any segment that is hidden
 * (`.crc` files, `_SUCCESS`, `_change_data/`), except Hive-style partition folders such as
 * `_col=value`, which are data.
 */
export function isProtectedKey(key: string): boolean {
  return key.split("/").some((s) => s.startsWith(".") || (s.startsWith("_") && !s.includes("=")));
}

export function isLogKey(key: string): boolean {
  return key.startsWith(LOG_DIR);
}

/**
 * A path as the maintenance payloads carry it (a decoded store key, or an absolute URI) as a key of
 * the table's store, or the reason it is not one.
 */
export function keyOfPath(store: ObjectStore, path: string): { key: string } | { refused: string } {
  let key = path;
  if (isAbsolutePath(path)) {
    const location = dataFileLocation(store, { rawPath: path });
    if (!("key" in location)) return { refused: `'${path}' is outside the table root ${store.uri}` };
    key = location.key;
  }
  try {
    checkKey(key);
  } catch (err) {
    return { refused: (err as Error).message };
  }
  return { key };
}

/** The store key of a live or removed file, or undefined when it lies outside the table root. */
export function keyOfFile(store: ObjectStore, file: { rawPath: string }): string | undefined {
  const location = dataFileLocation(store, file);
  return "key" in location ? location.key : undefined;
}

const HEAD_CONCURRENCY = 16;

/** HEADs every key, a bounded number at a time; a missing object maps to undefined. */
export async function headAll(
  store: ObjectStore,
  keys: readonly string[],
  signal: AbortSignal,
): Promise<Map<string, ObjectInfo | undefined>> {
  const found = new Map<string, ObjectInfo | undefined>();
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      signal.throwIfAborted();
      const key = keys[next++] as string;
      found.set(key, await store.head(key));
    }
  };
  await Promise.all(Array.from({ length: Math.min(HEAD_CONCURRENCY, keys.length) }, worker));
  return found;
}

/** Orders paths by code unit, the same on every machine (results list files in this order). */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The retention a vacuum applies: the payload's, else the table's own; with `keep_table_retention`
 * the payload's only where it is longer than the table's.
 *
 * @example retentionHours({ retention_hours: 24, keep_table_retention: true }, 168) // 168
 */
export function retentionHours(
  payload: { retention_hours?: number | undefined; keep_table_retention?: boolean | undefined },
  tableHours: number,
): number {
  const asked = payload.retention_hours;
  if (asked === undefined) return tableHours;
  return payload.keep_table_retention ? Math.max(asked, tableHours) : asked;
}
