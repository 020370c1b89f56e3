/**
 * A Hive table as the metastore and the store show it at one moment: the table's record, each
 * partition's record with the data files listed in its folder, and why the agent must not rewrite
 * the table (or some of its partitions).
 *
 * What a rewrite may touch:
 * - the table: a Parquet table (input format or serde), not a view, not transactional (ACID: its
 *   folders belong to Hive's transactions), not bucketed (a rewrite would break the buckets), not
 *   list-bucketed (skewed sub-folders), not an Iceberg table registered in the metastore, with
 *   column types DuckDB reads losslessly, and without timestamp columns (see below);
 * - a partition: stored as Parquet, in a folder under the table's root (a partition elsewhere may
 *   share its folder with someone else's data). Other partitions are left alone, with a note.
 *
 * Timestamps: Hive and Spark write them as INT96; DuckDB writes INT64, which Hive before 4.0 can't
 * read. A table with a timestamp column (at any depth) is refused rather than made unreadable.
 *
 * The snapshot's `version` is the newest `transient_lastDdlTime` (seconds) of the table and its
 * partitions: Hive has no table version, and each swap sets it.
 */
import type { ObjectStore } from "../store/index.ts";
import { isDataFile, keyOfLocation } from "./location.ts";
import type { HiveMetastore, HivePartition, HiveTableRecord } from "./metastore.ts";
import { duckdbType, UnsupportedHiveType } from "./types.ts";

/** The metastore parameter every alter keeps current (seconds since the epoch). */
export const DDL_TIME = "transient_lastDdlTime";

export interface HiveFile {
  key: string;
  size: number;
  lastModified: number;
}

export interface HivePartitionSnapshot {
  /** The metastore's record, written back (with a new location) by a swap. */
  record: HivePartition | null;
  /** Values by partition column; `null` for Hive's default (null) partition. */
  values: Record<string, string | null>;
  location: string;
  /** The key of `location` under the store's root. */
  key: string;
  files: HiveFile[];
}

export interface HiveSnapshot {
  table: HiveTableRecord;
  /** The key of the table's location under the store's root; null when it is elsewhere. */
  tableKey: string | null;
  version: number;
  columns: { name: string; type: string; hiveType: string }[];
  partitionColumns: { name: string; hiveType: string }[];
  partitions: HivePartitionSnapshot[];
  /** Why the table must not be rewritten; null when it may. */
  refusal: string | null;
  /** Partitions left alone, and why (non-Parquet, outside the table's root). */
  notes: string[];
}

/** Hive's name for a null partition value. */
const DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__";
/** Partition records asked for per metastore call. */
const PARTITION_BATCH = 500;

export async function loadHiveSnapshot(
  metastore: HiveMetastore,
  store: ObjectStore,
  ref: { database: string; table: string },
): Promise<HiveSnapshot> {
  const table = await metastore.getTable(ref.database, ref.table);
  const partitionColumns = table.partitionKeys.map((k) => ({ name: k.name.toLowerCase(), hiveType: k.type }));
  const tableKey = keyOfLocation(store.uri, table.sd.location ?? "");
  const notes: string[] = [];
  let refusal = tableRefusal(table, store.uri, tableKey);
  const columns: HiveSnapshot["columns"] = [];
  for (const col of table.sd.cols) {
    try {
      columns.push({ name: col.name.toLowerCase(), type: duckdbType(col.type), hiveType: col.type });
    } catch (err) {
      if (!(err instanceof UnsupportedHiveType)) throw err;
      refusal ??= `column '${col.name}': ${err.message}`;
    }
  }
  // Hive and Spark store timestamps as INT96, which DuckDB does not write; Hive before 4.0 can't
  // read the INT64 timestamps a rewrite would write instead.
  const timestamps = columns.filter((c) => /\btimestamp\b/i.test(c.hiveType)).map((c) => c.name);
  if (timestamps.length > 0)
    refusal ??= `its timestamp column${timestamps.length > 1 ? "s" : ""} ${timestamps.join(", ")} would be rewritten as INT64 timestamps (Hive and Spark write INT96), which Hive before 4.0 can't read`;
  const partitions: HivePartitionSnapshot[] = [];
  let version = ddlTime(table.parameters);
  if (refusal === null && tableKey !== null) {
    if (partitionColumns.length === 0) {
      partitions.push({
        record: null,
        values: {},
        location: table.sd.location,
        key: tableKey,
        files: await listFolder(store, tableKey),
      });
    } else {
      const names = await metastore.listPartitionNames(ref.database, ref.table);
      for (let i = 0; i < names.length; i += PARTITION_BATCH) {
        const records = await metastore.getPartitionsByNames(
          ref.database,
          ref.table,
          names.slice(i, i + PARTITION_BATCH),
        );
        for (const record of records) {
          version = Math.max(version, ddlTime(record.parameters));
          const values = Object.fromEntries(
            partitionColumns.map((c, j) => {
              const value = record.values[j] ?? null;
              return [c.name, value === DEFAULT_PARTITION ? null : value];
            }),
          );
          const label = partitionColumns
            .map((c) => `${c.name}=${values[c.name] ?? DEFAULT_PARTITION}`)
            .join("/");
          if (!isParquet(record.sd?.inputFormat, record.sd?.serdeInfo?.serializationLib)) {
            notes.push(
              `partition ${label} is stored as ${record.sd?.inputFormat || "an unknown format"}, not Parquet: left alone`,
            );
            continue;
          }
          const key = keyOfLocation(store.uri, record.sd?.location ?? "");
          if (key === null) {
            notes.push(
              `partition ${label} lives at ${record.sd?.location}, outside the table's folder ${store.uri}: left alone`,
            );
            continue;
          }
          partitions.push({
            record,
            values,
            location: record.sd.location,
            key,
            files: await listFolder(store, key),
          });
        }
      }
    }
  }
  return { table, tableKey, version, columns, partitionColumns, partitions, refusal, notes };
}

/** The data files directly in a folder (hidden files and sub-folders are not the table's). */
export async function listFolder(store: ObjectStore, folderKey: string): Promise<HiveFile[]> {
  const files: HiveFile[] = [];
  for await (const object of store.list(folderKey === "" ? "" : `${folderKey}/`)) {
    if (isDataFile(folderKey, object.key))
      files.push({ key: object.key, size: object.size, lastModified: object.lastModified.getTime() });
  }
  return files;
}

export function ddlTime(parameters: Record<string, string> | undefined): number {
  const seconds = Number(parameters?.[DDL_TIME]);
  return Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
}

function tableRefusal(table: HiveTableRecord, storeUri: string, tableKey: string | null): string | null {
  const params = table.parameters ?? {};
  const type = (table.tableType ?? "").toUpperCase();
  if (type.includes("VIEW"))
    return `'${table.dbName}.${table.tableName}' is a view (${table.tableType}), not a table`;
  if ((params.table_type ?? "").toUpperCase() === "ICEBERG")
    return "it is an Iceberg table registered in the metastore: onboard it with format iceberg";
  if ((params.transactional ?? "").toLowerCase() === "true")
    return "it is a transactional (ACID) Hive table: its folders belong to Hive's transactions, and only Hive's compaction may rewrite them";
  if (!isParquet(table.sd.inputFormat, table.sd.serdeInfo?.serializationLib))
    return `it is stored as ${table.sd.inputFormat || "an unknown format"}, not Parquet`;
  if (table.sd.numBuckets > 0 && table.sd.bucketCols.length > 0)
    return `it is bucketed by ${table.sd.bucketCols.join(", ")} into ${table.sd.numBuckets} buckets, which a rewrite would not keep`;
  if (table.sd.storedAsSubDirectories) return "it is list-bucketed (skewed values in sub-folders)";
  if (tableKey === null)
    return `its location ${table.sd.location} is not the table's registered folder ${storeUri} or under it`;
  return null;
}

function isParquet(inputFormat: string | undefined, serde: string | undefined): boolean {
  return /parquet/i.test(inputFormat ?? "") || /parquet/i.test(serde ?? "");
}
