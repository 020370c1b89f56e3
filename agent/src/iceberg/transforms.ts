/**
 * Partition transforms (spec "Partition Transforms"): parsing the names the metadata uses, the
 * type each produces, applying one to a source value, and the human string writers put in paths.
 *
 * - identity, void, truncate[W] keep the source type; bucket[N], year, month, hour give int, day
 *   gives date (days), as Iceberg's reference implementation types them in manifests.
 * - bucket[N] = (murmur3_x86_32(bytes) & Integer.MAX_VALUE) % N over the spec's byte form (Appendix
 *   B): int, long, date, time and timestamps hash as an 8-byte little-endian long (nanosecond
 *   timestamps as microseconds), decimals as their minimal big-endian two's-complement unscaled
 *   value, strings as UTF-8, UUIDs as 16 big-endian bytes, fixed and binary as they are.
 * - truncate[W] floors int, long and decimal (unscaled) to a multiple of W and keeps the first W
 *   code points of a string or W bytes of binary.
 * - year, month, day, hour count whole units since 1970-01-01T00:00 UTC, rounding toward -inf.
 * - Anything else parses as `unknown` and is never applied: a table using one is refused.
 */
import { civilFromDays, floorDiv, formatDate, MICROS_PER_DAY, MICROS_PER_HOUR } from "./calendar.ts";
import { IcebergError } from "./errors.ts";
import { humanValue } from "./human.ts";
import { murmur3 } from "./murmur3.ts";
import {
  type IcebergType,
  isPrimitive,
  type PrimitiveName,
  type PrimitiveType,
  typeString,
} from "./schema.ts";
import { decimalBytes, type IcebergDecimal, type IcebergValue, uuidBytes } from "./values.ts";

export type Transform =
  | { kind: "identity" | "year" | "month" | "day" | "hour" | "void" }
  | { kind: "bucket"; buckets: number }
  | { kind: "truncate"; width: number }
  | { kind: "unknown"; name: string };

const SIMPLE = new Set(["identity", "year", "month", "day", "hour", "void"]);
const TIMESTAMPS = new Set<string>(["timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"]);
const BUCKETABLE = new Set<string>([
  "int",
  "long",
  "date",
  "time",
  "string",
  "uuid",
  "binary",
  ...TIMESTAMPS,
]);
const TRUNCATABLE = new Set<string>(["int", "long", "string", "binary"]);
const INT: IcebergType = { kind: "primitive", name: "int" };

/** `bucket[16]` → `{ kind: "bucket", buckets: 16 }`; an unknown name → `{ kind: "unknown", name }`. */
export function parseTransform(text: string): Transform {
  const name = text.trim().toLowerCase();
  if (SIMPLE.has(name)) return { kind: name } as Transform;
  const param = /^(bucket|truncate)\[\s*(\d+)\s*\]$/.exec(name);
  const n = Number(param?.[2]);
  if (param && n > 0)
    return param[1] === "bucket" ? { kind: "bucket", buckets: n } : { kind: "truncate", width: n };
  return { kind: "unknown", name: text };
}

/** The transform as the metadata names it. */
export function transformString(t: Transform): string {
  if (t.kind === "bucket") return `bucket[${t.buckets}]`;
  if (t.kind === "truncate") return `truncate[${t.width}]`;
  return t.kind === "unknown" ? t.name : t.kind;
}

/** Whether `t` may be applied to values of `source` (spec's table of source types). */
export function canTransform(t: Transform, source: IcebergType): boolean {
  if (t.kind === "void") return true;
  if (t.kind === "unknown" || !isPrimitive(source)) return false;
  const name = source.kind === "primitive" ? source.name : source.kind;
  switch (t.kind) {
    case "identity":
      return true;
    case "bucket":
      return BUCKETABLE.has(name) || name === "decimal" || name === "fixed";
    case "truncate":
      return TRUNCATABLE.has(name) || name === "decimal";
    case "year":
    case "month":
    case "day":
      return name === "date" || TIMESTAMPS.has(name);
    case "hour":
      return TIMESTAMPS.has(name);
  }
}

/** The type of the partition values `t` produces from `source`; throws where it does not apply. */
export function resultType(t: Transform, source: IcebergType): IcebergType {
  if (!canTransform(t, source))
    throw new IcebergError(
      "unsupported",
      `the partition transform '${transformString(t)}' can't be applied to a ${typeString(source)} column`,
    );
  if (t.kind === "bucket" || t.kind === "year" || t.kind === "month" || t.kind === "hour") return INT;
  if (t.kind === "day") return { kind: "primitive", name: "date" };
  return source;
}

/** Applies `t` to one value of `source` (null gives null). */
export function applyTransform(
  t: Transform,
  source: PrimitiveType,
  value: IcebergValue | null,
): IcebergValue | null {
  resultType(t, source);
  if (value === null || t.kind === "void") return null;
  const name: PrimitiveName | "decimal" | "fixed" = source.kind === "primitive" ? source.name : source.kind;
  switch (t.kind) {
    case "bucket":
      return (bucketHash(source, value) & 0x7fffffff) % t.buckets;
    case "truncate":
      return truncate(name, t.width, value);
    case "year":
    case "month": {
      const { year, month } = civilFromDays(dayOf(name, value));
      return t.kind === "year" ? year - 1970 : (year - 1970) * 12 + month - 1;
    }
    case "day":
      return dayOf(name, value);
    case "hour":
      return Number(floorDiv(micros(name, value), MICROS_PER_HOUR));
    default:
      return value;
  }
}

/** The human string of a partition value `t` produced from `source` (`2021-01-01-10` for an hour). */
export function humanString(t: Transform, source: PrimitiveType, value: IcebergValue | null): string {
  if (value === null) return "null";
  const n = value as number;
  const pad = (v: number, w: number) => String(v).padStart(w, "0");
  switch (t.kind) {
    case "identity":
    case "truncate":
      return humanValue(source, value);
    case "year":
      return pad(1970 + n, 4);
    case "month":
      return `${pad(1970 + Math.floor(n / 12), 4)}-${pad((((n % 12) + 12) % 12) + 1, 2)}`;
    case "day":
      return formatDate(n);
    case "hour":
      return `${formatDate(Math.floor(n / 24))}-${pad(((n % 24) + 24) % 24, 2)}`;
    default:
      return String(value);
  }
}

/** The 32-bit hash the bucket transform takes of a value (spec Appendix B). */
export function bucketHash(type: PrimitiveType, value: IcebergValue): number {
  if (type.kind === "decimal") return murmur3(decimalBytes((value as IcebergDecimal).unscaled));
  if (type.kind === "fixed") return murmur3(value as Buffer);
  switch (type.name) {
    case "string":
      return murmur3(Buffer.from(value as string, "utf8"));
    case "uuid":
      return murmur3(uuidBytes(value as string));
    case "binary":
      return murmur3(value as Buffer);
    case "float":
    case "double": {
      const buf = Buffer.alloc(8);
      // -0.0 hashes as 0.0 and every NaN as the canonical one, as Java's doubleToLongBits does.
      buf.writeDoubleLE(value === 0 ? 0 : Number.isNaN(value) ? Number.NaN : (value as number));
      return murmur3(buf);
    }
    case "boolean":
      throw new IcebergError("unsupported", "boolean values have no bucket hash");
    default:
      return hashLong(
        type.name === "timestamp_ns" || type.name === "timestamptz_ns"
          ? floorDiv(value as bigint, 1000n)
          : BigInt(value as number | bigint),
      );
  }
}

function hashLong(v: bigint): number {
  const buf = Buffer.alloc(8);
  buf.writeBigInt64LE(BigInt.asIntN(64, v));
  return murmur3(buf);
}

function truncate(name: string, width: number, value: IcebergValue): IcebergValue {
  switch (name) {
    case "int": {
      const v = value as number;
      return v - (((v % width) + width) % width);
    }
    case "long": {
      const v = value as bigint;
      const w = BigInt(width);
      return v - (((v % w) + w) % w);
    }
    case "decimal": {
      const { unscaled, scale } = value as IcebergDecimal;
      const w = BigInt(width);
      return { unscaled: unscaled - (((unscaled % w) + w) % w), scale };
    }
    case "string":
      return Array.from(value as string)
        .slice(0, width)
        .join("");
    default:
      return (value as Buffer).subarray(0, width);
  }
}

/** Microseconds since the epoch of a timestamp value (nanosecond ones floored). */
function micros(name: string, value: IcebergValue): bigint {
  return name.endsWith("_ns") ? floorDiv(value as bigint, 1000n) : (value as bigint);
}

/** Days since the epoch of a date or timestamp value. */
function dayOf(name: string, value: IcebergValue): number {
  return name === "date" ? (value as number) : Number(floorDiv(micros(name, value), MICROS_PER_DAY));
}
