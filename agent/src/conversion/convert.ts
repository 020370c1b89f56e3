/**
 * The DuckDB side of a JSON conversion: infer → load → write → prove.
 *
 * - Infer: DuckDB's JSON reader infers each input's schema from a sample of its records and
 *   widens them into one (`union_by_name`): a field that is a number in one file and text in
 *   another becomes JSON, never text.
 * - Check: a key no sample saw would be dropped silently by the reader: the inputs' top-level keys
 *   are compared with the columns, and if one is missing the schema is inferred again from every
 *   record (slow, and rare).
 * - Load, in chunks of whole files of at most a quarter of the memory limit of JSON (so the
 *   table never spills): every input read with exactly that schema. A value that does not fit
 *   (past the sample) fails the run with DuckDB's message, naming the input's URI and line.
 * - Write each chunk as Parquet (zstd) of about the target file size (smaller where a chunk holds
 *   less), under the scratch folder.
 * - Prove: row count and the order-insensitive row checksum (`engine/checksum.ts`) of the loaded
 *   rows (summed over the chunks) against the same of all the written files; any difference fails
 *   the run.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type Checksum,
  checksumOf,
  compareChecksums,
  readAsColumns,
  sumChecksums,
  type TableColumn,
} from "../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../engine/duckdb.ts";
import { JobError } from "../registry.ts";

const TABLE = "conversion_rows";
/**
 * JSON bytes loaded at once: the engine's memory limit over this. The loaded rows take several
 * times their JSON's size less, but a table that outgrows the limit spills, and spilled loads were
 * many times slower than loads that fit.
 */
const CHUNK_SHARE = 4;

/** A local input and the URI it was read from (error messages name the URI). */
export interface LocalInput {
  path: string;
  uri: string;
}

export interface Converted {
  columns: TableColumn[];
  /** The loaded rows' checksum, equal to the written files'. */
  checksum: Checksum;
  /** The written Parquet files and their rows, in order. */
  files: { path: string; rows: number }[];
  /** Milliseconds each step took: infer, key_check, load, write, prove. */
  stepMs: Record<string, number>;
}

export interface ConvertSteps {
  /** JSON bytes loaded at once; default a `CHUNK_SHARE`th of the engine's memory limit. */
  chunkBytes?: number;
  /** Called with the written files before they are proven: a test's way to damage one. */
  afterWrite?: (files: string[]) => Promise<void>;
}

export async function convertJson(
  engine: Engine,
  inputs: readonly (LocalInput & { size: number })[],
  outDir: string,
  targetFileSizeMb: number,
  steps: ConvertSteps = {},
): Promise<Converted> {
  const paths = inputs.map((i) => i.path);
  const stepMs: Record<string, number> = { infer: 0, key_check: 0, load: 0, write: 0, prove: 0 };
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      stepMs[step] = (stepMs[step] ?? 0) + Math.round(performance.now() - started);
    }
  };
  let columns = await timed("infer", () => inferColumns(engine, paths, false));
  if ((await timed("key_check", () => keysNotIn(engine, paths, columns))).length > 0)
    columns = await timed("infer", () => inferColumns(engine, paths, true));
  const unseen = await timed("key_check", () => keysNotIn(engine, paths, columns));
  if (unseen.length > 0)
    throw new JobError(`keys ${unseen.join(", ")} of the inputs have no column; nothing was converted`, {
      retryable: false,
    });
  const all = columns.map((c) => sqlIdent(c.name)).join(", ");
  const parts: Checksum[] = [];
  const files: string[] = [];
  for (const [n, chunk] of chunks(
    inputs,
    steps.chunkBytes ?? (engine.memoryLimitMb * 2 ** 20) / CHUNK_SHARE,
  ).entries()) {
    await timed("load", () => load(engine, chunk, columns));
    parts.push(await timed("prove", () => checksumOf(engine, `select ${all} from ${TABLE}`, columns)));
    const dir = join(outDir, String(n));
    await mkdir(outDir, { recursive: true });
    await timed("write", () =>
      engine.run(
        `copy ${TABLE} to ${sqlString(dir)} (format parquet, compression zstd, file_size_bytes '${targetFileSizeMb}MB', filename_pattern 'part-{i}')`,
      ),
    );
    files.push(
      ...(await readdir(dir))
        .filter((f) => f.endsWith(".parquet"))
        .sort(byNumber)
        .map((f) => join(dir, f)),
    );
    await engine.run(`drop table ${TABLE}`);
  }
  const checksum = sumChecksums(columns, parts);
  await steps.afterWrite?.(files);
  const written = await timed("prove", async () =>
    checksumOf(engine, await readAsColumns(engine, files, columns), columns),
  );
  const problems = compareChecksums(checksum, written);
  if (problems.length > 0)
    throw new JobError(
      `the Parquet written does not hold the inputs' rows (${problems.join("; ")}); nothing was uploaded`,
      { retryable: false },
    );
  const counts = await engine.query<{ file_name: string; num_rows: string }>(
    `select file_name, num_rows from parquet_file_metadata(${sqlList(files)})`,
  );
  const rowsOf = new Map(counts.map((c) => [c.file_name, Number(c.num_rows)]));
  return {
    columns,
    checksum,
    files: files.map((path) => ({ path, rows: rowsOf.get(path) ?? 0 })),
    stepMs,
  };
}

/** The widened schema of the inputs: from a sample of each, or (`everyRecord`) from all of them. */
async function inferColumns(engine: Engine, paths: string[], everyRecord: boolean): Promise<TableColumn[]> {
  const rows = await engine.query<{ column_name: string; column_type: string }>(
    `describe select * from read_json(${sqlList(paths)}, union_by_name = true${everyRecord ? ", sample_size = -1" : ""})`,
  );
  return rows.map((r) => ({ name: r.column_name, type: r.column_type }));
}

async function load(engine: Engine, inputs: readonly LocalInput[], columns: TableColumn[]): Promise<void> {
  const spec = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(", ");
  await engine.run(`drop table if exists ${TABLE}`);
  try {
    await engine.run(
      `create temp table ${TABLE} as select * from read_json(${sqlList(inputs.map((i) => i.path))}, columns = {${spec}})`,
    );
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err);
    // DuckDB names the local copy; the user knows the input by its URI.
    let message = raw.split("\n")[0] ?? raw;
    for (const input of inputs) message = message.replaceAll(input.path, input.uri);
    throw new JobError(`a value does not fit the inputs' schema, nothing was converted: ${message}`, {
      retryable: false,
      cause: err,
    });
  }
}

/** Top-level keys of the inputs' records that are not columns. */
async function keysNotIn(engine: Engine, paths: string[], columns: TableColumn[]): Promise<string[]> {
  const known = columns.map((c) => sqlString(c.name)).join(", ");
  const rows = await engine.query<{ key: string }>(
    `select distinct key from (select unnest(json_keys(json)) as key from read_json_objects(${sqlList(paths)}))
      where key not in (${known || "''"}) order by key limit 20`,
  );
  return rows.map((r) => r.key);
}

/** The inputs in consecutive groups of at most `bytes` (whole files; a larger file alone). */
function chunks<T extends { size: number }>(inputs: readonly T[], bytes: number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const input of inputs) {
    if (current.length > 0 && size + input.size > bytes) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(input);
    size += input.size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

function byNumber(a: string, b: string): number {
  return Number(a.replace(/\D/g, "")) - Number(b.replace(/\D/g, ""));
}
