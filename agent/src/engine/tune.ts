/**
 * Chooses a crunch's write settings by measurement, not assumption: a bounded sample of the bin is
 * written with a few candidate settings and the smallest output whose write time stays within
 * `maxSlowdown` of the plain candidate wins.
 *
 * Bounds: the sample is at most `sampleRows` rows from at most `sampleFiles` files, loaded once into a
 * temporary table, so the cost does not grow with the table; candidates stop once `timeBudgetMs` is
 * spent (the plain candidate always runs). Sorting can make files larger as well as smaller (it breaks
 * the arrival order that delta and dictionary encodings may already exploit), so sorted candidates
 * compete like the others. Parquet v2 is only tried when the caller allows it.
 *
 * @example
 * const settings = await tuneSettings(engine, { inputs, columns, scratchDir, clusterColumns: ["event_time"] });
 * // settings.reason: "zstd level 3, 1048576-row groups: 41% smaller than plain on a 200000-row sample"
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import { readAsColumns, type TableColumn } from "./checksum.ts";
import { type Engine, sqlList, sqlString } from "./duckdb.ts";
import { type CrunchWriteSettings, orderBy, parquetOptions, withInsertionOrder } from "./rewrite.ts";

export interface TuneOptions {
  inputs: readonly string[];
  columns: readonly TableColumn[];
  /** Where trial files go (removed again). */
  scratchDir: string;
  /** The table's cluster columns: candidate sort keys. */
  clusterColumns?: readonly string[];
  /** Low-cardinality columns (profile.ts `pickEnumeratedColumns`): tried as a leading sort key. */
  enumeratedColumns?: readonly string[];
  /** Whether every reader of the table accepts Parquet v2 pages. */
  allowParquetV2?: boolean;
  sampleRows?: number;
  sampleFiles?: number;
  timeBudgetMs?: number;
  /** A candidate may take at most this many times the plain candidate's write time (default 1.5). */
  maxSlowdown?: number;
}

/** DuckDB's default row-group size: the plain rewrite's setting. */
export const DEFAULT_ROW_GROUP_SIZE = 122_880;
/** The largest row group tried; bounded further so one row group stays near `ROW_GROUP_MAX_BYTES`. */
export const MAX_ROW_GROUP_SIZE = 1_048_576;
/** Uncompressed bytes one row group may hold: the writer buffers a whole row group per thread. */
export const ROW_GROUP_MAX_BYTES = 96 * 2 ** 20;

export interface Trial {
  settings: CrunchWriteSettings;
  bytes: number;
  ms: number;
}

/** A short, stable description of write settings, as recorded in `trials`. */
export function describeSettings(s: CrunchWriteSettings): string {
  const level = s.compression_level === null ? "" : ` level ${s.compression_level}`;
  const sort = s.sort_columns.length > 0 ? `, sorted by ${s.sort_columns.join(", ")}` : "";
  return `${s.compression}${level}, ${s.row_group_size}-row groups${sort}, parquet ${s.parquet_version}`;
}

/** The candidates, plain first; the large row group is capped by the estimated row width. */
export function candidateSettings(options: {
  bytesPerRow: number;
  clusterColumns: readonly string[];
  enumeratedColumns: readonly string[];
}): CrunchWriteSettings[] {
  const capped = Math.floor(ROW_GROUP_MAX_BYTES / Math.max(1, options.bytesPerRow) / 2048) * 2048;
  const large = Math.max(DEFAULT_ROW_GROUP_SIZE, Math.min(MAX_ROW_GROUP_SIZE, capped));
  const plain: CrunchWriteSettings = {
    compression: "zstd",
    compression_level: 3,
    row_group_size: DEFAULT_ROW_GROUP_SIZE,
    sort_columns: [],
    parquet_version: "v1",
  };
  const big = { ...plain, row_group_size: large };
  const out = [plain, big, { ...big, compression_level: 9 }];
  if (options.clusterColumns.length > 0) out.push({ ...big, sort_columns: [...options.clusterColumns] });
  const leading = options.enumeratedColumns.filter((c) => !options.clusterColumns.includes(c)).slice(0, 2);
  if (leading.length > 0) out.push({ ...big, sort_columns: [...leading, ...options.clusterColumns] });
  return out;
}

/**
 * The winner among `trials` (plain first): the smallest output whose write took at most `maxSlowdown`
 * times the plain one's.
 */
export function pickTrial(trials: readonly Trial[], maxSlowdown: number): Trial {
  const plain = trials[0];
  if (!plain) throw new Error("pickTrial needs at least the plain trial");
  const allowed = trials.filter((t) => t.ms <= plain.ms * maxSlowdown);
  return allowed.reduce((best, t) => (t.bytes < best.bytes ? t : best), plain);
}

/** Measures candidates on a sample of the bin and returns the chosen settings with the trials. */
export async function tuneSettings(engine: Engine, options: TuneOptions): Promise<CrunchSettings> {
  const started = performance.now();
  await mkdir(options.scratchDir, { recursive: true });
  const budget = options.timeBudgetMs ?? 10_000;
  const sampleFiles = options.inputs.slice(0, options.sampleFiles ?? 8);
  const sampleRows = options.sampleRows ?? 200_000;
  const select = await readAsColumns(engine, sampleFiles, options.columns);
  await engine.run(`create or replace temp table crunch_tune_sample as ${select} limit ${sampleRows}`);
  try {
    const [size] = await engine.query<{ rows: string; bytes: string }>(
      `select (select sum(num_rows) from parquet_file_metadata(${sqlList(sampleFiles)})) as rows,
         (select sum(total_uncompressed_size) from parquet_metadata(${sqlList(sampleFiles)})) as bytes`,
    );
    const bytesPerRow = Number(size?.bytes ?? 0) / Math.max(1, Number(size?.rows ?? 1));
    const [count] = await engine.query<{ n: string }>(`select count(*) as n from crunch_tune_sample`);
    const candidates = candidateSettings({
      bytesPerRow,
      clusterColumns: options.clusterColumns ?? [],
      enumeratedColumns: options.enumeratedColumns ?? [],
    });
    const trials: Trial[] = [];
    for (const [i, settings] of candidates.entries()) {
      if (i > 0 && performance.now() - started > budget) break;
      trials.push(await trialWrite(engine, settings, join(options.scratchDir, `tune-${i}.parquet`)));
    }
    let best = pickTrial(trials, options.maxSlowdown ?? 1.5);
    if (options.allowParquetV2 && performance.now() - started <= budget) {
      const v2 = { ...best.settings, parquet_version: "v2" as const };
      const trial = await trialWrite(engine, v2, join(options.scratchDir, "tune-v2.parquet"));
      trials.push(trial);
      if (trial.bytes < best.bytes && trial.ms <= (trials[0]?.ms ?? 0) * (options.maxSlowdown ?? 1.5))
        best = trial;
    }
    const plainBytes = trials[0]?.bytes ?? best.bytes;
    const saved = plainBytes > 0 ? Math.round(100 * (1 - best.bytes / plainBytes)) : 0;
    return {
      ...best.settings,
      reason:
        best === trials[0]
          ? `${describeSettings(best.settings)}: no candidate beat plain within the time allowance on a ${count?.n}-row sample`
          : `${describeSettings(best.settings)}: ${saved}% smaller than plain zstd on a ${count?.n}-row sample, ` +
            `write time ${(best.ms / Math.max(1, trials[0]?.ms ?? 1)).toFixed(1)}x plain`,
      trials: trials.map((t) => ({ settings: describeSettings(t.settings), bytes: t.bytes })),
    };
  } finally {
    await engine.run("drop table if exists crunch_tune_sample");
  }
}

async function trialWrite(engine: Engine, settings: CrunchWriteSettings, path: string): Promise<Trial> {
  const t0 = performance.now();
  await withInsertionOrder(engine, settings.sort_columns.length > 0, () =>
    engine.run(
      `copy (select * from crunch_tune_sample${orderBy(settings.sort_columns)}) to ${sqlString(path)} (${parquetOptions(settings)})`,
    ),
  );
  const ms = performance.now() - t0;
  const bytes = (await stat(path)).size;
  await rm(path, { force: true });
  return { settings, bytes, ms };
}
