/**
 * The table metadata file (spec "Table Metadata"), format versions 1, 2 and later, parsed once by
 * one zod schema into `TableMetadata`. The parsed JSON is kept as `raw`, with 64-bit ids exact
 * (`json.ts`), so a commit can write the next metadata from it without dropping fields this
 * reader does not model.
 *
 * Version 1 differences filled in here, as the spec says readers must:
 * - `schema`/`partition-spec` stand in for absent `schemas`/`partition-specs` (ids 0); partition
 *   fields without `field-id` number from 1000.
 * - snapshots without `sequence-number` have 0, as does `last-sequence-number`; a snapshot may list
 *   `manifests` instead of a `manifest-list`.
 * - without `refs`, `main` is the branch at `current-snapshot-id`; an id of -1 means none.
 * A newer format version still parses (unknown fields are kept in `raw`) so that it can be refused
 * with a reason rather than fail to load.
 */
import { z } from "zod";
import { IcebergError } from "./errors.ts";
import { type IcebergSchema, parseSchema } from "./schema.ts";
import { parseTransform, type Transform } from "./transforms.ts";

export interface PartitionField {
  sourceId: number;
  fieldId: number;
  name: string;
  transform: Transform;
}

export interface PartitionSpec {
  specId: number;
  fields: PartitionField[];
}

export interface SortField {
  sourceId: number;
  transform: Transform;
  direction: string;
  nullOrder: string;
}

export interface SortOrder {
  orderId: number;
  fields: SortField[];
}

export interface Snapshot {
  snapshotId: bigint;
  parentSnapshotId: bigint | null;
  /** 0 in format version 1. */
  sequenceNumber: number;
  timestampMs: number;
  /** The manifest list's location as recorded; null for a v1 snapshot that lists `manifests`. */
  manifestList: string | null;
  /** v1 only: the manifests' locations, where there is no manifest list. */
  manifests: string[] | null;
  summary: Record<string, string>;
  schemaId: number | null;
}

export interface SnapshotRef {
  snapshotId: bigint;
  type: "branch" | "tag";
  minSnapshotsToKeep: number | null;
  maxSnapshotAgeMs: number | null;
  maxRefAgeMs: number | null;
}

export interface StatisticsFile {
  snapshotId: bigint;
  path: string;
  fileSizeInBytes: number;
}

export interface TableMetadata {
  formatVersion: number;
  tableUuid: string | null;
  location: string;
  lastSequenceNumber: number;
  lastUpdatedMs: number;
  lastColumnId: number;
  currentSchemaId: number;
  schemas: IcebergSchema[];
  defaultSpecId: number;
  partitionSpecs: PartitionSpec[];
  lastPartitionId: number | null;
  defaultSortOrderId: number;
  sortOrders: SortOrder[];
  properties: Record<string, string>;
  /** Null when the table has no snapshot yet. */
  currentSnapshotId: bigint | null;
  snapshots: Snapshot[];
  snapshotLog: { timestampMs: number; snapshotId: bigint }[];
  metadataLog: { timestampMs: number; metadataFile: string }[];
  refs: Record<string, SnapshotRef>;
  statistics: StatisticsFile[];
  partitionStatistics: StatisticsFile[];
  /** The table's `encryption-keys`, as recorded; null when absent. */
  encryptionKeys: unknown[] | null;
  /** The whole metadata JSON as parsed, unknown fields included. */
  raw: Record<string, unknown>;
}

const Id = z.union([z.number().int(), z.bigint()]).transform((v) => BigInt(v));
const OptionalId = Id.nullish().transform((v) => (v === undefined || v === null || v === -1n ? null : v));
const Int = z.number().int();
const Text = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const PartitionFieldJson = z.object({
  "source-id": Int.optional(),
  "source-ids": z.array(Int).optional(),
  "field-id": Int.optional(),
  name: z.string(),
  transform: z.string(),
});
const SpecJson = z.object({ "spec-id": Int, fields: z.array(PartitionFieldJson) });

const SortOrderJson = z.object({
  "order-id": Int,
  fields: z.array(
    z.object({
      "source-id": Int.optional(),
      "source-ids": z.array(Int).optional(),
      transform: z.string(),
      direction: z.string(),
      "null-order": z.string(),
    }),
  ),
});

const SnapshotJson = z.object({
  "snapshot-id": Id,
  "parent-snapshot-id": OptionalId,
  "sequence-number": Int.optional(),
  "timestamp-ms": Int,
  "manifest-list": z.string().optional(),
  manifests: z.array(z.string()).optional(),
  summary: z.record(z.string(), Text).optional(),
  "schema-id": Int.optional(),
});

const RefJson = z.object({
  "snapshot-id": Id,
  type: z.enum(["branch", "tag"]),
  "min-snapshots-to-keep": Int.nullish(),
  "max-snapshot-age-ms": Int.nullish(),
  "max-ref-age-ms": Int.nullish(),
});

const StatisticsJson = z.object({
  "snapshot-id": Id,
  "statistics-path": z.string(),
  "file-size-in-bytes": Int,
});

const MetadataJson = z.object({
  "format-version": Int.min(1),
  "table-uuid": z.string().optional(),
  location: z.string(),
  "last-sequence-number": Int.optional(),
  "last-updated-ms": Int,
  "last-column-id": Int,
  schemas: z.array(z.unknown()).optional(),
  schema: z.unknown().optional(),
  "current-schema-id": Int.optional(),
  "partition-specs": z.array(SpecJson).optional(),
  "partition-spec": z.array(PartitionFieldJson).optional(),
  "default-spec-id": Int.optional(),
  "last-partition-id": Int.optional(),
  "sort-orders": z.array(SortOrderJson).optional(),
  "default-sort-order-id": Int.optional(),
  properties: z.record(z.string(), Text).optional(),
  "current-snapshot-id": OptionalId,
  snapshots: z.array(SnapshotJson).optional(),
  "snapshot-log": z.array(z.object({ "timestamp-ms": Int, "snapshot-id": Id })).optional(),
  "metadata-log": z.array(z.object({ "timestamp-ms": Int, "metadata-file": z.string() })).optional(),
  refs: z.record(z.string(), RefJson).optional(),
  statistics: z.array(StatisticsJson).optional(),
  "partition-statistics": z.array(StatisticsJson).optional(),
  "encryption-keys": z.array(z.unknown()).optional(),
});

/** Parses metadata JSON (as `parseJson` returns it); `where` names the file in errors. */
export function parseTableMetadata(json: unknown, where: string): TableMetadata {
  const result = MetadataJson.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new IcebergError(
      "corrupt",
      `${where} is not Iceberg table metadata: ${issue?.path.join(".") || "(top level)"}: ${issue?.message}`,
    );
  }
  const m = result.data;
  const schemas = (m.schemas ?? (m.schema === undefined ? [] : [m.schema])).map(parseSchema);
  if (schemas.length === 0) throw new IcebergError("corrupt", `${where} has neither 'schemas' nor 'schema'`);
  const specs =
    m["partition-specs"] ?? (m["partition-spec"] ? [{ "spec-id": 0, fields: m["partition-spec"] }] : []);
  const currentSnapshotId = m["current-snapshot-id"];
  const refs = Object.fromEntries(Object.entries(m.refs ?? {}).map(([name, ref]) => [name, toRef(ref)]));
  if (!m.refs && currentSnapshotId !== null)
    refs.main = {
      snapshotId: currentSnapshotId,
      type: "branch",
      minSnapshotsToKeep: null,
      maxSnapshotAgeMs: null,
      maxRefAgeMs: null,
    };
  return {
    formatVersion: m["format-version"],
    tableUuid: m["table-uuid"] ?? null,
    location: m.location,
    lastSequenceNumber: m["last-sequence-number"] ?? 0,
    lastUpdatedMs: m["last-updated-ms"],
    lastColumnId: m["last-column-id"],
    currentSchemaId: m["current-schema-id"] ?? schemas[0]?.schemaId ?? 0,
    schemas,
    defaultSpecId: m["default-spec-id"] ?? specs[0]?.["spec-id"] ?? 0,
    partitionSpecs: specs.map((s) => ({
      specId: s["spec-id"],
      fields: s.fields.map((f, i) => ({
        sourceId: f["source-id"] ?? f["source-ids"]?.[0] ?? -1,
        fieldId: f["field-id"] ?? 1000 + i,
        name: f.name,
        transform: parseTransform(f.transform),
      })),
    })),
    lastPartitionId: m["last-partition-id"] ?? null,
    defaultSortOrderId: m["default-sort-order-id"] ?? 0,
    sortOrders: (m["sort-orders"] ?? []).map((o) => ({
      orderId: o["order-id"],
      fields: o.fields.map((f) => ({
        sourceId: f["source-id"] ?? f["source-ids"]?.[0] ?? -1,
        transform: parseTransform(f.transform),
        direction: f.direction,
        nullOrder: f["null-order"],
      })),
    })),
    properties: m.properties ?? {},
    currentSnapshotId,
    snapshots: (m.snapshots ?? []).map((s) => ({
      snapshotId: s["snapshot-id"],
      parentSnapshotId: s["parent-snapshot-id"],
      sequenceNumber: s["sequence-number"] ?? 0,
      timestampMs: s["timestamp-ms"],
      manifestList: s["manifest-list"] ?? null,
      manifests: s.manifests ?? null,
      summary: s.summary ?? {},
      schemaId: s["schema-id"] ?? null,
    })),
    snapshotLog: (m["snapshot-log"] ?? []).map((e) => ({
      timestampMs: e["timestamp-ms"],
      snapshotId: e["snapshot-id"],
    })),
    metadataLog: (m["metadata-log"] ?? []).map((e) => ({
      timestampMs: e["timestamp-ms"],
      metadataFile: e["metadata-file"],
    })),
    refs,
    statistics: (m.statistics ?? []).map(toStatistics),
    partitionStatistics: (m["partition-statistics"] ?? []).map(toStatistics),
    encryptionKeys: m["encryption-keys"] ?? null,
    raw: json as Record<string, unknown>,
  };
}

function toRef(ref: z.infer<typeof RefJson>): SnapshotRef {
  return {
    snapshotId: ref["snapshot-id"],
    type: ref.type,
    minSnapshotsToKeep: ref["min-snapshots-to-keep"] ?? null,
    maxSnapshotAgeMs: ref["max-snapshot-age-ms"] ?? null,
    maxRefAgeMs: ref["max-ref-age-ms"] ?? null,
  };
}

function toStatistics(s: z.infer<typeof StatisticsJson>): StatisticsFile {
  return {
    snapshotId: s["snapshot-id"],
    path: s["statistics-path"],
    fileSizeInBytes: s["file-size-in-bytes"],
  };
}
