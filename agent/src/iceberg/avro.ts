/**
 * Avro object container files, as Iceberg writes its manifest lists and manifests, read whole
 * from memory with avsc (they are metadata, small next to the data they describe).
 *
 * - Records are decoded with the writer's own schema, so field names are those the writer chose;
 *   `AvroFields` finds a field by its Iceberg `field-id` attribute first and by the spec's name
 *   second, which is how Iceberg itself resolves them.
 * - Every Avro `long` is a `bigint` (snapshot ids use all 64 bits); `int` stays a `number`.
 * - Codecs: `null` and `deflate` (the ones Iceberg writers use by default); any other is refused
 *   by name. Each block's sync marker is checked against the header's.
 * - `encodeAvroFile` writes records back under the exact schema text and header metadata it is
 *   given, so a rewritten manifest keeps its field ids and Iceberg's header keys.
 */
import { randomBytes } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import avro from "avsc";
import { type ObjectStore, readAll } from "../store/index.ts";
import { IcebergError } from "./errors.ts";

type Type = InstanceType<typeof avro.Type>;

/** Avro `long` as `bigint`: avsc hands over the 8 little-endian bytes of the value. */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint | number) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: (n: number | string) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === "bigint" || Number.isSafeInteger(n),
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

/** avsc's hook for every schema node: `long`, however spelled (`"long"`, `{ type: "long", ... }`), is a bigint. */
const bigintLongs = (schema: unknown) =>
  schema === "long" ||
  (typeof schema === "object" && schema !== null && (schema as { type?: unknown }).type === "long")
    ? BIGINT_LONG
    : undefined;

const MAGIC = Buffer.from("Obj\u0001", "latin1");
const HEADER = avro.Type.forSchema({
  type: "record",
  name: "org.apache.avro.file.Header",
  fields: [
    { name: "magic", type: { type: "fixed", name: "Magic", size: 4 } },
    { name: "meta", type: { type: "map", values: "bytes" } },
    { name: "sync", type: { type: "fixed", name: "Sync", size: 16 } },
  ],
});
const LONG = avro.Type.forSchema("long");

export interface AvroFile {
  /** The writer schema as JSON, with its Iceberg attributes (`field-id`, `element-id`, ...). */
  schema: AvroSchema;
  /** The writer schema exactly as the header holds it. */
  schemaText: string;
  /** Header metadata other than `avro.schema` and `avro.codec` (Iceberg's `schema`, `partition-spec`, ...). */
  meta: Record<string, Buffer>;
  codec: string;
  /** The type records were decoded with; encodes them back. */
  type: Type;
  records: Record<string, unknown>[];
}

/** A writer schema node as JSON: a type name, or an object with `type` and attributes. */
export type AvroSchema = string | AvroSchema[] | { type: AvroSchema; [attribute: string]: unknown };

/** Parses an Avro container file; `where` names it in errors. */
export function decodeAvroFile(bytes: Buffer, where: string): AvroFile {
  if (!bytes.subarray(0, 4).equals(MAGIC))
    throw new IcebergError("corrupt", `${where} is not an Avro file (it does not start with 'Obj\\x01')`);
  const header = HEADER.decode(bytes, 0);
  if (header.offset < 0) throw new IcebergError("corrupt", `${where} ends inside its Avro header`);
  const { meta: allMeta, sync } = header.value as { meta: Record<string, Buffer>; sync: Buffer };
  const { "avro.schema": schemaBytes, "avro.codec": codecBytes, ...meta } = allMeta;
  if (!schemaBytes) throw new IcebergError("corrupt", `${where} has no avro.schema in its header`);
  const codec = codecBytes?.toString() ?? "null";
  if (codec !== "null" && codec !== "deflate")
    throw new IcebergError(
      "unsupported",
      `${where} is compressed with Avro codec '${codec}'; the agent reads null and deflate`,
    );
  const schemaText = schemaBytes.toString();
  const schema = JSON.parse(schemaText) as AvroSchema;
  const type = avro.Type.forSchema(schema as never, { typeHook: bigintLongs });

  const records: Record<string, unknown>[] = [];
  let pos = header.offset;
  while (pos < bytes.length) {
    const count = LONG.decode(bytes, pos);
    const size = count.offset < 0 ? count : LONG.decode(bytes, count.offset);
    const end = size.offset + Number(size.value);
    if (size.offset < 0 || end + 16 > bytes.length)
      throw new IcebergError("corrupt", `${where} is truncated (a data block runs past the end)`);
    if (!bytes.subarray(end, end + 16).equals(sync))
      throw new IcebergError("corrupt", `${where} has a block whose sync marker does not match its header`);
    const raw = bytes.subarray(size.offset, end);
    const block = codec === "deflate" ? inflateRawSync(raw) : raw;
    let at = 0;
    for (let i = 0; i < Number(count.value); i++) {
      const record = type.decode(block, at);
      if (record.offset < 0)
        throw new IcebergError("corrupt", `${where} has a block shorter than its record count`);
      records.push(record.value as Record<string, unknown>);
      at = record.offset;
    }
    pos = end + 16;
  }
  return { schema, schemaText, meta, codec, type, records };
}

/** Encodes records as one Avro container file under `file`'s schema text, metadata and codec. */
export function encodeAvroFile(file: Omit<AvroFile, "schema">): Buffer {
  const sync = randomBytes(16);
  const meta = {
    ...file.meta,
    "avro.schema": Buffer.from(file.schemaText),
    "avro.codec": Buffer.from(file.codec),
  };
  const parts = [HEADER.toBuffer({ magic: MAGIC, meta, sync })];
  if (file.records.length > 0) {
    const raw = Buffer.concat(file.records.map((r) => file.type.toBuffer(r)));
    const block = file.codec === "deflate" ? deflateRawSync(raw) : raw;
    parts.push(LONG.toBuffer(file.records.length), LONG.toBuffer(block.length), block, sync);
  }
  return Buffer.concat(parts);
}

/** Reads and decodes the Avro file at `key`. */
export async function readAvroFile(store: ObjectStore, key: string): Promise<AvroFile> {
  return decodeAvroFile(await readAll(await store.read(key)), store.uriOf(key));
}

/**
 * Field access by Iceberg field id over one record schema of a writer schema: `get(record, 100,
 * "file_path")` reads the field whose `field-id` is 100, or else the one named `file_path`.
 */
export class AvroFields {
  private readonly byId = new Map<number, { name: string; type: AvroSchema }>();
  private readonly byName = new Map<string, AvroSchema>();

  constructor(schema: AvroSchema | undefined) {
    const record = recordOf(schema);
    for (const field of (record?.fields as { name: string; type: AvroSchema; "field-id"?: unknown }[]) ??
      []) {
      this.byName.set(field.name, field.type);
      const id = Number(field["field-id"]);
      if (Number.isInteger(id)) this.byId.set(id, { name: field.name, type: field.type });
    }
  }

  /** The name the writer gave field `id`, else the first of `names` the record has (else the first). */
  nameOf(record: Record<string, unknown>, id: number, names: string[]): string {
    return this.byId.get(id)?.name ?? names.find((n) => n in record) ?? (names[0] as string);
  }

  /** Field `id`, or where the writer gave no ids, the field by one of the spec's `names`. */
  get(record: Record<string, unknown>, id: number, ...names: string[]): unknown {
    return record[this.nameOf(record, id, names)];
  }

  set(record: Record<string, unknown>, id: number, name: string, value: unknown): void {
    record[this.nameOf(record, id, [name])] = value;
  }

  /** The fields of the record nested in field `id` (through unions, arrays and maps). */
  child(id: number, name: string): AvroFields {
    return new AvroFields(this.byId.get(id)?.type ?? this.byName.get(name));
  }

  /** Every field id the schema declares, with the writer's name for it. */
  ids(): [number, string][] {
    return [...this.byId].map(([id, f]) => [id, f.name]);
  }
}

/** The record schema inside `schema`: itself, or the non-null branch of a union, or array items. */
function recordOf(schema: AvroSchema | undefined): { fields?: unknown } | undefined {
  if (schema === undefined || typeof schema === "string") return undefined;
  if (Array.isArray(schema)) return recordOf(schema.find((s) => s !== "null"));
  if (schema.type === "record") return schema as { fields?: unknown };
  if (schema.type === "array") return recordOf(schema.items as AvroSchema);
  if (schema.type === "map") return recordOf(schema.values as AvroSchema);
  return recordOf(schema.type);
}
