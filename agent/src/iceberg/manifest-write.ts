/**
 * Writing manifests and manifest lists (spec "Manifests", "Manifest Lists", Appendix A): the Avro
 * schemas a format-v1 or v2 writer uses, built with every `field-id` and `element-id` the spec
 * requires, and the records and summaries that go in them.
 *
 * - `manifest_entry` follows the spec's field order and the reference writer's record names (`r2`,
 *   `r102`, `k117_v118`); int-keyed maps are arrays of key/value records with logical type `map`.
 * - The partition struct (`r102`) has one optional field per partition field, named by it (made a
 *   valid Avro name as the reference writer does), with the partition field id and the Avro type
 *   of the transform's result type (`resultType`).
 * - A manifest list record is written from a `ManifestFile`, as `readManifestList` returns it, so
 *   an unchanged manifest is carried into a new list with the values it was read with.
 * - Partition summaries: null and NaN presence and the least and greatest other value per field,
 *   in the single-value binary form of the field's result type, over every entry of a manifest.
 */
import { type AvroFile, type AvroSchema, decodeAvroFile, encodeAvroFile } from "./avro.ts";
import { IcebergError } from "./errors.ts";
import type { FieldSummary, ManifestFile } from "./manifest-list.ts";
import type { PartitionField } from "./metadata.ts";
import { isPrimitive, type PrimitiveType } from "./schema.ts";
import { type IcebergTable, tableFieldIndex } from "./table.ts";
import { resultType, transformString } from "./transforms.ts";
import { decimalBytes, encodeValue, type IcebergDecimal, type IcebergValue, uuidBytes } from "./values.ts";

/** A partition field with the type of the values it holds. */
export interface TypedPartitionField extends PartitionField {
  type: PrimitiveType;
}

/** The spec's fields typed by their transforms' result types; refuses what a writer must not write. */
export function typedPartitionFields(table: IcebergTable, fields: PartitionField[]): TypedPartitionField[] {
  const types = tableFieldIndex(table);
  return fields.map((field) => {
    const source = types.get(field.sourceId)?.type;
    if (field.transform.kind === "unknown" || source === undefined)
      throw new IcebergError(
        "unsupported",
        `partition field '${field.name}' (${transformString(field.transform)} of column ${field.sourceId}) can't be written: ${source === undefined ? "no schema has its source column" : "its transform is unknown"}`,
      );
    const type = resultType(field.transform, source);
    if (!isPrimitive(type))
      throw new IcebergError("unsupported", `partition field '${field.name}' has a non-primitive type`);
    return { ...field, type };
  });
}

/** The `manifest_entry` Avro schema of a format version, with the partition struct of `fields`. */
export function manifestEntrySchema(formatVersion: number, fields: TypedPartitionField[]): AvroSchema {
  const v2 = formatVersion >= 2;
  const named = new Set<string>();
  const partition = fields.map((f) => optional(avroName(f.name), avroType(f.type, named), f.fieldId));
  const dataFile = [
    ...(v2 ? [required("content", "int", 134)] : []),
    required("file_path", "string", 100),
    required("file_format", "string", 101),
    required("partition", { type: "record", name: "r102", fields: partition }, 102),
    required("record_count", "long", 103),
    required("file_size_in_bytes", "long", 104),
    ...(v2 ? [] : [required("block_size_in_bytes", "long", 105)]),
    optional("column_sizes", intMap(117, 118, "long"), 108),
    optional("value_counts", intMap(119, 120, "long"), 109),
    optional("null_value_counts", intMap(121, 122, "long"), 110),
    optional("nan_value_counts", intMap(138, 139, "long"), 137),
    optional("lower_bounds", intMap(126, 127, "bytes"), 125),
    optional("upper_bounds", intMap(129, 130, "bytes"), 128),
    optional("key_metadata", "bytes", 131),
    optional("split_offsets", { type: "array", items: "long", "element-id": 133 }, 132),
    ...(v2 ? [optional("equality_ids", { type: "array", items: "int", "element-id": 136 }, 135)] : []),
    optional("sort_order_id", "int", 140),
    ...(v2 ? [optional("referenced_data_file", "string", 143)] : []),
  ];
  return {
    type: "record",
    name: "manifest_entry",
    fields: [
      required("status", "int", 0),
      optional("snapshot_id", "long", 1),
      ...(v2 ? [optional("sequence_number", "long", 3), optional("file_sequence_number", "long", 4)] : []),
      required("data_file", { type: "record", name: "r2", fields: dataFile }, 2),
    ],
  };
}

/** The `manifest_file` Avro schema of a format version (v1 counts are optional, v2 ones required). */
export function manifestListSchema(formatVersion: number): AvroSchema {
  const v2 = formatVersion >= 2;
  const count = (name: string, type: string, id: number) =>
    v2 ? required(name, type, id) : optional(name, type, id);
  const summary = {
    type: "record",
    name: "r508",
    fields: [
      required("contains_null", "boolean", 509),
      optional("contains_nan", "boolean", 518),
      optional("lower_bound", "bytes", 510),
      optional("upper_bound", "bytes", 511),
    ],
  };
  return {
    type: "record",
    name: "manifest_file",
    fields: [
      required("manifest_path", "string", 500),
      required("manifest_length", "long", 501),
      required("partition_spec_id", "int", 502),
      ...(v2
        ? [
            required("content", "int", 517),
            required("sequence_number", "long", 515),
            required("min_sequence_number", "long", 516),
          ]
        : []),
      required("added_snapshot_id", "long", 503),
      count("added_files_count", "int", 504),
      count("existing_files_count", "int", 505),
      count("deleted_files_count", "int", 506),
      count("added_rows_count", "long", 512),
      count("existing_rows_count", "long", 513),
      count("deleted_rows_count", "long", 514),
      optional("partitions", { type: "array", items: summary, "element-id": 508 }, 507),
      optional("key_metadata", "bytes", 519),
    ],
  };
}

/** A manifest list holding `manifests`, with the header keys the reference writer sets. */
export function encodeManifestList(
  formatVersion: number,
  meta: Record<string, string>,
  manifests: ManifestFile[],
): Buffer {
  const v2 = formatVersion >= 2;
  const big = (n: number | null) => (n === null ? null : BigInt(n));
  const records = manifests.map((m) => {
    if (m.addedSnapshotId === null || m.length === null)
      throw new Error(`manifest ${m.path} has no added snapshot id or length to list`);
    return {
      manifest_path: m.path,
      manifest_length: BigInt(m.length),
      partition_spec_id: m.specId,
      ...(v2
        ? {
            content: m.content === "deletes" ? 1 : 0,
            sequence_number: BigInt(m.sequenceNumber),
            min_sequence_number: BigInt(m.minSequenceNumber),
          }
        : {}),
      added_snapshot_id: m.addedSnapshotId,
      added_files_count: m.addedFilesCount,
      existing_files_count: m.existingFilesCount,
      deleted_files_count: m.deletedFilesCount,
      added_rows_count: big(m.addedRowsCount),
      existing_rows_count: big(m.existingRowsCount),
      deleted_rows_count: big(m.deletedRowsCount),
      partitions:
        m.partitions?.map((s) => ({
          contains_null: s.containsNull,
          contains_nan: s.containsNan,
          lower_bound: s.lowerBound,
          upper_bound: s.upperBound,
        })) ?? null,
      key_metadata: m.keyMetadata,
    };
  });
  return encodeNew(manifestListSchema(formatVersion), meta, records);
}

/** An Avro container of `records` under a schema built here, deflated as Iceberg writers do. */
export function encodeNew(schema: AvroSchema, meta: Record<string, string>, records: object[]): Buffer {
  const schemaText = JSON.stringify(schema);
  const bytes = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, Buffer.from(v)]));
  return encodeAvroFile({
    schemaText,
    meta: bytes,
    codec: "deflate",
    type: avroTypeOf(schemaText),
    records: records as Record<string, unknown>[],
  });
}

/**
 * The avsc type `avro.ts` reads `schemaText` with (longs as bigint), taken from a container with no
 * records, so that new files are encoded exactly as read ones are re-encoded.
 */
function avroTypeOf(schemaText: string): AvroFile["type"] {
  const header = encodeAvroFile({
    schemaText,
    meta: {},
    codec: "null",
    records: [],
    type: undefined as never,
  });
  return decodeAvroFile(header, "a new manifest schema").type;
}

/** A partition value as the partition struct holds it in Avro (the inverse of `fromAvroValue`). */
function toAvroValue(type: PrimitiveType, value: IcebergValue | null): unknown {
  if (value === null) return null;
  if (type.kind === "decimal") {
    const bytes = decimalBytes((value as IcebergDecimal).unscaled);
    const size = decimalSize(type.precision);
    const fill = (bytes[0] as number) & 0x80 ? 0xff : 0;
    return Buffer.concat([Buffer.alloc(Math.max(0, size - bytes.length), fill), bytes]);
  }
  if (type.kind === "fixed") return value;
  switch (type.name) {
    case "long":
    case "time":
    case "timestamp":
    case "timestamptz":
    case "timestamp_ns":
    case "timestamptz_ns":
      return BigInt(value as bigint);
    case "uuid":
      return uuidBytes(value as string);
    default:
      return value;
  }
}

/** A partition tuple (values by field id) as the partition struct's Avro record. */
export function partitionRecord(
  fields: TypedPartitionField[],
  tuple: ReadonlyMap<number, IcebergValue | null>,
): Record<string, unknown> {
  return Object.fromEntries(
    fields.map((f) => [avroName(f.name), toAvroValue(f.type, tuple.get(f.fieldId) ?? null)]),
  );
}

/** Partition summaries of a manifest's entries (partition tuples by field id). */
export function partitionSummaries(
  fields: TypedPartitionField[],
  tuples: readonly ReadonlyMap<number, IcebergValue | null>[],
): FieldSummary[] {
  return fields.map((field) => {
    let containsNull = false;
    let containsNan = false;
    let lower: IcebergValue | null = null;
    let upper: IcebergValue | null = null;
    for (const tuple of tuples) {
      const value = tuple.get(field.fieldId) ?? null;
      if (value === null) containsNull = true;
      else if (typeof value === "number" && Number.isNaN(value)) containsNan = true;
      else {
        if (lower === null || compareValues(value, lower) < 0) lower = value;
        if (upper === null || compareValues(value, upper) > 0) upper = value;
      }
    }
    return {
      containsNull,
      containsNan,
      lowerBound: lower === null ? null : encodeValue(field.type, lower),
      upperBound: upper === null ? null : encodeValue(field.type, upper),
    };
  });
}

/**
 * Orders two values of one type: numbers with -0 before +0, strings by code point (UTF-8 bytes),
 * UUIDs and bytes as unsigned bytes, decimals (of one scale) by unscaled value.
 */
function compareValues(a: IcebergValue, b: IcebergValue): number {
  if (typeof a === "string" && typeof b === "string") return Buffer.compare(Buffer.from(a), Buffer.from(b));
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return Buffer.compare(a, b);
  const x = typeof a === "object" ? (a as IcebergDecimal).unscaled : a;
  const y = typeof b === "object" ? (b as IcebergDecimal).unscaled : b;
  if (x < y) return -1;
  if (x > y) return 1;
  return Object.is(x, -0) && Object.is(y, 0) ? -1 : Object.is(x, 0) && Object.is(y, -0) ? 1 : 0;
}

/** The Avro type of a primitive (Appendix A); named fixed types are defined once per schema. */
function avroType(type: PrimitiveType, named: Set<string>): AvroSchema {
  const fixed = (name: string, size: number, extra: Record<string, unknown> = {}): AvroSchema => {
    if (named.has(name)) return name;
    named.add(name);
    return { type: "fixed", name, size, ...extra };
  };
  if (type.kind === "decimal")
    return fixed(`decimal_${type.precision}_${type.scale}`, decimalSize(type.precision), {
      logicalType: "decimal",
      precision: type.precision,
      scale: type.scale,
    });
  if (type.kind === "fixed") return fixed(`fixed_${type.length}`, type.length);
  const timestamp = (unit: string, utc: boolean) => ({
    type: "long",
    logicalType: `timestamp-${unit}`,
    "adjust-to-utc": utc,
  });
  switch (type.name) {
    case "date":
      return { type: "int", logicalType: "date" };
    case "time":
      return { type: "long", logicalType: "time-micros" };
    case "timestamp":
      return timestamp("micros", false);
    case "timestamptz":
      return timestamp("micros", true);
    case "timestamp_ns":
      return timestamp("nanos", false);
    case "timestamptz_ns":
      return timestamp("nanos", true);
    case "uuid":
      return fixed("uuid_fixed", 16, { logicalType: "uuid" });
    case "binary":
      return "bytes";
    default:
      return type.name;
  }
}

/** Bytes of the smallest two's-complement fixed that holds every unscaled value of `precision` digits. */
function decimalSize(precision: number): number {
  let size = 1;
  while (1n << BigInt(8 * size - 1) < 10n ** BigInt(precision)) size++;
  return size;
}

/** A valid Avro name for `name`, as the reference writer makes one (`a-b` → `a_x2Db`, `1a` → `_1a`). */
function avroName(name: string): string {
  return [...name]
    .map((c, i) => {
      if (/[A-Za-z_]/.test(c) || (i > 0 && /[0-9]/.test(c))) return c;
      return /[0-9]/.test(c) ? `_${c}` : `_x${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}`;
    })
    .join("");
}

function required(name: string, type: AvroSchema, id: number) {
  return { name, type, "field-id": id };
}

function optional(name: string, type: AvroSchema, id: number) {
  return { name, type: ["null", type], default: null, "field-id": id };
}

/** A map with int keys: an array of key/value records with logical type `map`. */
function intMap(keyId: number, valueId: number, value: string): AvroSchema {
  return {
    type: "array",
    logicalType: "map",
    items: {
      type: "record",
      name: `k${keyId}_v${valueId}`,
      fields: [required("key", "int", keyId), required("value", value, valueId)],
    },
  };
}
