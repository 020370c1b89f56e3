/**
 * The DuckDB side of a JSON conversion: first the sampled path (`sampled.ts`: one streamed copy
 * with the sample's schema, proven over every record to cast nothing); where the sample's schema
 * does not hold every record, the every-record path: infer → per chunk (load → prove → write) →
 * prove the outputs.
 *
 * - Infer (`schema.ts`): the lossless schema, from every record of every input (no key, at any
 *   depth, is dropped; text stays text; integers stay exact).
 * - Load, in chunks of whole files of at most a quarter of the memory limit of JSON (a table that
 *   outgrows the limit spills, several times slower): every input read with exactly that schema.
 *   A record that cannot be read with it fails the run with DuckDB's message, naming the input's
 *   URI and line.
 * - Prove the chunk's rows (count and the order-insensitive row checksum, `engine/checksum.ts`)
 *   and write them: a single chunk as the outputs (zstd Parquet of about the target file size);
 *   several as lz4 intermediates, then joined in one streamed copy into the outputs, so files
 *   approach the target size across chunks.
 * - Prove the outputs: the count and checksum of every written file against the chunks' sum; any
 *   difference fails the run.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type Checksum,
  checksumOf,
  compareChecksums,
  readAsColumns,
  sumChecksums,
  type TableColumn,
} from "../engine/checksum.ts";
import { type Engine, sqlList } from "../engine/duckdb.ts";
import { JobError } from "../registry.ts";
import { type LocalInput, misfit } from "./misfit.ts";
import { writeParquet } from "./parquet-files.ts";
import { convertSampled } from "./sampled.ts";
import { exactRead, losslessColumns, readOptions, retypeInexact } from "./schema.ts";

const TABLE = "conversion_rows";
/** The folder of the outputs under the scratch folder (intermediates lie beside it). */
const FINAL = "final";
/**
 * JSON bytes loaded at once: the engine's memory limit over this. The loaded rows take several
 * times their JSON's size less, but a table that outgrows the limit spills, and spilled loads were
 * many times slower than loads that fit.
 */
const CHUNK_SHARE = 4;

export type { LocalInput } from "./misfit.ts";

export interface Converted {
  columns: TableColumn[];
  /** The loaded rows' checksum, equal to the written files'. */
  checksum: Checksum;
  /** The written Parquet files and their rows, in order. */
  files: { path: string; rows: number }[];
  /**
   * Milliseconds each step took: the sampled path's infer, write, prove_inputs, prove_outputs; the
   * every-record path's infer, load, write, prove, with `sampled_attempt` the sampled path's time.
   */
  stepMs: Record<string, number>;
  /** Which schema the outputs have: the sample's, proven to cast nothing, or one inferred from every record. */
  path: "sampled" | "every record";
}

export interface ConvertSteps {
  /** JSON bytes loaded at once; default a `CHUNK_SHARE`th of the engine's memory limit. */
  chunkBytes?: number;
  /** Called with the written files before they are proven: a test's way to damage one. */
  afterWrite?: (files: string[]) => Promise<void>;
  /** False: straight to the every-record path (a test's way to reach it with inputs the sample holds). */
  sampled?: boolean;
}

type StepTimer = <T>(step: string, work: () => Promise<T>) => Promise<T>;

function stepTimer(stepMs: Record<string, number>): StepTimer {
  return async (step, work) => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      stepMs[step] = (stepMs[step] ?? 0) + Math.round(performance.now() - started);
    }
  };
}

export async function convertJson(
  engine: Engine,
  inputs: readonly LocalInput[],
  outDir: string,
  targetFileSizeMb: number,
  steps: ConvertSteps = {},
): Promise<Converted> {
  await mkdir(outDir, { recursive: true });
  const attemptMs: Record<string, number> = { infer: 0, write: 0, prove_inputs: 0, prove_outputs: 0 };
  if (steps.sampled !== false) {
    const sampled = await convertSampled(
      engine,
      inputs,
      join(outDir, FINAL),
      targetFileSizeMb,
      stepTimer(attemptMs),
      steps.afterWrite,
    );
    if (sampled)
      return { ...sampled, files: await withRows(engine, sampled.files), stepMs: attemptMs, path: "sampled" };
    await rm(outDir, { recursive: true, force: true });
  }
  const stepMs: Record<string, number> = { infer: 0, load: 0, write: 0, prove: 0 };
  if (steps.sampled !== false)
    stepMs.sampled_attempt = Object.values(attemptMs).reduce((sum, ms) => sum + ms, 0);
  const timed = stepTimer(stepMs);
  const chunkBytes = steps.chunkBytes ?? (engine.memoryLimitMb * 2 ** 20) / CHUNK_SHARE;
  let columns = await timed("infer", () => losslessColumns(engine, inputs));
  let written = await writeChunks(
    engine,
    chunks(inputs, chunkBytes),
    columns,
    outDir,
    targetFileSizeMb,
    timed,
  );
  if ("inexact" in written) {
    // A DOUBLE field holds an integer a double does not hold exactly: retyped, and every chunk again.
    await rm(outDir, { recursive: true, force: true });
    const hits = written.inexact;
    columns = await timed("infer", () => retypeInexact(engine, inputs, columns, hits));
    written = await writeChunks(engine, chunks(inputs, chunkBytes), columns, outDir, targetFileSizeMb, timed);
    if ("inexact" in written) throw new Error("a retyped schema still holds an inexact DOUBLE field");
  }
  const checksum = sumChecksums(columns, written.parts);
  // Chunks' intermediates joined into files of about the target size: streamed, within the memory limit.
  const files =
    written.files.length > 0 && !written.files[0]?.startsWith(join(outDir, FINAL))
      ? await timed("write", async () => {
          const joined = await writeParquet(
            engine,
            `select * from read_parquet(${sqlList(written.files)})`,
            join(outDir, FINAL),
            targetFileSizeMb,
          );
          for (const f of written.files) await rm(f);
          return joined;
        })
      : written.files;
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
  return { columns, checksum, files: await withRows(engine, files), stepMs, path: "every record" };
}

/** The files with their row counts, from their footers. */
async function withRows(engine: Engine, files: readonly string[]): Promise<Converted["files"]> {
  const counts = await engine.query<{ file_name: string; num_rows: string }>(
    `select file_name, num_rows from parquet_file_metadata(${sqlList(files)})`,
  );
  const rowsOf = new Map(counts.map((c) => [c.file_name, Number(c.num_rows)]));
  return files.map((path) => ({ path, rows: rowsOf.get(path) ?? 0 }));
}

/**
 * Loads, proves and writes the inputs a chunk at a time (`out/<chunk>/part-<n>.parquet`); stops at
 * a chunk whose DOUBLE fields hold an integer a double does not hold exactly (`inexact`: per leaf).
 */
async function writeChunks(
  engine: Engine,
  groups: LocalInput[][],
  columns: TableColumn[],
  outDir: string,
  targetFileSizeMb: number,
  timed: StepTimer,
): Promise<{ parts: Checksum[]; files: string[] } | { inexact: boolean[] }> {
  const read = exactRead(columns);
  const all = read.select;
  const parts: Checksum[] = [];
  const files: string[] = [];
  await mkdir(outDir, { recursive: true });
  for (const [n, chunk] of groups.entries()) {
    await timed("load", () => load(engine, chunk, read.spec));
    if (read.check) {
      const [row] = await timed("load", () =>
        engine.query<Record<string, boolean>>(`select ${read.check} from ${TABLE}`),
      );
      const hits = Object.keys(row ?? {}).map((k) => row?.[k] === true);
      if (hits.some(Boolean)) {
        await engine.run(`drop table ${TABLE}`);
        return { inexact: hits };
      }
    }
    parts.push(await timed("prove", () => checksumOf(engine, `select ${all} from ${TABLE}`, columns)));
    // One chunk is written as the outputs; several as fast intermediates that `compact` joins.
    const final = groups.length === 1;
    const dir = join(outDir, final ? FINAL : `chunk-${n}`);
    files.push(
      ...(await timed("write", () =>
        writeParquet(engine, `select ${all} from ${TABLE}`, dir, targetFileSizeMb, !final),
      )),
    );
    await engine.run(`drop table ${TABLE}`);
  }
  return { parts, files };
}

/** Loads the inputs, read with exactly the columns `spec` (a `read_json` columns struct), into `TABLE`. */
async function load(engine: Engine, inputs: readonly LocalInput[], spec: string): Promise<void> {
  await engine.run(`drop table if exists ${TABLE}`);
  await engine
    .run(
      `create temp table ${TABLE} as select * from read_json(${sqlList(inputs.map((i) => i.path))}, columns = {${spec}}, ${readOptions(inputs.length)})`,
    )
    .catch(async (err) => {
      throw await misfit(err, inputs);
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
