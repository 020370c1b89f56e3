/**
 * The DuckDB side of a JSON conversion: infer → per chunk (load → check keys → prove → write) →
 * prove the outputs.
 *
 * - Infer: DuckDB's JSON reader infers each input's schema from a sample of its records (20,480
 *   per file) and widens them into one (`union_by_name`): a field that is a number in one file
 *   and text in another becomes JSON, never text.
 * - Load, in chunks of whole files of at most a quarter of the memory limit of JSON (a table that
 *   outgrows the limit spills, several times slower): every input read with exactly that schema.
 *   A value that does not fit (past the sample) fails the run with DuckDB's message, naming the
 *   input's URI and line.
 * - Check keys: a key no sample saw would be dropped silently by the reader. The chunk's files
 *   longer than the sample have their records' top-level keys compared with the columns (a
 *   shorter file was inferred from every record); if one is missing, the schema is inferred again
 *   from every record (slow, and rare) and every chunk is done again.
 * - Prove the chunk's rows (count and the order-insensitive row checksum, `engine/checksum.ts`)
 *   and write them as Parquet (zstd) of about the target file size (smaller where a chunk holds
 *   less), under the scratch folder.
 * - Prove the outputs: the count and checksum of every written file against the chunks' sum; any
 *   difference fails the run.
 */
import { mkdir, readdir, rm } from "node:fs/promises";
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
/** Records per file DuckDB's JSON reader infers the schema from (its own default, stated here). */
const SAMPLE_RECORDS = 20_480;
/**
 * Files up to this size with no more records than the sample are taken as inferred whole; larger
 * ones are checked whatever their count, in case the reader's sample stopped at a buffer's end.
 */
const SAMPLED_WHOLE_BYTES = 16 * 2 ** 20;
/** The column naming each record's file in the loaded table: not a name a JSON key is likely to take. */
const FILE_COLUMN = "__lakesmith_input_file";

/** A local input and the URI it was read from (error messages name the URI). */
export interface LocalInput {
  path: string;
  uri: string;
  size: number;
}

export interface Converted {
  columns: TableColumn[];
  /** The loaded rows' checksum, equal to the written files'. */
  checksum: Checksum;
  /** The written Parquet files and their rows, in order. */
  files: { path: string; rows: number }[];
  /** Milliseconds each step took: infer, key_check, write, prove. */
  stepMs: Record<string, number>;
}

export interface ConvertSteps {
  /** JSON bytes loaded at once; default a `CHUNK_SHARE`th of the engine's memory limit. */
  chunkBytes?: number;
  /** Called with the written files before they are proven: a test's way to damage one. */
  afterWrite?: (files: string[]) => Promise<void>;
}

type StepTimer = <T>(step: string, work: () => Promise<T>) => Promise<T>;

export async function convertJson(
  engine: Engine,
  inputs: readonly LocalInput[],
  outDir: string,
  targetFileSizeMb: number,
  steps: ConvertSteps = {},
): Promise<Converted> {
  const paths = inputs.map((i) => i.path);
  const stepMs: Record<string, number> = { infer: 0, key_check: 0, load: 0, write: 0, prove: 0 };
  const timed: StepTimer = async (step, work) => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      stepMs[step] = (stepMs[step] ?? 0) + Math.round(performance.now() - started);
    }
  };
  const chunkBytes = steps.chunkBytes ?? (engine.memoryLimitMb * 2 ** 20) / CHUNK_SHARE;
  let columns = await timed("infer", () => inferColumns(engine, paths, false));
  let written = await writeChunks(
    engine,
    chunks(inputs, chunkBytes),
    columns,
    outDir,
    targetFileSizeMb,
    timed,
  );
  if ("unseen" in written) {
    // A key no sample saw: the schema from every record, and every chunk again.
    await rm(outDir, { recursive: true, force: true });
    columns = await timed("infer", () => inferColumns(engine, paths, true));
    written = await writeChunks(engine, chunks(inputs, chunkBytes), columns, outDir, targetFileSizeMb, timed);
    if ("unseen" in written)
      throw new JobError(
        `keys ${written.unseen.join(", ")} of the inputs have no column; nothing was converted`,
        { retryable: false },
      );
  }
  const { files } = written;
  const checksum = sumChecksums(columns, written.parts);
  await steps.afterWrite?.(files);
  const outputs = await timed("prove", async () =>
    checksumOf(engine, await readAsColumns(engine, files, columns), columns),
  );
  const problems = compareChecksums(checksum, outputs);
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
    `describe select * from read_json(${sqlList(paths)}, union_by_name = true, sample_size = ${everyRecord ? -1 : SAMPLE_RECORDS})`,
  );
  return rows.map((r) => ({ name: r.column_name, type: r.column_type }));
}

/**
 * Loads, proves and writes the inputs a chunk at a time (`out/<chunk>/part-<n>.parquet`); stops
 * at a chunk whose files longer than the sample hold a top-level key that is not a column.
 */
async function writeChunks(
  engine: Engine,
  groups: LocalInput[][],
  columns: TableColumn[],
  outDir: string,
  targetFileSizeMb: number,
  timed: StepTimer,
): Promise<{ parts: Checksum[]; files: string[] } | { unseen: string[] }> {
  const all = columns.map((c) => sqlIdent(c.name)).join(", ");
  const parts: Checksum[] = [];
  const files: string[] = [];
  await mkdir(outDir, { recursive: true });
  for (const [n, chunk] of groups.entries()) {
    await timed("load", () => load(engine, chunk, columns));
    const records = await engine.query<{ file: string; n: string }>(
      `select ${sqlIdent(FILE_COLUMN)} as file, count(*) as n from ${TABLE} group by 1`,
    );
    const recordsOf = new Map(records.map((r) => [r.file, Number(r.n)]));
    // A small file of no more records than the sample was inferred from every record: no key can be missing.
    const longer = chunk
      .filter((i) => i.size > SAMPLED_WHOLE_BYTES || (recordsOf.get(i.path) ?? 0) > SAMPLE_RECORDS)
      .map((i) => i.path);
    const unseen = await timed("key_check", () => keysNotIn(engine, longer, columns));
    if (unseen.length > 0) {
      await engine.run(`drop table ${TABLE}`);
      return { unseen };
    }
    parts.push(await timed("prove", () => checksumOf(engine, `select ${all} from ${TABLE}`, columns)));
    const dir = join(outDir, String(n));
    await timed("write", () =>
      engine.run(
        `copy (select ${all} from ${TABLE}) to ${sqlString(dir)} (format parquet, compression zstd, file_size_bytes '${targetFileSizeMb}MB', filename_pattern 'part-{i}')`,
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
  return { parts, files };
}

/** Loads the inputs, read with exactly `columns`, into `TABLE` (with each record's file). */
async function load(engine: Engine, inputs: readonly LocalInput[], columns: TableColumn[]): Promise<void> {
  const spec = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(", ");
  await engine.run(`drop table if exists ${TABLE}`);
  await engine
    .run(
      `create temp table ${TABLE} as select * from read_json(${sqlList(inputs.map((i) => i.path))}, columns = {${spec}}, filename = ${sqlString(FILE_COLUMN)})`,
    )
    .catch((err) => {
      throw misfit(err, inputs);
    });
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

/** DuckDB's error for a value that does not fit the schema, naming the input's URI, not its copy. */
function misfit(err: unknown, inputs: readonly LocalInput[]): Error {
  const raw = err instanceof Error ? err.message : String(err);
  let message = raw.split("\n")[0] ?? raw;
  for (const input of inputs) message = message.replaceAll(input.path, input.uri);
  return new JobError(`a value does not fit the inputs' schema, nothing was converted: ${message}`, {
    retryable: false,
    cause: err,
  });
}

/** Top-level keys of the inputs' records that are not columns. */
async function keysNotIn(engine: Engine, paths: string[], columns: TableColumn[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const known = columns.map((c) => sqlString(c.name)).join(", ");
  const rows = await engine.query<{ key: string }>(
    `select distinct key from (select unnest(json_keys(json)) as key from read_json_objects(${sqlList(paths)}))
      where key not in (${known || "''"}) order by key limit 20`,
  );
  return rows.map((r) => r.key);
}

function byNumber(a: string, b: string): number {
  return Number(a.replace(/\D/g, "")) - Number(b.replace(/\D/g, ""));
}
