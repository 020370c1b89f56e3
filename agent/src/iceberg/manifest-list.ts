/**
 * A snapshot's manifest list (spec "Manifest Lists"): one `manifest_file` record per manifest,
 * fields found by field id (500-520) as `avro.ts` resolves them.
 *
 * - Format version 1 lists have no content or sequence numbers: content is data, sequence numbers
 *   0. A v2 list always carries them; an unassigned one (null or -1) is the snapshot's own.
 * - A v1 snapshot may list `manifests` instead of a manifest list; their spec id and content then
 *   come from each manifest's header (so such manifests are read twice: a legacy layout only),
 *   and their counts are unknown (null).
 * - Partition summaries keep their bounds as bytes (single-value form of the partition field's
 *   result type).
 */
import type { ObjectStore } from "../store/index.ts";
import { AvroFields, readAvroFile } from "./avro.ts";
import { IcebergError } from "./errors.ts";
import type { Snapshot } from "./metadata.ts";
import { type IcebergTable, keyOf } from "./table.ts";

export interface FieldSummary {
  containsNull: boolean;
  containsNan: boolean | null;
  lowerBound: Buffer | null;
  upperBound: Buffer | null;
}

export interface ManifestFile {
  /** As the list records it. */
  path: string;
  /** The store key, or null where the path lies outside the table. */
  key: string | null;
  length: number | null;
  specId: number;
  content: "data" | "deletes";
  sequenceNumber: number;
  minSequenceNumber: number;
  addedSnapshotId: bigint | null;
  addedFilesCount: number | null;
  existingFilesCount: number | null;
  deletedFilesCount: number | null;
  addedRowsCount: number | null;
  existingRowsCount: number | null;
  deletedRowsCount: number | null;
  partitions: FieldSummary[] | null;
  keyMetadata: Buffer | null;
}

/** The manifests of a snapshot, in list order. */
export async function readManifestList(
  store: ObjectStore,
  table: IcebergTable,
  snapshot: Snapshot,
): Promise<ManifestFile[]> {
  if (snapshot.manifestList === null)
    return Promise.all((snapshot.manifests ?? []).map((path) => fromHeader(store, table, path)));
  const key = requireKey(
    table,
    snapshot.manifestList,
    `the manifest list of snapshot ${snapshot.snapshotId}`,
  );
  const file = await readAvroFile(store, key);
  const f = new AvroFields(file.schema);
  const v1 = table.metadata.formatVersion === 1;
  return file.records.map((r) => {
    const path = String(f.get(r, 500, "manifest_path"));
    const sequence = (id: number, name: string) => {
      const n = optionalNumber(f.get(r, id, name));
      return v1 ? 0 : n === null || n === -1 ? snapshot.sequenceNumber : n;
    };
    return {
      path,
      key: keyOf(table, path),
      length: optionalNumber(f.get(r, 501, "manifest_length")),
      specId: optionalNumber(f.get(r, 502, "partition_spec_id")) ?? 0,
      content: optionalNumber(f.get(r, 517, "content")) === 1 ? "deletes" : "data",
      sequenceNumber: sequence(515, "sequence_number"),
      minSequenceNumber: sequence(516, "min_sequence_number"),
      addedSnapshotId: (f.get(r, 503, "added_snapshot_id") as bigint | null | undefined) ?? null,
      addedFilesCount: optionalNumber(f.get(r, 504, "added_files_count", "added_data_files_count")),
      existingFilesCount: optionalNumber(f.get(r, 505, "existing_files_count", "existing_data_files_count")),
      deletedFilesCount: optionalNumber(f.get(r, 506, "deleted_files_count", "deleted_data_files_count")),
      addedRowsCount: optionalNumber(f.get(r, 512, "added_rows_count")),
      existingRowsCount: optionalNumber(f.get(r, 513, "existing_rows_count")),
      deletedRowsCount: optionalNumber(f.get(r, 514, "deleted_rows_count")),
      partitions: summaries(f.get(r, 507, "partitions"), f.child(507, "partitions")),
      keyMetadata: (f.get(r, 519, "key_metadata") as Buffer | null | undefined) ?? null,
    };
  });
}

/** A v1 snapshot's manifest known only by its path: spec id and content from its header. */
async function fromHeader(store: ObjectStore, table: IcebergTable, path: string): Promise<ManifestFile> {
  const key = requireKey(table, path, "a manifest");
  const { meta } = await readAvroFile(store, key);
  return {
    path,
    key,
    length: null,
    specId: Number(meta["partition-spec-id"]?.toString() ?? 0),
    content: meta.content?.toString() === "deletes" ? "deletes" : "data",
    sequenceNumber: 0,
    minSequenceNumber: 0,
    addedSnapshotId: null,
    addedFilesCount: null,
    existingFilesCount: null,
    deletedFilesCount: null,
    addedRowsCount: null,
    existingRowsCount: null,
    deletedRowsCount: null,
    partitions: null,
    keyMetadata: null,
  };
}

function summaries(value: unknown, f: AvroFields): FieldSummary[] | null {
  if (!Array.isArray(value)) return null;
  return value.map((s: Record<string, unknown>) => ({
    containsNull: f.get(s, 509, "contains_null") === true,
    containsNan: (f.get(s, 518, "contains_nan") as boolean | null | undefined) ?? null,
    lowerBound: (f.get(s, 510, "lower_bound") as Buffer | null | undefined) ?? null,
    upperBound: (f.get(s, 511, "upper_bound") as Buffer | null | undefined) ?? null,
  }));
}

/** The key of a metadata file the table needs; a path outside the table can't be read from its store. */
export function requireKey(table: IcebergTable, path: string, what: string): string {
  const key = keyOf(table, path);
  if (key === null)
    throw new IcebergError(
      "unsupported",
      `${what} is recorded at ${path}, outside the table location '${table.metadata.location}' and the store root ${table.storeUri}`,
    );
  return key;
}

/** A count or length from Avro (`bigint` for long, `number` for int) as a number; null stays null. */
export function optionalNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new IcebergError("corrupt", `a manifest count of ${String(value)} is out of range`);
  return n;
}
