/**
 * The DuckDB side of a JSON conversion: infer → check keys → prove the inputs → write → prove
 * the outputs.
 *
 * - Infer: DuckDB's JSON reader infers each input's schema from a sample of its records and
 *   widens them into one (`union_by_name`): a field that is a number in one file and text in
 *   another becomes JSON, never text.
 * - Check keys: a key no sample saw would be dropped silently by the reader: the inputs' top-level
 *   keys are compared with the columns, and if one is missing the schema is inferred again from
 *   every record (slow, and rare).
 * - Prove the inputs: every input read with exactly that schema, streamed into the row count and
 *   the order-insensitive row checksum (`engine/checksum.ts`). A value that does not fit (past
 *   the sample) fails the run with DuckDB's message, naming the input's URI and line.
 * - Write: the same read streamed into Parquet (zstd) of about the target file size, under the
 *   scratch folder; nothing is held in a table, so memory does not grow with the run.
 * - Prove the outputs: the same count and checksum of the written files; any difference fails the
 *   run.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type Checksum,
  checksumOf,
  compareChecksums,
  readAsColumns,
  type TableColumn,
} from "../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../engine/duckdb.ts";
import { JobError } from "../registry.ts";

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
  /** Milliseconds each step took: infer, key_check, write, prove. */
  stepMs: Record<string, number>;
}

export interface ConvertSteps {
  /** Called with the written files before they are proven: a test's way to damage one. */
  afterWrite?: (files: string[]) => Promise<void>;
}

export async function convertJson(
  engine: Engine,
  inputs: readonly LocalInput[],
  outDir: string,
  targetFileSizeMb: number,
  steps: ConvertSteps = {},
): Promise<Converted> {
  const paths = inputs.map((i) => i.path);
  const stepMs: Record<string, number> = { infer: 0, key_check: 0, write: 0, prove: 0 };
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
  const source = readJson(inputs, columns);
  const checksum = await timed("prove", () => checksumOf(engine, source, columns)).catch((err) => {
    throw misfit(err, inputs);
  });
  await mkdir(outDir, { recursive: true });
  await timed("write", () =>
    engine.run(
      `copy (${source}) to ${sqlString(outDir)} (format parquet, compression zstd, file_size_bytes '${targetFileSizeMb}MB', filename_pattern 'part-{i}', overwrite_or_ignore)`,
    ),
  ).catch((err) => {
    throw misfit(err, inputs);
  });
  const files = (await readdir(outDir))
    .filter((f) => f.endsWith(".parquet"))
    .sort(byNumber)
    .map((f) => join(outDir, f));
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

/** A `SELECT` of every input read with exactly `columns`. */
function readJson(inputs: readonly LocalInput[], columns: TableColumn[]): string {
  const spec = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(", ");
  const list = columns.map((c) => sqlIdent(c.name)).join(", ");
  return `select ${list} from read_json(${sqlList(inputs.map((i) => i.path))}, columns = {${spec}})`;
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
