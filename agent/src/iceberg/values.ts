/**
 * Single values of Iceberg primitive types in JavaScript, and their three encodings: the spec's
 * single-value binary form (bounds, Appendix D), Avro as manifests hold partition tuples, and JSON
 * (defaults, Appendix D).
 *
 * One representation per type, the spec's physical value:
 * - boolean → boolean; int, date (days since epoch) → number; float, double → number
 * - long → bigint; time, timestamp, timestamptz → bigint microseconds; *_ns → bigint nanoseconds
 * - string → string; uuid → lower-case canonical string; fixed, binary → Buffer
 * - decimal → `{ unscaled: bigint, scale }` (the scale is the type's)
 * Bounds written before a type promotion (int → long, float → double) are 4 bytes and read as such.
 */
import { parseDate, parseTime, parseTimestamp } from "./calendar.ts";
import { IcebergError } from "./errors.ts";
import type { IcebergType, PrimitiveType } from "./schema.ts";

export interface IcebergDecimal {
  unscaled: bigint;
  scale: number;
}

export type IcebergValue = boolean | number | bigint | string | Buffer | IcebergDecimal;

const TICKS_PER_SECOND: Record<string, bigint> = {
  time: 1_000_000n,
  timestamp: 1_000_000n,
  timestamptz: 1_000_000n,
  timestamp_ns: 1_000_000_000n,
  timestamptz_ns: 1_000_000_000n,
};

/** Decodes a bound (single-value binary serialization) of a value of `type`. */
export function decodeValue(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (n: number) => {
    if (buf.length < n)
      throw new IcebergError(
        "corrupt",
        `a ${type.kind === "primitive" ? type.name : type.kind} bound has ${buf.length} bytes`,
      );
  };
  if (type.kind === "decimal") return { unscaled: bigintFromBytes(buf), scale: type.scale };
  if (type.kind === "fixed") return Buffer.from(buf);
  switch (type.name) {
    case "boolean":
      need(1);
      return buf[0] !== 0;
    case "int":
    case "date":
      need(4);
      return buf.readInt32LE(0);
    case "long":
      need(4);
      return buf.length < 8 ? BigInt(buf.readInt32LE(0)) : buf.readBigInt64LE(0);
    case "float":
      need(4);
      return buf.readFloatLE(0);
    case "double":
      need(4);
      return buf.length < 8 ? buf.readFloatLE(0) : buf.readDoubleLE(0);
    case "time":
    case "timestamp":
    case "timestamptz":
    case "timestamp_ns":
    case "timestamptz_ns":
      need(8);
      return buf.readBigInt64LE(0);
    case "string":
      return buf.toString("utf8");
    case "uuid":
      need(16);
      return uuidString(buf);
    case "binary":
      return Buffer.from(buf);
  }
}

/** Encodes a value of `type` in the single-value binary form (the inverse of `decodeValue`). */
export function encodeValue(type: PrimitiveType, value: IcebergValue): Buffer {
  if (type.kind === "decimal") return decimalBytes((value as IcebergDecimal).unscaled);
  if (type.kind === "fixed") return Buffer.from(value as Buffer);
  const buf = Buffer.alloc(8);
  switch (type.name) {
    case "boolean":
      return Buffer.from([value ? 1 : 0]);
    case "int":
    case "date":
      buf.writeInt32LE(value as number);
      return buf.subarray(0, 4);
    case "float":
      buf.writeFloatLE(value as number);
      return buf.subarray(0, 4);
    case "double":
      buf.writeDoubleLE(value as number);
      return buf;
    case "long":
    case "time":
    case "timestamp":
    case "timestamptz":
    case "timestamp_ns":
    case "timestamptz_ns":
      buf.writeBigInt64LE(value as bigint);
      return buf;
    case "string":
      return Buffer.from(value as string, "utf8");
    case "uuid":
      return uuidBytes(value as string);
    case "binary":
      return Buffer.from(value as Buffer);
  }
}

/** Normalizes a value as avsc decodes it from a manifest (partition tuples) to the one representation. */
export function fromAvroValue(type: PrimitiveType, value: unknown): IcebergValue | null {
  if (value === null || value === undefined) return null;
  const bad = () =>
    new IcebergError(
      "corrupt",
      `a manifest holds ${typeof value} ${String(value)} for a ${describe(type)} value`,
    );
  if (type.kind === "decimal") {
    if (Buffer.isBuffer(value)) return { unscaled: bigintFromBytes(value), scale: type.scale };
    throw bad();
  }
  if (type.kind === "fixed" || type.name === "binary") {
    if (Buffer.isBuffer(value)) return value;
    throw bad();
  }
  switch (type.name) {
    case "boolean":
      if (typeof value === "boolean") return value;
      throw bad();
    case "int":
    case "date":
    case "float":
    case "double":
      if (typeof value === "number") return value;
      if (typeof value === "bigint") return Number(value);
      throw bad();
    case "string":
      if (typeof value === "string") return value;
      throw bad();
    case "uuid":
      if (Buffer.isBuffer(value) && value.length === 16) return uuidString(value);
      if (typeof value === "string") return value.toLowerCase();
      throw bad();
    default:
      // long, time and the timestamps
      if (typeof value === "bigint") return value;
      if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
      throw bad();
  }
}

/**
 * Decodes a default value (`initial-default`, `write-default`) from its JSON single-value form:
 * numbers, ISO text for dates and times, decimal text, hex for fixed and binary.
 */
export function parseJsonValue(type: IcebergType, json: unknown): IcebergValue | null {
  if (json === null || json === undefined) return null;
  const bad = () =>
    new IcebergError("corrupt", `${JSON.stringify(String(json))} is not a ${describe(type)} value`);
  if (type.kind === "decimal") {
    if (typeof json !== "string") throw bad();
    return parseDecimal(json, type.scale);
  }
  if (type.kind === "fixed") return hexBytes(String(json));
  if (type.kind !== "primitive")
    throw new IcebergError("unsupported", `defaults of ${type.kind} type are not read by the agent`);
  const ticks = TICKS_PER_SECOND[type.name];
  switch (type.name) {
    case "boolean":
      if (typeof json !== "boolean") throw bad();
      return json;
    case "int":
    case "float":
    case "double":
      if (typeof json !== "number") throw bad();
      return json;
    case "long":
      if (typeof json !== "number" && typeof json !== "bigint") throw bad();
      return BigInt(json);
    case "date":
      return parseDate(String(json));
    case "time":
      return parseTime(String(json), ticks as bigint);
    case "string":
    case "uuid":
      if (typeof json !== "string") throw bad();
      return type.name === "uuid" ? json.toLowerCase() : json;
    case "binary":
      return hexBytes(String(json));
    default:
      return parseTimestamp(String(json), ticks as bigint);
  }
}

/** `{ unscaled: 1420n, scale: 2 }` for "14.20" at scale 2 (digits beyond the scale are refused). */
export function parseDecimal(text: string, scale: number): IcebergDecimal {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  const fraction = m?.[3] ?? "";
  if (!m || (m[2] === "" && fraction === "") || fraction.length > scale)
    throw new IcebergError("corrupt", `'${text}' is not a decimal with scale ${scale}`);
  const unscaled = BigInt(`${m[2] || "0"}${fraction.padEnd(scale, "0")}`);
  return { unscaled: m[1] === "-" ? -unscaled : unscaled, scale };
}

/** A signed big-endian two's-complement integer. */
export function bigintFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  const n = BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
  return (bytes[0] as number) & 0x80 ? n - (1n << BigInt(bytes.length * 8)) : n;
}

/** The fewest big-endian two's-complement bytes that hold `n` (Java's `BigInteger.toByteArray`). */
export function decimalBytes(n: bigint): Buffer {
  let length = 1;
  while (n < -(1n << BigInt(length * 8 - 1)) || n >= 1n << BigInt(length * 8 - 1)) length++;
  const unsigned = n < 0n ? (1n << BigInt(length * 8)) + n : n;
  return Buffer.from(unsigned.toString(16).padStart(length * 2, "0"), "hex");
}

/** `f79c3e09-677c-4bbd-a479-3f349cb785e7` for 16 bytes. */
export function uuidString(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The 16 bytes of a UUID string. */
export function uuidBytes(text: string): Buffer {
  const hex = text.replaceAll("-", "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new IcebergError("corrupt", `'${text}' is not a UUID`);
  return Buffer.from(hex, "hex");
}

function hexBytes(text: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw new IcebergError("corrupt", `'${text}' is not hex bytes`);
  return Buffer.from(text, "hex");
}

function describe(type: IcebergType): string {
  return type.kind === "primitive" ? type.name : type.kind;
}
