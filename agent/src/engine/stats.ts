/**
 * Delta per-file statistics ("Per-file Statistics" in PROTOCOL.md) of the files a crunch writes,
 * taken from the Parquet writer itself: `COPY ... (RETURN_STATS true)` returns, per written file, its
 * row count and each Parquet leaf column's min, max and null count, the same values the file's footer
 * holds. No second read of the output is needed for them.
 *
 * Statistics err on the side of omission: a missing bound only costs data skipping, a wrong one
 * returns wrong query results. The writer's values are turned into Delta's JSON encoding by
 * `boundFor`, and left out where that is not exact or not safe:
 * - types without a Delta bound encoding here (booleans, blobs, timestamps without zone, lists, maps)
 *   get no min or max; lists and maps get no null count either (the writer counts their elements'
 *   nulls, not the rows');
 * - a float column holding NaN gets no max (NaN sorts above every number in Spark and DuckDB);
 * - DuckDB cuts string bounds at 256 bytes (a cut max is raised to stay an upper bound): every string
 *   bound kept is at most `STATS_STRING_PREFIX` characters (at most 128 bytes), so it was never cut.
 *
 * @example
 * const leaves = await statLeaves(engine, columns);
 * const rows = await engine.query(`copy (...) to 'out' (format parquet, return_stats true)`);
 * const stats = statsFromCopy(leaves, rows[0]);
 */

import { canonicalTypes, type TableColumn } from "./checksum.ts";
import type { Engine } from "./duckdb.ts";
import { parseType as parseTypeSpelling, type TypeNode } from "./type-spelling.ts";

/** Delta per-file statistics; nested objects mirror struct columns. */
export interface DeltaStats {
  numRecords: number;
  minValues: Record<string, unknown>;
  maxValues: Record<string, unknown>;
  nullCount: Record<string, unknown>;
}

/** How a leaf's min/max are written in Delta stats; `none` gets only a null count. */
export type BoundKind = "integer" | "decimal" | "float" | "date" | "timestamptz" | "string" | "none";

/** A DuckDB type as far as statistics care: structs have fields, everything else is a leaf. */
export type ParsedType = { struct: { name: string; type: ParsedType }[] } | { leaf: BoundKind };

/** One leaf column of the table: its path in Delta stats and how its bounds are encoded. */
export interface StatLeaf {
  path: string[];
  kind: BoundKind;
}

/** One row of `COPY ... (RETURN_STATS true)`, as `Engine.query` returns it. */
export interface CopyStatsRow {
  filename: string;
  count: string | number;
  column_statistics: { key: string; value: { key: string; value: string }[] }[];
}

/** Strings longer than this get no max bound and a truncated min (Delta's default prefix length). */
export const STATS_STRING_PREFIX = 32;

const KINDS: Record<string, BoundKind> = {
  TINYINT: "integer",
  SMALLINT: "integer",
  INTEGER: "integer",
  BIGINT: "integer",
  DECIMAL: "decimal",
  FLOAT: "float",
  DOUBLE: "float",
  DATE: "date",
  "TIMESTAMP WITH TIME ZONE": "timestamptz",
  VARCHAR: "string",
};

/** The leaf columns of `columns` (struct fields flattened), in the table's order. */
export async function statLeaves(engine: Engine, columns: readonly TableColumn[]): Promise<StatLeaf[]> {
  const types = await canonicalTypes(
    engine,
    columns.map((c) => c.type),
  );
  return columns.flatMap((c, i) => leavesOf([c.name], parseType(types[i] as string)));
}

function leavesOf(path: string[], type: ParsedType): StatLeaf[] {
  if ("leaf" in type) return [{ path, kind: type.leaf }];
  return type.struct.flatMap((f) => leavesOf([...path, f.name], f.type));
}

/** A written file's Delta statistics from its `RETURN_STATS` row (see the module comment). */
export function statsFromCopy(leaves: readonly StatLeaf[], row: CopyStatsRow): DeltaStats {
  const numRecords = Number(row.count);
  const stats: DeltaStats = { numRecords, minValues: {}, maxValues: {}, nullCount: {} };
  const byColumn = new Map(
    row.column_statistics.map((c) => [c.key, new Map(c.value.map((v) => [v.key, v.value]))]),
  );
  for (const leaf of leaves) {
    // The writer names a leaf by its quoted path: `"device"."build no"`.
    const column = byColumn.get(leaf.path.map((p) => `"${p.replaceAll('"', '""')}"`).join("."));
    if (!column) continue;
    const nulls = column.get("null_count");
    if (nulls !== undefined) setPath(stats.nullCount, leaf.path, Number(nulls));
    const min = boundFor(leaf.kind, writerValue(leaf.kind, column.get("min")), "min");
    const max =
      leaf.kind === "float" && column.get("has_nan") !== "false"
        ? undefined
        : boundFor(leaf.kind, writerValue(leaf.kind, column.get("max")), "max");
    if (min !== undefined) setPath(stats.minValues, leaf.path, min);
    if (max !== undefined) setPath(stats.maxValues, leaf.path, max);
  }
  return stats;
}

/**
 * The writer's text of a bound in the form `boundFor` takes: timestamps with zone, printed as
 * `2024-05-01 00:00:00.999999+00` (the engine's session zone is UTC), become epoch microseconds; a
 * timestamp in any other form (another offset, BC, infinity) becomes undefined.
 */
function writerValue(kind: BoundKind, text: string | undefined): string | undefined {
  if (text === undefined || kind !== "timestamptz") return text;
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\+00$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = ""] = m.map((part) => part ?? "");
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear puts them back.
  const date = new Date(ms);
  date.setUTCFullYear(Number(y));
  return (BigInt(date.getTime()) * 1000n + BigInt(frac.padEnd(6, "0"))).toString();
}

/**
 * DuckDB's canonical type spelling (`canonicalTypes`) as statistics see it. Lists, maps, booleans,
 * blobs and timestamps without zone are leaves without bounds: Delta does not bound complex types,
 * and the stats encoding of TIMESTAMP_NTZ is left out rather than guessed. A spelling the parser
 * does not know (a union) is such a leaf too.
 */
export function parseType(type: string): ParsedType {
  let node: TypeNode;
  try {
    node = parseTypeSpelling(type.trim());
  } catch {
    return { leaf: "none" };
  }
  return statsType(node);
}

function statsType(node: TypeNode): ParsedType {
  if (node.kind === "struct")
    return { struct: node.fields.map(([name, type]) => ({ name, type: statsType(type) })) };
  if (node.kind !== "scalar") return { leaf: "none" };
  return { leaf: KINDS[node.name.replace(/\(.*\)$/, "")] ?? "none" };
}

/** ISO-8601 without an expanded year: 0000-01-01 to 9999-12-31. */
const MIN_DATE_MS = -62167219200000;
const MAX_DATE_MS = 253402300799999;

/**
 * A min or max in Delta's JSON encoding, or undefined where no bound is safe to state:
 * - integers and decimals as JSON numbers only while a double holds them exactly;
 * - floats only when finite;
 * - dates as `YYYY-MM-DD` in years 0000–9999;
 * - timestamps (given as epoch microseconds) as ISO-8601 with milliseconds and `Z`, the min
 *   truncated down and the max rounded up to the millisecond (Delta readers compare at millisecond
 *   precision);
 * - strings up to `STATS_STRING_PREFIX` characters; a longer min is cut to that prefix (still a lower
 *   bound), a longer max is omitted.
 */
export function boundFor(kind: BoundKind, raw: unknown, side: "min" | "max"): unknown {
  if (raw === null || raw === undefined || kind === "none") return undefined;
  const text = String(raw);
  switch (kind) {
    case "integer": {
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : undefined;
    }
    case "decimal": {
      const digits = text.replace(/^-/, "").replace(".", "").replace(/^0+/, "");
      return /^-?\d+(\.\d+)?$/.test(text) && digits.length <= 15 ? Number(text) : undefined;
    }
    case "float": {
      const n = Number(text);
      return Number.isFinite(n) ? n : undefined;
    }
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(text) ? text : undefined;
    case "timestamptz": {
      const us = BigInt(text);
      const ms = side === "min" ? floorDiv(us, 1000n) : -floorDiv(-us, 1000n);
      const n = Number(ms);
      return n >= MIN_DATE_MS && n <= MAX_DATE_MS ? new Date(n).toISOString() : undefined;
    }
    case "string": {
      const chars = Array.from(text);
      if (chars.length <= STATS_STRING_PREFIX) return text;
      return side === "min" ? chars.slice(0, STATS_STRING_PREFIX).join("") : undefined;
    }
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}
