/**
 * Manifest entries (spec "Manifests"): one per data or delete file, with its partition tuple and
 * column statistics, fields found by field id (0-4, 100-145) as `avro.ts` resolves them.
 *
 * Inheritance (spec "Sequence Number Inheritance", "Snapshot ID Inheritance"):
 * - a null `snapshot_id` is the manifest's `added_snapshot_id`;
 * - a null data or file sequence number is the manifest's sequence number when the entry is ADDED
 *   (or the manifest's number is 0, as for manifests from v1); any other null is corrupt;
 * - in format version 1 every sequence number is 0.
 * Partition values are typed by the spec's transform result type over the source column's type;
 * bounds are decoded by the column's type (`values.ts`); bounds of columns no schema knows, or of
 * nested types, are left out.
 */
import type { ObjectStore } from "../store/index.ts";
import { AvroFields, type AvroFile, readAvroFile } from "./avro.ts";
import { IcebergError } from "./errors.ts";
import type { ManifestFile } from "./manifest-list.ts";
import { optionalNumber, requireKey } from "./manifest-list.ts";
import type { PartitionField } from "./metadata.ts";
import { isPrimitive } from "./schema.ts";
import { type IcebergTable, keyOf, partitionSpecById, tableFieldIndex } from "./table.ts";
import { canTransform, parseTransform, resultType } from "./transforms.ts";
import { decodeValue, fromAvroValue, type IcebergValue } from "./values.ts";

export type EntryStatus = "existing" | "added" | "deleted";
export type FileContent = "data" | "position_deletes" | "equality_deletes";

const STATUS: EntryStatus[] = ["existing", "added", "deleted"];
const CONTENT: FileContent[] = ["data", "position_deletes", "equality_deletes"];

export interface ManifestEntry {
  status: EntryStatus;
  /** The snapshot that added (or, for a deleted entry, removed) the file. */
  snapshotId: bigint;
  dataSequenceNumber: number;
  fileSequenceNumber: number;
  content: FileContent;
  /** As the manifest records it. */
  path: string;
  /** The store key, or null where the path lies outside the table. */
  key: string | null;
  /** As recorded: `PARQUET`, `AVRO`, `ORC`, `PUFFIN`. */
  format: string;
  specId: number;
  /** Partition values by partition field name. */
  partition: Record<string, IcebergValue | null>;
  /** The same values by partition field id. */
  partitionById: Map<number, IcebergValue | null>;
  recordCount: number;
  fileSizeInBytes: number;
  columnSizes: Map<number, number>;
  valueCounts: Map<number, number>;
  nullValueCounts: Map<number, number>;
  nanValueCounts: Map<number, number>;
  lowerBounds: Map<number, IcebergValue>;
  upperBounds: Map<number, IcebergValue>;
  keyMetadata: Buffer | null;
  splitOffsets: number[] | null;
  equalityIds: number[] | null;
  sortOrderId: number | null;
  /** v3 deletion vectors: the data file whose rows they delete. */
  referencedDataFile: string | null;
  /** The manifest the entry was read from. */
  manifest: ManifestFile;
}

/** Every entry of a manifest, deleted ones included, in file order. */
export async function readManifestEntries(
  store: ObjectStore,
  table: IcebergTable,
  manifest: ManifestFile,
): Promise<ManifestEntry[]> {
  const key = manifest.key ?? requireKey(table, manifest.path, "a manifest");
  return decodeManifestEntries(table, manifest, await readAvroFile(store, key));
}

/** The entries of a decoded manifest file. */
export function decodeManifestEntries(
  table: IcebergTable,
  manifest: ManifestFile,
  file: AvroFile,
): ManifestEntry[] {
  const e = new AvroFields(file.schema);
  const d = e.child(2, "data_file");
  const decodePartition = partitionDecoder(table, manifest, file, d.child(102, "partition"));
  const bounds = boundsDecoder(table);
  const where = `manifest ${manifest.path}`;
  return file.records.map((r) => {
    const status = STATUS[Number(e.get(r, 0, "status"))];
    if (!status)
      throw new IcebergError("corrupt", `${where} has an entry with status ${String(e.get(r, 0, "status"))}`);
    const df = e.get(r, 2, "data_file") as Record<string, unknown>;
    const path = String(d.get(df, 100, "file_path"));
    const content = CONTENT[optionalNumber(d.get(df, 134, "content")) ?? 0];
    if (!content)
      throw new IcebergError(
        "corrupt",
        `${where} has file ${path} with content ${String(d.get(df, 134, "content"))}`,
      );
    const inherited = (id: number, name: string) => {
      if (table.metadata.formatVersion === 1) return 0;
      const n = optionalNumber(e.get(r, id, name));
      if (n !== null) return n;
      if (status === "added" || manifest.sequenceNumber === 0) return manifest.sequenceNumber;
      throw new IcebergError(
        "corrupt",
        `${where} has ${status} file ${path} without a ${name}, which only added files may inherit`,
      );
    };
    const snapshotId = (e.get(r, 1, "snapshot_id") as bigint | null | undefined) ?? manifest.addedSnapshotId;
    if (snapshotId === null)
      throw new IcebergError("corrupt", `${where} has file ${path} with no snapshot id to inherit`);
    const partition = decodePartition(d.get(df, 102, "partition") as Record<string, unknown>);
    const counts = (id: number, name: string) => countMap(d.get(df, id, name), d.child(id, name));
    return {
      status,
      snapshotId,
      dataSequenceNumber: inherited(3, "sequence_number"),
      fileSequenceNumber: inherited(4, "file_sequence_number"),
      content,
      path,
      key: keyOf(table, path),
      format: String(d.get(df, 101, "file_format")),
      specId: manifest.specId,
      partition: Object.fromEntries(partition.map((p) => [p.field.name, p.value])),
      partitionById: new Map(partition.map((p) => [p.field.fieldId, p.value])),
      recordCount: optionalNumber(d.get(df, 103, "record_count")) ?? 0,
      fileSizeInBytes: optionalNumber(d.get(df, 104, "file_size_in_bytes")) ?? 0,
      columnSizes: counts(108, "column_sizes"),
      valueCounts: counts(109, "value_counts"),
      nullValueCounts: counts(110, "null_value_counts"),
      nanValueCounts: counts(137, "nan_value_counts"),
      lowerBounds: bounds(d.get(df, 125, "lower_bounds"), d.child(125, "lower_bounds")),
      upperBounds: bounds(d.get(df, 128, "upper_bounds"), d.child(128, "upper_bounds")),
      keyMetadata: (d.get(df, 131, "key_metadata") as Buffer | null | undefined) ?? null,
      splitOffsets: numberList(d.get(df, 132, "split_offsets")),
      equalityIds: numberList(d.get(df, 135, "equality_ids")),
      sortOrderId: optionalNumber(d.get(df, 140, "sort_order_id")),
      referencedDataFile: (d.get(df, 143, "referenced_data_file") as string | null | undefined) ?? null,
      manifest,
    };
  });
}

/**
 * Reads a partition tuple by the manifest's spec: the table's spec with that id, or, where the
 * table no longer has it, the spec the manifest header records.
 */
function partitionDecoder(table: IcebergTable, manifest: ManifestFile, file: AvroFile, p: AvroFields) {
  const fields = specFields(table, manifest, file);
  const types = tableFieldIndex(table);
  return (tuple: Record<string, unknown> | null | undefined) =>
    fields.map((field) => {
      const raw = tuple ? p.get(tuple, field.fieldId, field.name) : null;
      const source = types.get(field.sourceId)?.type;
      const known = source !== undefined && canTransform(field.transform, source);
      const type = known ? resultType(field.transform, source) : undefined;
      // A transform or source type the agent does not know keeps the value as avsc decoded it.
      const value =
        type && isPrimitive(type) ? fromAvroValue(type, raw) : ((raw ?? null) as IcebergValue | null);
      return { field, value };
    });
}

function specFields(table: IcebergTable, manifest: ManifestFile, file: AvroFile): PartitionField[] {
  if (table.metadata.partitionSpecs.some((s) => s.specId === manifest.specId))
    return partitionSpecById(table, manifest.specId).fields;
  const json = file.meta["partition-spec"]?.toString();
  if (!json)
    throw new IcebergError(
      "corrupt",
      `manifest ${manifest.path} uses partition spec ${manifest.specId}, which the table does not have`,
    );
  return (
    JSON.parse(json) as { "source-id": number; "field-id": number; name: string; transform: string }[]
  ).map((f) => ({
    sourceId: f["source-id"],
    fieldId: f["field-id"],
    name: f.name,
    transform: parseTransform(f.transform),
  }));
}

/** Decodes a column-id → bound map by each column's type in the table's schemas. */
function boundsDecoder(table: IcebergTable) {
  const types = tableFieldIndex(table);
  return (value: unknown, kv: AvroFields): Map<number, IcebergValue> => {
    const out = new Map<number, IcebergValue>();
    for (const [id, bytes] of pairs(value, kv)) {
      const type = types.get(Number(id))?.type;
      if (type && isPrimitive(type) && Buffer.isBuffer(bytes)) out.set(Number(id), decodeValue(type, bytes));
    }
    return out;
  };
}

function countMap(value: unknown, kv: AvroFields): Map<number, number> {
  return new Map(pairs(value, kv).map(([k, v]) => [Number(k), optionalNumber(v) ?? 0]));
}

/** Avro maps with int keys are arrays of key/value records in Iceberg manifests; string-keyed ones are objects. */
function pairs(value: unknown, kv: AvroFields): [unknown, unknown][] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) return Object.entries(value as Record<string, unknown>);
  const [[keyId] = [], [valueId] = []] = kv.ids();
  return value.map((r: Record<string, unknown>) => [
    kv.get(r, keyId ?? -1, "key"),
    kv.get(r, valueId ?? -1, "value"),
  ]);
}

function numberList(value: unknown): number[] | null {
  return Array.isArray(value) ? value.map((v) => optionalNumber(v) ?? 0) : null;
}
