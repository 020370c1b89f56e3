/**
 * Reading a table's size from its own metadata, for catalogs whose records have none (Unity):
 * the sum of the live files' sizes in a Delta log, or `total-files-size` of an Iceberg table's
 * current snapshot; or, for tables with no metadata of their own (a Hive table without
 * statistics), format `files`: the sum of the files listed under the location.
 *
 * - Only locations the agent's allow list covers are read; any other is answered with a note
 *   saying so, and nothing is touched.
 * - A Delta log read holds the table's live file list (memory proportional to its file count) and
 *   opens its own DuckDB engine for checkpoints, in a scratch folder removed afterwards.
 * - A `files` read streams the listing (constant memory) and skips what Hive skips: any path with
 *   a segment starting with `_` or `.` (`_SUCCESS`, `.hive-staging...`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { AllowList } from "../allow.ts";
import { loadSnapshot } from "../delta/index.ts";
import { Engine } from "../engine/duckdb.ts";
import { currentSnapshot, loadIcebergTable } from "../iceberg/table.ts";
import { type ObjectStore, type StoreOptions, storeFor } from "../store/index.ts";
import { totalFilesSize } from "./polaris.ts";
import type { SizeOf, TableSize } from "./types.ts";

export interface SizeReaderOptions {
  allow: AllowList;
  store: StoreOptions;
  /** Where Delta checkpoints are downloaded for reading (a folder per read, removed after). */
  scratchDir: string;
  /** DuckDB's memory limit for one read. */
  memoryLimitMb: number;
}

/** A `SizeOf` that reads what the allow list permits. */
export function sizeReader(options: SizeReaderOptions): SizeOf {
  return async (location, format) => {
    const verdict = options.allow.check(location);
    if (!verdict.ok) return { size_bytes: null, note: `not read: ${verdict.reason}` };
    const store = storeFor(location, options.store);
    if (format === "delta") return deltaSize(store, options);
    if (format === "iceberg") return icebergSize(store);
    if (format === "files") return listedSize(store);
    return { size_bytes: null, note: `the agent reads no size from ${format} tables` };
  };
}

async function deltaSize(store: ObjectStore, options: SizeReaderOptions): Promise<TableSize> {
  const scratch = await mkdtemp(join(options.scratchDir, "size-"));
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(scratch, "duckdb"),
  });
  try {
    const snapshot = await loadSnapshot(store, engine, { scratchDir: scratch });
    return {
      size_bytes: snapshot.files.reduce((sum, file) => sum + file.size, 0),
      source: "delta_log",
      facts: {
        delta_version: snapshot.version,
        live_files: snapshot.files.length,
        delta_partition_columns: snapshot.metadata.partitionColumns,
      },
    };
  } finally {
    engine.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

async function icebergSize(store: ObjectStore): Promise<TableSize> {
  const table = await loadIcebergTable(store);
  const snapshot = currentSnapshot(table);
  const size = totalFilesSize(snapshot?.summary);
  if (size === null)
    return {
      size_bytes: null,
      note: snapshot
        ? "the current Iceberg snapshot's summary has no total-files-size"
        : "the Iceberg table has no current snapshot",
    };
  return {
    size_bytes: size,
    source: "iceberg_metadata",
    facts: { metadata_location: store.uriOf(table.metadataKey), snapshot_id: String(snapshot?.snapshotId) },
  };
}

async function listedSize(store: ObjectStore): Promise<TableSize> {
  let bytes = 0;
  let files = 0;
  for await (const object of store.list()) {
    if (object.key.split("/").some((segment) => segment.startsWith("_") || segment.startsWith("."))) continue;
    bytes += object.size;
    files++;
  }
  return { size_bytes: bytes, source: "listing", facts: { listed_files: files } };
}
