/**
 * Loading an Iceberg table from its folder: find the current metadata file (`locate.ts`), parse it
 * (`metadata.ts`), and note whether the location it records is where the table is read from
 * (`location.ts`). Nothing else is read until asked for: snapshots' manifests are read by
 * `readSnapshotFiles`.
 *
 * Lookups here fail with `IcebergError` naming what is missing, never return a wrong neighbour.
 */
import type { ObjectStore } from "../store/index.ts";
import { IcebergError } from "./errors.ts";
import { parseJson } from "./json.ts";
import { findMetadataKey, readText } from "./locate.ts";
import { keyOfPath, type LocationMismatch, locationMismatch } from "./location.ts";
import { type PartitionSpec, parseTableMetadata, type Snapshot, type TableMetadata } from "./metadata.ts";
import { type FoundField, fieldIndex, type IcebergSchema } from "./schema.ts";

export interface IcebergTable {
  /** The store's root: every key below is relative to it. */
  storeUri: string;
  /** The key of the metadata file this was read from. */
  metadataKey: string;
  metadata: TableMetadata;
  /** Null when the recorded `location` is the store's root; writers refuse otherwise. */
  locationMismatch: LocationMismatch | null;
}

export interface LoadIcebergOptions {
  /** The metadata file to read (from a catalog): a key relative to the root, or a URI under it. */
  metadataLocation?: string;
}

/** Loads the table's current metadata (or the one named), ready to read snapshots from. */
export async function loadIcebergTable(
  store: ObjectStore,
  options: LoadIcebergOptions = {},
): Promise<IcebergTable> {
  const metadataKey = await findMetadataKey(store, options.metadataLocation);
  const where = store.uriOf(metadataKey);
  let json: unknown;
  try {
    json = parseJson(await readText(store, metadataKey));
  } catch (err) {
    if (err instanceof IcebergError && err.code === "corrupt")
      throw new IcebergError("corrupt", `${where} is ${err.message}`, { cause: err });
    throw err;
  }
  const metadata = parseTableMetadata(json, where);
  return {
    storeUri: store.uri,
    metadataKey,
    metadata,
    locationMismatch: locationMismatch(metadata.location, store.uri),
  };
}

/** The store key of a location the metadata records, or null where it lies outside the table. */
export function keyOf(table: IcebergTable, path: string): string | null {
  return keyOfPath(path, table.metadata.location, table.storeUri);
}

/** The snapshot `current-snapshot-id` names, or null for a table without one. */
export function currentSnapshot(table: IcebergTable): Snapshot | null {
  const id = table.metadata.currentSnapshotId;
  return id === null ? null : snapshotById(table, id);
}

/** The snapshot with id `id`; throws `missing_snapshot` where the metadata has none (expired). */
export function snapshotById(table: IcebergTable, id: bigint): Snapshot {
  const snapshot = table.metadata.snapshots.find((s) => s.snapshotId === id);
  if (!snapshot)
    throw new IcebergError(
      "missing_snapshot",
      `snapshot ${id} is not in ${table.storeUri}${table.metadataKey} (it may have expired)`,
    );
  return snapshot;
}

/** The snapshot a branch or tag points at. */
export function snapshotAtRef(table: IcebergTable, ref: string): Snapshot {
  const target = table.metadata.refs[ref];
  if (!target)
    throw new IcebergError(
      "missing_snapshot",
      `the table has no branch or tag '${ref}' (it has ${Object.keys(table.metadata.refs).join(", ") || "none"})`,
    );
  return snapshotById(table, target.snapshotId);
}

/** The schema with id `id`. */
export function schemaById(table: IcebergTable, id: number): IcebergSchema {
  const schema = table.metadata.schemas.find((s) => s.schemaId === id);
  if (!schema) throw new IcebergError("corrupt", `schema ${id} is not in the table metadata`);
  return schema;
}

/** The schema `current-schema-id` names. */
export function currentSchema(table: IcebergTable): IcebergSchema {
  return schemaById(table, table.metadata.currentSchemaId);
}

/** The partition spec with id `id` (a file's `specId`). */
export function partitionSpecById(table: IcebergTable, id: number): PartitionSpec {
  const spec = table.metadata.partitionSpecs.find((s) => s.specId === id);
  if (!spec) throw new IcebergError("corrupt", `partition spec ${id} is not in the table metadata`);
  return spec;
}

const indexes = new WeakMap<IcebergTable, Map<number, FoundField>>();

/**
 * Every field id the table has ever had, typed by the newest schema that has it (the current one
 * first): bounds and partition sources of files written before a column was dropped stay readable.
 */
export function tableFieldIndex(table: IcebergTable): Map<number, FoundField> {
  let index = indexes.get(table);
  if (!index) {
    index = new Map();
    const current = currentSchema(table);
    const others = table.metadata.schemas.filter((s) => s !== current).reverse();
    for (const schema of [current, ...others])
      for (const [id, field] of fieldIndex(schema)) if (!index.has(id)) index.set(id, field);
    indexes.set(table, index);
  }
  return index;
}
