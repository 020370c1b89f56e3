/**
 * Crunch's rewrite: a bin of small Parquet files of one partition becomes fewer, well-compressed files,
 * with the Delta statistics of each new file and the content checksum of all of them.
 *
 * Algorithm, in two passes over the data:
 * 1. One `COPY` reads the inputs as the table's columns (`readAsColumns`) and writes Parquet with
 *    the chosen codec, level, row-group size and page version into a private folder, starting a new
 *    file once one passes `targetFileBytes` (DuckDB's `FILE_SIZE_BYTES`, checked between row
 *    groups, so a file overshoots by at most one row group). Without a sort, insertion order is not
 *    preserved, which lets DuckDB write in parallel. A sorted write (linear or Z-order, layout.ts)
 *    is one file, as DuckDB does not keep the order across (or within) rotated files; or, where the
 *    caller asks for `sortedFiles` > 1, the sorted rows go to a temporary table once and are copied
 *    out in that many slices of equal rows, one file each, so that each file holds one stretch of
 *    the order (its statistics' ranges do not overlap the next file's, and readers skip files).
 *    Each `COPY` returns its files' row counts and column statistics (`RETURN_STATS`): the Delta
 *    statistics come from them (stats.ts), not from reading the files again.
 * 2. One aggregate scan of the written files yields the output checksum (checksum.ts), which
 *    validation compares with the inputs'.
 *
 * @example
 * const written = await rewriteFiles(engine, { inputs, columns, outDir, namePrefix: `part-${uuid}`,
 *   settings, targetFileBytes: 128 * 2 ** 20 });
 */
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import {
  type Checksum,
  checksumFiles,
  checksumFromRows,
  readAsColumns,
  type TableColumn,
} from "./checksum.ts";
import { type Engine, sqlString } from "./duckdb.ts";
import { sortedSelect } from "./layout.ts";
import { type CopyStatsRow, type DeltaStats, statLeaves, statsFromCopy } from "./stats.ts";

export interface WrittenFile {
  path: string;
  bytes: number;
  rows: number;
  stats: DeltaStats;
}

/**
 * The part of `CrunchSettings` that decides how files are written (tune.ts adds the reasons).
 * Dictionaries: `dictionary_encoding: false` writes every column's values plainly (DuckDB's
 * `dictionary_size_limit 0`); otherwise `dictionary_size_limit` bounds each column chunk's
 * dictionary, and a column with more distinct values falls back to plain values. DuckDB's default
 * bound grows with the row group (a twentieth of it), so large row groups alone spend time building
 * dictionaries for high-cardinality columns that are then dropped; tune.ts sets the bound and
 * measures it. Zstd compresses plain values better for some tables and worse for others.
 */
export type CrunchWriteSettings = Pick<
  CrunchSettings,
  | "compression"
  | "compression_level"
  | "row_group_size"
  | "sort_columns"
  | "sort_layout"
  | "parquet_version"
  | "dictionary_encoding"
  | "dictionary_size_limit"
>;

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
  /** Parquet field ids to write, as DuckDB's `FIELD_IDS` value (Iceberg identifies columns by them). */
  fieldIds?: string;
  /**
   * A sorted write only: how many files to write, each a stretch of the order (default 1). The
   * caller sizes it so the files come out near the target size.
   */
  sortedFiles?: number;
  /** `inputs` read as `columns` (`readAsColumns`), where the caller has built it already. */
  source?: string;
  /**
   * Called with the written files once they are complete, and awaited beside the output checksum:
   * work on the files that needs no DuckDB (the crunch flushes them to disk there).
   */
  onWritten?: (paths: string[]) => Promise<void>;
}

export interface RewriteResult {
  files: WrittenFile[];
  /** The content checksum of everything written: compare it with `checksumFiles` of the inputs. */
  checksum: Checksum;
}

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
  else if (settings.dictionary_size_limit !== undefined)
    parts.push(`dictionary_size_limit ${settings.dictionary_size_limit}`);
  return parts.join(", ");
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
    const select = options.source ?? (await readAsColumns(engine, options.inputs, columns));
    const leaves = await statLeaves(engine, columns);
    const sorted = settings.sort_columns.length > 0;
    // DuckDB (1.5) does not keep a sorted COPY's order across the files FILE_SIZE_BYTES rotates to,
    // nor within them (rows of later batches land between earlier ones): a sorted write is one file
    // per COPY. The crunch sizes a sorted chunk's `sortedFiles` so each is near the target size.
    if (sorted) await mkdir(staging, { recursive: true });
    const slices = sorted ? Math.max(1, Math.floor(options.sortedFiles ?? 1)) : 1;
    const format = `${parquetOptions(settings)}${options.fieldIds ? `, field_ids ${options.fieldIds}` : ""}`;
    const target = sorted
      ? `${sqlString(join(staging, "f0.parquet"))} (${format}, return_stats true)`
      : `${sqlString(staging)} (${format}, ` +
        `file_size_bytes ${Math.max(1, Math.floor(options.targetFileBytes))}, filename_pattern 'f{i}', return_stats true)`;
    const copy = () =>
      withInsertionOrder(engine, sorted, () =>
        slices > 1
          ? copySlices(engine, sortedSelect(select, settings), slices, staging, format)
          : engine.query<CopyStatsRow>(`copy (${sortedSelect(select, settings)}) to ${target}`),
      );
    // A sort takes memory up to DuckDB's limit before it spills, and the process's resident memory
    // then passes the limit (an 8M-row sort under 768 MB peaked at 1,070 MB): it runs under a
    // share of the limit, so that the agent as a whole stays near it.
    const copied = sorted
      ? await withMemoryLimit(engine, SORT_MEMORY_SHARE * engine.memoryLimitMb, copy)
      : await copy();
    copied.sort((a, b) => fileIndex(a.filename) - fileIndex(b.filename));
    const files: WrittenFile[] = [];
    for (const [i, row] of copied.entries()) {
      const path = join(options.outDir, `${options.namePrefix}-c${String(i).padStart(3, "0")}.parquet`);
      await rename(join(staging, basename(row.filename)), path);
      const stats = statsFromCopy(leaves, row);
      files.push({ path, bytes: (await stat(path)).size, rows: stats.numRecords, stats });
    }
    const paths = files.map((f) => f.path);
    // Settles to its error, so that a checksum failure never leaves it rejecting unobserved.
    const beside = (options.onWritten?.(paths) ?? Promise.resolve()).then(
      () => null,
      (err: Error) => err,
    );
    const checksum =
      files.length > 0 ? await checksumFiles(engine, paths, columns) : checksumFromRows(columns, []);
    const failed = await beside;
    if (failed) throw failed;
    return { files, checksum };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The rows of `sorted` (a query with an `ORDER BY`) in `slices` files of equal rows, in order
 * (`f0.parquet`, `f1.parquet`, ... in `folder`): the
 * rows are stored once in a temporary table (in the order inserted, as insertion order is kept),
 * then each slice is a range of its row ids. Runs with insertion order kept (the caller's).
 */
async function copySlices(
  engine: Engine,
  sorted: string,
  slices: number,
  folder: string,
  format: string,
): Promise<CopyStatsRow[]> {
  await engine.run(`create or replace temp table crunch_sorted as ${sorted}`);
  try {
    const [row] = await engine.query<{ n: string }>("select count(*) as n from crunch_sorted");
    const rows = Number(row?.n ?? 0);
    const per = Math.max(1, Math.ceil(rows / slices));
    const out: CopyStatsRow[] = [];
    for (let first = 0, i = 0; first < Math.max(1, rows); first += per, i++)
      out.push(
        ...(await engine.query<CopyStatsRow>(
          `copy (select * from crunch_sorted where rowid >= ${first} and rowid < ${first + per}) ` +
            `to ${sqlString(join(folder, `f${i}.parquet`))} (${format}, return_stats true)`,
        )),
      );
    return out;
  } finally {
    await engine.run("drop table if exists crunch_sorted");
  }
}

/** The share of DuckDB's memory limit a sorted write runs under (see `rewriteFiles`). */
export const SORT_MEMORY_SHARE = 0.5;

/** Runs `body` with DuckDB's memory limit lowered to `mb`, restoring the engine's limit after. */
async function withMemoryLimit<T>(engine: Engine, mb: number, body: () => Promise<T>): Promise<T> {
  await engine.run(`set memory_limit = '${Math.max(16, Math.floor(mb))}MB'`);
  try {
    return await body();
  } finally {
    await engine.run(`set memory_limit = '${engine.memoryLimitMb}MB'`);
  }
}

function fileIndex(name: string): number {
  return Number(/(\d+)\.parquet$/.exec(name)?.[1] ?? 0);
}
