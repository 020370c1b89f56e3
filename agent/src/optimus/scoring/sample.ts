/**
 * The bounded sample a scoring simulates layouts on, loaded into DuckDB as the temporary table
 * `SAMPLE_TABLE`: the filtered columns of up to `maxRows` rows of the table, with the order the files
 * hold them in (`ORD_COLUMN`: increasing, not necessarily contiguous).
 *
 * Rules:
 * - Files are chosen as an opportunity scan chooses them (`opportunities/sample.ts`), spread evenly
 *   over the table's files in key order: as many as the row bound needs at the table's rows per
 *   file (from the metadata's row counts; where some files lack one, from the rows per byte of those
 *   that have one, or of one file's footer), but at least `MIN_SPREAD_FILES` (or all) so that a table
 *   of large files is not judged by one, as far as `SPREAD_BYTES` of files allow; at most
 *   `MAX_SAMPLE_FILES`. Chosen files are downloaded whole into the job's scratch folder.
 * - Where the chosen files hold more rows than the bound, evenly spaced rows of them are kept (row g
 *   of the files' T rows in order, when floor((g+1)·B/T) > floor(g·B/T)): exactly the bound, thinned
 *   while the files are scanned, so no more than the sample is ever held. Deterministic: the same
 *   snapshot gives the same sample.
 * - Only the asked columns are read. A partition column's value comes from the file's partition
 *   values (where a file also holds the column, the file's value wins); one that can't be read in the
 *   column's type is null.
 */
import { join } from "node:path";
import { readAsColumns } from "../../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../../engine/duckdb.ts";
import { withInsertionOrder } from "../../engine/rewrite.ts";
import type { Table, TableFile } from "../../formats/index.ts";
import { pickSample } from "../../opportunities/sample.ts";
import { localPaths, type ObjectStore } from "../../store/index.ts";
import { kindOf } from "./values.ts";

export const SAMPLE_TABLE = "optimus_sample";
/** The sample's row order as the files hold it. */
export const ORD_COLUMN = "__lakesmith_scoring_ord";
/** The fewest files a sample spreads over (where the table has them), whatever their size. */
export const MIN_SPREAD_FILES = 32;
/** The bytes a sample may read to reach `MIN_SPREAD_FILES` (files of 1 GB: 2 of them, not 32). */
export const SPREAD_BYTES = 2 * 2 ** 30;
/** The most files a sample reads: a table of many tiny files gets a smaller sample, not a slow one. */
export const MAX_SAMPLE_FILES = 2_000;

export interface SampleJob {
  engine: Engine;
  store: ObjectStore;
  table: Pick<Table, "files" | "columns" | "partitionColumns" | "typeOf">;
  /** The columns to read, in the table's spelling. */
  columns: readonly string[];
  maxRows: number;
  dir: string;
  signal: AbortSignal;
}

export interface LoadedSample {
  rows: number;
  /** Files read (whole or, the last, in part). */
  files: number;
}

export async function loadSample(job: SampleJob): Promise<LoadedSample> {
  const { engine, table } = job;
  const files = table.files.filter((f) => f.size > 0);
  if (files.length === 0 || job.maxRows <= 0) return emptySample(engine, job.columns);
  const needed = await filesNeeded(job, files);
  const picks = pickSample(files, {
    maxFiles: spreadCount(files, needed),
    maxBytes: Number.POSITIVE_INFINITY,
  });
  const paths = await localPaths(
    job.store,
    picks.map((f) => f.key),
    join(job.dir, "files"),
    job.signal,
  );
  // Rows before each file in the sample's order, from the footers: row g of T is kept when
  // floor((g+1)·B/T) > floor(g·B/T), which keeps B = min(bound, T) rows, evenly spaced.
  const footers = await engine.query<{ file_name: string; n: string | number }>(
    `select file_name, sum(num_rows) as n from parquet_file_metadata(${sqlList(paths)}) group by file_name`,
  );
  const rowsOf = new Map(footers.map((f) => [f.file_name, Number(f.n)]));
  const offsets: number[] = [];
  let total = 0;
  for (const path of paths) {
    offsets.push(total);
    total += rowsOf.get(path) ?? 0;
  }
  const bound = Math.min(job.maxRows, total);
  const g = `(list_extract([${offsets.join(", ")}]::bigint[], file_index::bigint + 1) + file_row_number)`;
  const wanted = new Set(job.columns);
  const dataColumns = table.columns.filter((c) => wanted.has(c.name));
  // `readAsColumns` is one SELECT over `read_parquet`: the WHERE filters its scan (virtual columns).
  const source = `${await readAsColumns(engine, paths, dataColumns, { filename: true })} where ${
    bound === total ? "true" : `((${g} + 1) * ${bound}) // ${total} > (${g} * ${bound}) // ${total}`
  }`;
  await withInsertionOrder(engine, true, () =>
    engine.run(`create or replace temp table optimus_raw as ${source}`),
  );
  try {
    const partitions = table.partitionColumns.filter((c) => wanted.has(c));
    await engine.run(
      `create or replace temp table optimus_files (filename varchar${partitions.map((_, i) => `, pv_${i} varchar`).join("")})`,
    );
    await engine.run(
      `insert into optimus_files values ${paths
        .map(
          (path, i) =>
            `(${sqlString(path)}${partitions.map((c) => `, ${sqlValue(picks[i]?.partitionValues[c])}`).join("")})`,
        )
        .join(", ")}`,
    );
    const list = job.columns.map((c) => {
      const p = partitions.indexOf(c);
      const data = dataColumns.some((d) => d.name === c);
      if (p < 0) return `r.${sqlIdent(c)}`;
      const fromPath = `try_cast(f.pv_${p} as ${partitionType(table, c)})`;
      return `${data ? `coalesce(r.${sqlIdent(c)}, ${fromPath})` : fromPath} as ${sqlIdent(c)}`;
    });
    await engine.run(
      `create or replace temp table ${SAMPLE_TABLE} as
       select r.rowid as ${sqlIdent(ORD_COLUMN)}${list.map((l) => `, ${l}`).join("")}
       from optimus_raw r join optimus_files f on r.filename = f.filename`,
    );
    const [count] = await engine.query<{ n: string | number }>(`select count(*) as n from ${SAMPLE_TABLE}`);
    return { rows: Number(count?.n ?? 0), files: paths.length };
  } finally {
    await engine.run("drop table if exists optimus_raw; drop table if exists optimus_files");
  }
}

/** How many files a sample reads when the bound needs `needed` of them (see the module comment). */
export function spreadCount(files: readonly Pick<TableFile, "size">[], needed: number): number {
  const averageSize = files.reduce((n, f) => n + f.size, 0) / Math.max(1, files.length);
  const extra = Math.min(MIN_SPREAD_FILES, Math.floor(SPREAD_BYTES / Math.max(1, averageSize)));
  return Math.min(files.length, MAX_SAMPLE_FILES, Math.max(needed, extra));
}

/** How many files the bound needs at the table's rows per file (at least 1, at most all). */
async function filesNeeded(job: SampleJob, files: readonly TableFile[]): Promise<number> {
  const known = files.filter((f) => f.rows !== undefined);
  let rowsPerByte: number;
  if (known.length > 0)
    rowsPerByte = known.reduce((s, f) => s + (f.rows ?? 0), 0) / known.reduce((s, f) => s + f.size, 0);
  else {
    const middle = files[Math.floor(files.length / 2)] as TableFile;
    const [path] = await localPaths(job.store, [middle.key], join(job.dir, "footer"), job.signal);
    const [row] = await job.engine.query<{ n: string | number }>(
      `select count(*) as n from read_parquet(${sqlString(path as string)})`,
    );
    rowsPerByte = Number(row?.n ?? 0) / middle.size;
  }
  const estimated = files.reduce((s, f) => s + (f.rows ?? f.size * rowsPerByte), 0);
  const perFile = estimated / files.length;
  if (perFile <= 0) return files.length;
  return Math.max(1, Math.min(files.length, Math.ceil(job.maxRows / perFile)));
}

/** An empty sample with the columns (for a table without rows): every candidate then skips nothing. */
async function emptySample(engine: Engine, columns: readonly string[]): Promise<LoadedSample> {
  await engine.run(
    `create or replace temp table ${SAMPLE_TABLE} (${[ORD_COLUMN, ...columns].map((c) => `${sqlIdent(c)} varchar`).join(", ")})`,
  );
  return { rows: 0, files: 0 };
}

/** The DuckDB type a partition column's text is read as: the data column's where there is one. */
function partitionType(table: SampleJob["table"], column: string): string {
  const data = table.columns.find((c) => c.name === column);
  if (data) return data.type;
  const type = table.typeOf(column).toLowerCase();
  if (["byte", "short", "integer", "long"].includes(type)) return "HUGEINT";
  if (kindOf(type) === "number") return "DOUBLE";
  if (type === "date") return "DATE";
  if (kindOf(type) === "timestamp") return "TIMESTAMP";
  return "VARCHAR";
}

function sqlValue(value: string | null | undefined): string {
  return value === null || value === undefined ? "NULL" : sqlString(value);
}
