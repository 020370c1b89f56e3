/**
 * Crunch's rewrite: a bin of small Parquet files of one partition becomes fewer, well-compressed files,
 * with the Delta statistics of each new file and the content checksum of all of them.
 *
 * Algorithm, in two passes over the data:
 * 1. One `COPY` reads the inputs as the table's columns (`readAsColumns`), sorts when the settings ask
 *    for it, and writes Parquet with the chosen codec, level, row-group size and page version into a
 *    private folder, starting a new file once one passes `targetFileBytes` (DuckDB's
 *    `FILE_SIZE_BYTES`, checked between row groups, so a file overshoots by at most one row group).
 *    Without a sort, insertion order is not preserved, which lets DuckDB write in parallel.
 * 2. One aggregate scan of the written files, grouped by file, yields both the output checksum
 *    (checksum.ts) and each file's statistics, so validation and statistics share one read.
 *
 * Statistics follow Delta's "Per-file Statistics" (PROTOCOL.md) and err on the side of omission: a
 * missing bound only costs data skipping, a wrong one returns wrong query results. See `boundFor`.
 *
 * @example
 * const written = await rewriteFiles(engine, { inputs, columns, outDir, namePrefix: `part-${uuid}`,
 *   settings, targetFileBytes: 128 * 2 ** 20 });
 */
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import {
  type Checksum,
  canonicalTypes,
  checksumAggregates,
  checksumFromRows,
  readAsColumns,
  type TableColumn,
} from "./checksum.ts";
import { type Engine, sqlIdent, sqlString } from "./duckdb.ts";

/** Delta per-file statistics; nested objects mirror struct columns. */
export interface DeltaStats {
  numRecords: number;
  minValues: Record<string, unknown>;
  maxValues: Record<string, unknown>;
  nullCount: Record<string, unknown>;
}

export interface WrittenFile {
  path: string;
  bytes: number;
  rows: number;
  stats: DeltaStats;
}

/**
 * The part of `CrunchSettings` that decides how files are written (tune.ts adds the reasons), and
 * whether to dictionary-encode columns: `false` writes every column's values plainly (DuckDB's
 * `dictionary_size_limit 0`), which zstd compresses better for some tables and worse for others, so
 * tune.ts measures it. Absent means DuckDB's default (dictionaries where they stay small).
 */
export type CrunchWriteSettings = Pick<
  CrunchSettings,
  "compression" | "compression_level" | "row_group_size" | "sort_columns" | "parquet_version"
> & { dictionary_encoding?: boolean };

export interface RewriteOptions {
  /** Local Parquet files of one partition. */
  inputs: readonly string[];
  /** The table's data columns in order (partition columns are not in the files and not here). */
  columns: readonly TableColumn[];
  outDir: string;
  /** Start of every output file name; make it unique (the crunch passes `part-<uuid>`). */
  namePrefix: string;
  settings: CrunchWriteSettings;
  targetFileBytes: number;
}

export interface RewriteResult {
  files: WrittenFile[];
  /** The content checksum of everything written: compare it with `checksumFiles` of the inputs. */
  checksum: Checksum;
}

/** Strings longer than this get no max bound and a truncated min (Delta's default prefix length). */
export const STATS_STRING_PREFIX = 32;

/** The `COPY` options for `settings`, shared with tune.ts so trials write exactly as crunch does. */
export function parquetOptions(settings: CrunchWriteSettings): string {
  const parts = [
    "format parquet",
    `compression ${settings.compression}`,
    `row_group_size ${settings.row_group_size}`,
    `parquet_version ${settings.parquet_version === "v2" ? "v2" : "v1"}`,
  ];
  if (settings.compression_level !== null) parts.push(`compression_level ${settings.compression_level}`);
  if (settings.dictionary_encoding === false) parts.push("dictionary_size_limit 0");
  return parts.join(", ");
}

/** `ORDER BY` for the settings' sort columns, or nothing. */
export function orderBy(sortColumns: readonly string[]): string {
  return sortColumns.length > 0 ? ` order by ${sortColumns.map(sqlIdent).join(", ")}` : "";
}

/** Runs `body` with `preserve_insertion_order` set as asked, restoring the engine's setting after. */
export async function withInsertionOrder<T>(
  engine: Engine,
  preserve: boolean,
  body: () => Promise<T>,
): Promise<T> {
  const [row] = await engine.query<{ v: boolean }>(`select current_setting('preserve_insertion_order') as v`);
  await engine.run(`set preserve_insertion_order = ${preserve}`);
  try {
    return await body();
  } finally {
    await engine.run(`set preserve_insertion_order = ${row?.v !== false}`);
  }
}

/** Rewrites `inputs` into files under `outDir` (see the module comment). */
export async function rewriteFiles(engine: Engine, options: RewriteOptions): Promise<RewriteResult> {
  const { columns, settings } = options;
  const staging = join(options.outDir, `.${options.namePrefix}.staging`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(options.outDir, { recursive: true });
  try {
    const select = await readAsColumns(engine, options.inputs, columns);
    await withInsertionOrder(engine, settings.sort_columns.length > 0, () =>
      engine.run(
        `copy (${select}${orderBy(settings.sort_columns)}) to ${sqlString(staging)} (${parquetOptions(settings)}, ` +
          `file_size_bytes ${Math.max(1, Math.floor(options.targetFileBytes))}, filename_pattern 'f{i}')`,
      ),
    );
    const written = (await readdir(staging)).filter((f) => f.endsWith(".parquet"));
    written.sort((a, b) => fileIndex(a) - fileIndex(b));
    const paths: string[] = [];
    for (const [i, name] of written.entries()) {
      const path = join(options.outDir, `${options.namePrefix}-c${String(i).padStart(3, "0")}.parquet`);
      await rename(join(staging, name), path);
      paths.push(path);
    }
    return await describeWritten(engine, paths, columns);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function fileIndex(name: string): number {
  return Number(/(\d+)\.parquet$/.exec(name)?.[1] ?? 0);
}

/** One scan of written files: each file's rows and statistics, and the checksum of all of them. */
export async function describeWritten(
  engine: Engine,
  paths: readonly string[],
  columns: readonly TableColumn[],
): Promise<RewriteResult> {
  if (paths.length === 0) return { files: [], checksum: checksumFromRows(columns, []) };
  const types = await canonicalTypes(
    engine,
    columns.map((c) => c.type),
  );
  const leaves = columns.flatMap((c, i) =>
    statLeaves([c.name], sqlIdent(c.name), parseType(types[i] as string)),
  );
  const statSql = leaves.flatMap((leaf, i) => {
    const parts = [`count(${leaf.expr}) as st_n_${i}`];
    const bound = boundSql(leaf.kind, leaf.expr);
    if (bound) parts.push(`${bound.min} as st_min_${i}`, `${bound.max} as st_max_${i}`);
    return parts;
  });
  const select = await readAsColumns(engine, paths, columns, { filename: true });
  const rows = await engine.query(
    `select filename, ${[checksumAggregates(columns), ...statSql].join(", ")} from (${select}) group by filename`,
  );
  const byPath = new Map(rows.map((r) => [String(r.filename), r]));
  const files: WrittenFile[] = [];
  for (const path of paths) {
    const row = byPath.get(path) ?? { ck_rows: 0 };
    const numRecords = Number(row.ck_rows ?? 0);
    const stats: DeltaStats = { numRecords, minValues: {}, maxValues: {}, nullCount: {} };
    leaves.forEach((leaf, i) => {
      setPath(stats.nullCount, leaf.path, numRecords - Number(row[`st_n_${i}`] ?? 0));
      const min = boundFor(leaf.kind, row[`st_min_${i}`], "min");
      const max = boundFor(leaf.kind, row[`st_max_${i}`], "max");
      if (min !== undefined) setPath(stats.minValues, leaf.path, min);
      if (max !== undefined) setPath(stats.maxValues, leaf.path, max);
    });
    files.push({ path, bytes: (await stat(path)).size, rows: numRecords, stats });
  }
  return { files, checksum: checksumFromRows(columns, rows) };
}

/** How a leaf's min/max are written in Delta stats; `none` gets only a null count. */
export type BoundKind = "integer" | "decimal" | "float" | "date" | "timestamptz" | "string" | "none";

/** A DuckDB type as far as statistics care: structs have fields, everything else is a leaf. */
export type ParsedType = { struct: { name: string; type: ParsedType }[] } | { leaf: BoundKind };

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

/**
 * Parses DuckDB's canonical type spelling (`canonicalTypes`). Lists, maps, booleans, blobs and
 * timestamps without zone are leaves without bounds: Delta does not bound complex types, and the
 * stats encoding of TIMESTAMP_NTZ is left out rather than guessed.
 */
export function parseType(type: string): ParsedType {
  const t = type.trim();
  if (t.startsWith("STRUCT(") && t.endsWith(")")) {
    return { struct: splitTopLevel(t.slice(7, -1)).map(parseField) };
  }
  if (t.endsWith("]") || t.startsWith("MAP(") || t.startsWith("UNION(")) return { leaf: "none" };
  return { leaf: KINDS[t.replace(/\(.*\)$/, "")] ?? "none" };
}

function parseField(field: string): { name: string; type: ParsedType } {
  const f = field.trim();
  if (f.startsWith('"')) {
    let end = 1;
    let name = "";
    while (end < f.length) {
      if (f[end] === '"' && f[end + 1] === '"') {
        name += '"';
        end += 2;
      } else if (f[end] === '"') break;
      else name += f[end++];
    }
    return { name, type: parseType(f.slice(end + 1)) };
  }
  const space = f.indexOf(" ");
  return { name: f.slice(0, space), type: parseType(f.slice(space + 1)) };
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === "(" || ch === "[")) depth++;
    else if (!quoted && (ch === ")" || ch === "]")) depth--;
    else if (!quoted && depth === 0 && ch === ",") {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.filter((x) => x.trim() !== "");
}

interface StatLeaf {
  path: string[];
  expr: string;
  kind: BoundKind;
}

function statLeaves(path: string[], expr: string, type: ParsedType): StatLeaf[] {
  if ("leaf" in type) return [{ path, expr, kind: type.leaf }];
  return type.struct.flatMap((f) =>
    statLeaves([...path, f.name], `struct_extract(${expr}, ${sqlString(f.name)})`, f.type),
  );
}

function boundSql(kind: BoundKind, expr: string): { min: string; max: string } | undefined {
  switch (kind) {
    case "none":
      return undefined;
    case "timestamptz":
      return { min: `epoch_us(min(${expr}))::varchar`, max: `epoch_us(max(${expr}))::varchar` };
    case "string":
      return { min: `min(${expr})`, max: `max(${expr})` };
    default:
      return { min: `min(${expr})::varchar`, max: `max(${expr})::varchar` };
  }
}

/** ISO-8601 without an expanded year: 0000-01-01 to 9999-12-31. */
const MIN_DATE_MS = -62167219200000;
const MAX_DATE_MS = 253402300799999;

/**
 * A min or max in Delta's JSON encoding, or undefined where no bound is safe to state:
 * - integers and decimals as JSON numbers only while a double holds them exactly;
 * - floats only when finite;
 * - dates as `YYYY-MM-DD` in years 0000–9999;
 * - timestamps as ISO-8601 with milliseconds and `Z`, the min truncated down and the max rounded up
 *   to the millisecond (Delta readers compare at millisecond precision);
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
      return digits.length <= 15 ? Number(text) : undefined;
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
