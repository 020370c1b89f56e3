/**
 * The manifests of a new `replace` or `append` snapshot, written before its manifest list (spec
 * "Manifests", "Sequence Number Inheritance"):
 * - added files go in a new manifest per partition spec, as ADDED entries with the new snapshot id
 *   and, in v2, null sequence numbers that inherit the manifest's (the new snapshot's);
 * - a manifest holding a removed file is rewritten under its own writer schema and header: removed
 *   files become DELETED by the new snapshot, other live files EXISTING, both with their snapshot
 *   id and, in v2, both sequence numbers written out; entries already DELETED are dropped;
 * - every other manifest is listed again as it was read, except one a v1 snapshot named without a
 *   manifest list, whose counts, partition summaries and snapshot id are read from its entries (as
 *   the reference writer does: the first ADDED or DELETED entry's snapshot, else the newest).
 * Nothing is written here; the caller writes the bytes returned.
 */
import type { ObjectStore } from "../store/index.ts";
import { AvroFields, encodeAvroFile, readAvroFile } from "./avro.ts";
import { IcebergError } from "./errors.ts";
import { stringifyJson } from "./json.ts";
import { decodeManifestEntries, type ManifestEntry, readManifestEntries } from "./manifest.ts";
import { type ManifestFile, requireKey } from "./manifest-list.ts";
import {
  encodeNew,
  manifestEntrySchema,
  partitionRecord,
  partitionSummaries,
  type TypedPartitionField,
  typedPartitionFields,
} from "./manifest-write.ts";
import { type IcebergTable, partitionSpecById } from "./table.ts";
import { transformString } from "./transforms.ts";
import type { IcebergValue } from "./values.ts";

/** One new data file to add (a Parquet file already written under the table's location). */
export interface NewDataFile {
  /** Relative to the store root. */
  key: string;
  fileSizeInBytes: number;
  recordCount: number;
  /** The partition spec the tuple below is for. */
  specId: number;
  /** The partition tuple by partition field id (values as `values.ts` types them), null allowed. */
  partition: Map<number, IcebergValue | null>;
  /** Metrics by column field id (omit a map entry where unknown). */
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  /** Already in the single-value binary form (`encodeValue`). */
  lowerBounds: Map<number, Buffer>;
  upperBounds: Map<number, Buffer>;
}

/** What the new snapshot is: its id and sequence number (0 in v1), and where its files go. */
export interface NewSnapshot {
  table: IcebergTable;
  snapshotId: bigint;
  sequenceNumber: number;
  /** The absolute location recorded for a key. */
  uriOf(key: string): string;
  /** A fresh key for a new manifest. */
  manifestKey(): string;
}

export interface WrittenManifest {
  key: string;
  bytes: Buffer;
  /** Its record in the new manifest list. */
  manifest: ManifestFile;
}

/** Reference writers' default, which v1 requires to be written. */
const V1_BLOCK_SIZE = 67_108_864n;
const STATUS = { existing: 0, added: 1, deleted: 2 } as const;

/** A new manifest of ADDED entries for `files`, all of partition spec `specId`. */
export function addedManifest(
  to: NewSnapshot,
  specId: number,
  files: readonly NewDataFile[],
): WrittenManifest {
  const { table } = to;
  const v2 = table.metadata.formatVersion >= 2;
  const fields = typedPartitionFields(table, partitionSpecById(table, specId).fields);
  const pairs = (map: Map<number, bigint | Buffer>) =>
    map.size === 0 ? null : [...map].map(([key, value]) => ({ key, value }));
  const records = files.map((file) => {
    for (const f of fields)
      if (!file.partition.has(f.fieldId))
        throw new Error(`new file ${file.key} has no value for partition field '${f.name}' (${f.fieldId})`);
    return {
      status: STATUS.added,
      snapshot_id: to.snapshotId,
      ...(v2 ? { sequence_number: null, file_sequence_number: null } : {}),
      data_file: {
        ...(v2 ? { content: 0 } : {}),
        file_path: to.uriOf(file.key),
        file_format: "PARQUET",
        partition: partitionRecord(fields, file.partition),
        record_count: BigInt(file.recordCount),
        file_size_in_bytes: BigInt(file.fileSizeInBytes),
        ...(v2 ? {} : { block_size_in_bytes: V1_BLOCK_SIZE }),
        column_sizes: null,
        value_counts: pairs(file.valueCounts),
        null_value_counts: pairs(file.nullValueCounts),
        nan_value_counts: null,
        lower_bounds: pairs(file.lowerBounds),
        upper_bounds: pairs(file.upperBounds),
        key_metadata: null,
        split_offsets: null,
        ...(v2 ? { equality_ids: null, referenced_data_file: null } : {}),
        sort_order_id: null,
      },
    };
  });
  const key = to.manifestKey();
  const bytes = encodeNew(
    manifestEntrySchema(table.metadata.formatVersion, fields),
    header(table, specId),
    records,
  );
  const entries = files.map((f) => ({
    status: "added" as const,
    recordCount: f.recordCount,
    dataSequenceNumber: to.sequenceNumber,
    partitionById: f.partition,
  }));
  return { key, bytes, manifest: describe(to, key, bytes.length, specId, fields, entries) };
}

/** `manifest` again, with the entries for `removed` paths DELETED and its other live entries EXISTING. */
export async function rewrittenManifest(
  store: ObjectStore,
  to: NewSnapshot,
  manifest: ManifestFile,
  removed: ReadonlySet<string>,
): Promise<WrittenManifest> {
  const { table } = to;
  const v2 = table.metadata.formatVersion >= 2;
  const file = await readAvroFile(store, manifest.key ?? requireKey(table, manifest.path, "a manifest"));
  const e = new AvroFields(file.schema);
  const ids = new Set(e.ids().map(([id]) => id));
  if (v2 && !(ids.has(3) && ids.has(4)))
    throw new IcebergError(
      "unsupported",
      `manifest ${manifest.path} was written for format version 1 (it has no sequence numbers); the agent does not rewrite such manifests in a v2 table`,
    );
  const entries = decodeManifestEntries(table, manifest, file);
  const records: Record<string, unknown>[] = [];
  const kept: { status: ManifestEntry["status"]; entry: ManifestEntry }[] = [];
  file.records.forEach((record, i) => {
    const entry = entries[i] as ManifestEntry;
    if (entry.status === "deleted") return;
    const status = removed.has(entry.path) ? "deleted" : "existing";
    e.set(record, 0, "status", STATUS[status]);
    e.set(record, 1, "snapshot_id", status === "deleted" ? to.snapshotId : entry.snapshotId);
    if (v2) {
      e.set(record, 3, "sequence_number", BigInt(entry.dataSequenceNumber));
      e.set(record, 4, "file_sequence_number", BigInt(entry.fileSequenceNumber));
    }
    records.push(record);
    kept.push({ status, entry });
  });
  const key = to.manifestKey();
  const bytes = encodeAvroFile({ ...file, records });
  const fields = typedPartitionFields(table, partitionSpecById(table, manifest.specId).fields);
  const described = kept.map(({ status, entry }) => ({ ...entry, status }));
  return { key, bytes, manifest: describe(to, key, bytes.length, manifest.specId, fields, described) };
}

/**
 * `manifest` as the new manifest list records it: as read, or, where a v1 snapshot named it without
 * a list (no snapshot id, length or counts), with those read from the manifest itself.
 */
export async function carriedManifest(
  store: ObjectStore,
  table: IcebergTable,
  manifest: ManifestFile,
): Promise<ManifestFile> {
  if (manifest.addedSnapshotId !== null && manifest.length !== null && manifest.addedFilesCount !== null)
    return manifest;
  const key = manifest.key ?? requireKey(table, manifest.path, "a manifest");
  const entries = await readManifestEntries(store, table, manifest);
  const length = (await store.head(key))?.size;
  if (length === undefined) throw new IcebergError("corrupt", `manifest ${manifest.path} does not exist`);
  const changed = entries.find((e) => e.status !== "existing");
  const newest = entries.reduce<bigint | null>(
    (n, e) => (n === null || e.snapshotId > n ? e.snapshotId : n),
    null,
  );
  const addedSnapshotId = changed?.snapshotId ?? newest;
  if (addedSnapshotId === null)
    throw new IcebergError(
      "unsupported",
      `manifest ${manifest.path} has no entries to take a snapshot id from`,
    );
  const fields = typedPartitionFields(table, partitionSpecById(table, manifest.specId).fields);
  return {
    ...manifest,
    ...counts(entries),
    length,
    addedSnapshotId,
    partitions: partitionSummaries(
      fields,
      entries.map((e) => e.partitionById),
    ),
  };
}

interface Described {
  status: ManifestEntry["status"];
  recordCount: number;
  dataSequenceNumber: number;
  partitionById: ReadonlyMap<number, IcebergValue | null>;
}

/** The list record of a manifest this snapshot writes. */
function describe(
  to: NewSnapshot,
  key: string,
  length: number,
  specId: number,
  fields: TypedPartitionField[],
  entries: readonly Described[],
): ManifestFile {
  const live = entries.filter((e) => e.status !== "deleted").map((e) => e.dataSequenceNumber);
  return {
    path: to.uriOf(key),
    key,
    length,
    specId,
    content: "data",
    sequenceNumber: to.sequenceNumber,
    minSequenceNumber: live.reduce((min, n) => Math.min(min, n), to.sequenceNumber),
    addedSnapshotId: to.snapshotId,
    ...counts(entries),
    partitions: partitionSummaries(
      fields,
      entries.map((e) => e.partitionById),
    ),
    keyMetadata: null,
  };
}

function counts(entries: readonly Pick<Described, "status" | "recordCount">[]) {
  const of = (status: Described["status"]) => entries.filter((e) => e.status === status);
  const rows = (list: readonly Pick<Described, "recordCount">[]) =>
    list.reduce((n, e) => n + e.recordCount, 0);
  const [added, existing, deleted] = [of("added"), of("existing"), of("deleted")];
  return {
    addedFilesCount: added.length,
    existingFilesCount: existing.length,
    deletedFilesCount: deleted.length,
    addedRowsCount: rows(added),
    existingRowsCount: rows(existing),
    deletedRowsCount: rows(deleted),
  };
}

/** The header keys a manifest must carry (spec "Manifests"): the schema and partition spec it was written with. */
function header(table: IcebergTable, specId: number): Record<string, string> {
  const { metadata } = table;
  const schemas = metadata.raw.schemas as Record<string, unknown>[] | undefined;
  const schema =
    schemas?.find((s) => Number(s["schema-id"] ?? 0) === metadata.currentSchemaId) ?? metadata.raw.schema;
  const fields = partitionSpecById(table, specId).fields.map((f) => ({
    name: f.name,
    transform: transformString(f.transform),
    "source-id": f.sourceId,
    "field-id": f.fieldId,
  }));
  return {
    schema: stringifyJson(schema),
    "schema-id": String(metadata.currentSchemaId),
    "partition-spec": JSON.stringify(fields),
    "partition-spec-id": String(specId),
    "format-version": String(metadata.formatVersion),
    ...(metadata.formatVersion >= 2 ? { content: "data" } : {}),
  };
}
