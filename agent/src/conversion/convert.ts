/**
 * The DuckDB side of a JSON conversion: infer → prove the inputs → check keys → write → prove
 * the outputs.
 *
 * - Infer: DuckDB's JSON reader infers each input's schema from a sample of its records and
 *   widens them into one (`union_by_name`): a field that is a number in one file and text in
 *   another becomes JSON, never text.
 * - Prove the inputs: every input read with exactly that schema, streamed into the row count and
 *   the order-insensitive row checksum (`engine/checksum.ts`), per file. A value that does not fit
 *   (past the sample) fails the run with DuckDB's message, naming the input's URI and line.
 * - Check keys: a key no sample saw would be dropped silently by the reader. Files longer than the
 *   sample have their records' top-level keys compared with the columns (a file no longer was
 *   inferred from every record); if one is missing, the schema is inferred again from every
 *   record (slow, and rare) and the inputs proven again.
 * - Write: the same read streamed into Parquet (zstd) of about the target file size, under the
 *   scratch folder; nothing is held in a table, so memory does not grow with the run.
 * - Prove the outputs: the same count and checksum of the written files; any difference fails the
 *   run.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type Checksum,
  checksumAggregates,
  checksumFromRows,
  checksumOf,
  compareChecksums,
  readAsColumns,
  type TableColumn,
} from "../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../engine/duckdb.ts";
import { JobError } from "../registry.ts";

/** Records per file DuckDB's JSON reader infers the schema from (its own default, stated here). */
const SAMPLE_RECORDS = 20_480;
/**
 * Files up to this size with no more records than the sample are taken as inferred whole; larger
 * ones are checked whatever their count, in case the reader's sample stopped at a buffer's end.
 */
const SAMPLED_WHOLE_BYTES = 16 * 2 ** 20;
/** The column naming each record's file in the input proof: not a name a JSON key is likely to take. */
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
  const prove = (columns: TableColumn[]) =>
    timed("prove", () => proveInputs(engine, inputs, columns)).catch((err) => {
      throw misfit(err, inputs);
    });
  let columns = await timed("infer", () => inferColumns(engine, paths, false));
  let proof = await prove(columns);
  // A small file of no more records than the sample was inferred from every record: no key can be missing.
  const longer = inputs
    .filter((i) => i.size > SAMPLED_WHOLE_BYTES || (proof.recordsOf.get(i.path) ?? 0) > SAMPLE_RECORDS)
    .map((i) => i.path);
  if ((await timed("key_check", () => keysNotIn(engine, longer, columns))).length > 0) {
    columns = await timed("infer", () => inferColumns(engine, paths, true));
    proof = await prove(columns);
    const unseen = await timed("key_check", () => keysNotIn(engine, paths, columns));
    if (unseen.length > 0)
      throw new JobError(`keys ${unseen.join(", ")} of the inputs have no column; nothing was converted`, {
        retryable: false,
      });
  }
  const { checksum } = proof;
  const source = readJson(inputs, columns);
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
    `describe select * from read_json(${sqlList(paths)}, union_by_name = true, sample_size = ${everyRecord ? -1 : SAMPLE_RECORDS})`,
  );
  return rows.map((r) => ({ name: r.column_name, type: r.column_type }));
}

/** A `SELECT` of every input read with exactly `columns` (and, with `fileColumn`, its path). */
function readJson(inputs: readonly LocalInput[], columns: TableColumn[], fileColumn?: string): string {
  const spec = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(", ");
  const list = [...columns.map((c) => sqlIdent(c.name)), ...(fileColumn ? [sqlIdent(fileColumn)] : [])];
  const file = fileColumn ? `, filename = ${sqlString(fileColumn)}` : "";
  return `select ${list.join(", ")} from read_json(${sqlList(inputs.map((i) => i.path))}, columns = {${spec}}${file})`;
}

/** The inputs' checksum as `columns`, and how many records each file holds (one streamed pass). */
async function proveInputs(engine: Engine, inputs: readonly LocalInput[], columns: TableColumn[]) {
  const rows = await engine.query(
    `select ${sqlIdent(FILE_COLUMN)} as ck_file, ${checksumAggregates(columns)}
      from (${readJson(inputs, columns, FILE_COLUMN)}) group by ck_file`,
  );
  return {
    checksum: checksumFromRows(columns, rows),
    recordsOf: new Map(rows.map((r) => [String(r.ck_file), Number(r.ck_rows)])),
  };
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
