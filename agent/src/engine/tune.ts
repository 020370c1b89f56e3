/**
 * Chooses a crunch's write settings by measurement, not assumption: a sample of the bin is written
 * with candidate settings, and the smallest output whose write stays fast enough wins.
 *
 * "Fast enough" comes from the throughput target, not a guess: a crunch (tuning, rewrite and its two
 * validation scans) may take at most `1 / TARGET_THROUGHPUT` times a plain zstd rewrite. The tuner
 * measures on the sample what a plain write and a validation scan cost, gives tuning its share
 * (`TUNE_SHARE`), and what is left is the allowance for the write: a candidate qualifies when its write
 * took at most `allowance` times the plain one's CPU time (`cpuMs`: wall times on a shared machine
 * measure the load as much as the write) (a smaller candidate that misses is timed once more and
 * the faster time counts, so that one stall from other work on the machine does not decide). The
 * allowance is never below 1: where validation is so costly that even the plain write misses the
 * target, a candidate that writes no slower than plain still costs nothing against it, and a smaller
 * output is then the only gain left.
 *
 * Bounds: the sample is whole files spread across the bin, at most `sampleRows` rows (default: a
 * sixteenth of the bin, between 32,768 and 262,144 rows) from at most `sampleFiles` files, loaded once
 * into a temporary table. Trials run only where they can pay for themselves: the sample is read once
 * and written once per always-run trial, and those passes must fit in the tuning share (`tuneShare`,
 * default `TUNE_SHARE`) of the bytes the crunch writes with the choice (`crunchBytes`: every bin, as
 * the choice is kept for all of them). A smaller crunch (one bin of a few MB) gets the base settings
 * untried, its row groups sized by the bytes a row takes as estimated from the column types and
 * string lengths (row-bytes.ts; measured on the fewest sample rows where a column is nested): tuning
 * would cost it more than its whole plain write. Trials stop once the time box is spent: the tuning
 * share of the bin's estimated plain write CPU time, at most 10 s, or `timeBudgetMs`; the plain, dictionary and (where allowed) v2
 * trials always run. The candidates come in the order of what they usually gain per millisecond:
 * dictionaries bounded tighter (`SMALL_DICTIONARY_LIMIT`) or none at all, Parquet v2 (only when the
 * caller allows it; its encodings wrote no slower than v1's where measured), sort orders, zstd levels. Sorting can make files larger as
 * well as smaller (it breaks the arrival order that encodings may already exploit), so sorted
 * candidates compete like the others; without cluster columns, sort keys are the sample's
 * low-cardinality columns, fewest distinct values first. Cluster columns (asked for, or the recipe's)
 * are applied: one trial sorted by them, and the choice is made among trials sorted that way, unless
 * that sort measures over the allowance; the reason then starts by saying so (`clusterNotApplied`).
 * A layout the job names (linear or Z-order, layout.ts) is applied like cluster columns but never
 * refused: trials choose the encoding and level among writes in that layout, and the reason says
 * when it measured over the allowance.
 *
 * The row-group size is not a trial (a sample holds about one row group): it is the bin's rows spread
 * over the engine's threads, so every thread writes one large row group in parallel, capped so that a
 * row group stays near `ROW_GROUP_MAX_BYTES` of uncompressed data (the writer buffers one per thread).
 * Its dictionaries stay bounded as in plain's row groups (`PLAIN_DICTIONARY_LIMIT`) unless a trial
 * chose a tighter bound: a bound that grew with the row group cost time and rarely bytes.
 *
 * @example
 * const settings = await tuneSettings(engine, { inputs, columns, scratchDir, clusterColumns: ["event_time"] });
 * // settings.reason: "zstd level 3, 557056-row groups, plain encoding, parquet v1: 34% smaller than …"
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CrunchSettings, CrunchTunedWith, Layout } from "@lakesmith/shared/jobs";
import { checksumAggregates, readAsColumns, type TableColumn } from "./checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "./duckdb.ts";
import { describeSort, type SortSettings, sameSort, sortedSelect, sortSettingsOf } from "./layout.ts";
import { type CrunchWriteSettings, parquetOptions, withInsertionOrder } from "./rewrite.ts";
import { estimateRowBytes } from "./row-bytes.ts";

export interface TuneOptions {
  inputs: readonly string[];
  columns: readonly TableColumn[];
  /** Where trial files go (removed again). */
  scratchDir: string;
  /** The table's cluster columns: candidate sort keys. */
  clusterColumns?: readonly string[];
  /**
   * The layout the job asked for (linear or Z-order): applied whatever its measured cost, in place
   * of the cluster columns; the trials then choose only the encoding and level among writes in it.
   */
  layout?: Layout;
  /** Low-cardinality columns (profile.ts `pickEnumeratedColumns`): tried as a leading sort key. */
  enumeratedColumns?: readonly string[];
  /** Whether every reader of the table accepts Parquet v2 pages. */
  allowParquetV2?: boolean;
  /**
   * Input bytes of every bin this crunch will write with the chosen settings (they are measured on
   * the first bin and kept for the rest); default: this bin's.
   */
  crunchBytes?: number;
  /** The share of the crunch's write time tuning may spend (default `TUNE_SHARE`). */
  tuneShare?: number;
  /** Rows in the sample; setting it always runs the trials. */
  sampleRows?: number;
  sampleFiles?: number;
  /** The time box; default `TUNE_SHARE` of the bin's estimated plain write time, at most 10 s. */
  timeBudgetMs?: number;
  /** Overrides the allowance derived from the target: a candidate may take this many times plain. */
  maxSlowdown?: number;
}

/** DuckDB's default row-group size: the plain rewrite's setting. */
export const DEFAULT_ROW_GROUP_SIZE = 122_880;
/** The largest row group written. */
export const MAX_ROW_GROUP_SIZE = 1_048_576;
/**
 * Uncompressed bytes one row group may hold: the writer buffers a whole row group per thread, and
 * encodes it into pages beside that buffer. At 96 MB a 8M-row bin's rewrite peaked 285 MB above the
 * process's resting memory, at 24 MB 84 MB, for the same CPU time and files 0.5% larger.
 */
export const ROW_GROUP_MAX_BYTES = 24 * 2 ** 20;
/** The share of DuckDB's memory limit the writer's row groups (one per thread) may take together. */
export const ROW_GROUP_MEMORY_SHARE = 0.125;
/** Crunch throughput must stay at least this fraction of a plain zstd rewrite's (issue 5). */
export const TARGET_THROUGHPUT = 0.8;
/** The share of the bin's plain write time that tuning may spend. */
export const TUNE_SHARE = 0.15;
/**
 * A sorted write holds at most this share of DuckDB's memory limit in rows (`sortChunkRows`): a bin
 * larger than that is sorted in chunks, one sort each (crunch/rewrite.ts), so that a sort rarely spills. (The
 * sort itself runs under a lowered limit, rewrite.ts `SORT_MEMORY_SHARE`.)
 */
export const SORT_CHUNK_SHARE = 0.25;

/** The most rows of `bytesPerRow` in memory that one sorted write takes (see `SORT_CHUNK_SHARE`). */
export function sortChunkRows(memoryLimitMb: number, bytesPerRow: number): number {
  return Math.max(2048, Math.floor((SORT_CHUNK_SHARE * memoryLimitMb * 2 ** 20) / Math.max(1, bytesPerRow)));
}
/** Headroom kept under the target for measurement noise. */
export const NOISE_MARGIN = 0.05;
/** Candidate trials run whatever the time box (the dictionary bounds; v2 comes on top where allowed). */
const ALWAYS_TRIALS = 2;
/** The fewest rows a sample holds (and all an untried crunch with a nested column loads, to size its row groups). */
const MIN_SAMPLE_ROWS = 32_768;

export interface Trial {
  settings: CrunchWriteSettings;
  bytes: number;
  /** CPU milliseconds the write took (`cpuMs`). */
  ms: number;
}

/** A short, stable description of write settings, as recorded in `trials`. */
export function describeSettings(s: CrunchWriteSettings): string {
  const level = s.compression_level === null ? "" : ` level ${s.compression_level}`;
  const plainEncoding =
    s.dictionary_encoding === false
      ? ", plain encoding"
      : s.dictionary_size_limit !== undefined
        ? `, dictionaries up to ${s.dictionary_size_limit}`
        : "";
  const sort =
    s.sort_columns.length === 0
      ? ""
      : s.sort_layout === "zorder"
        ? `, sorted by ${describeSort(s)}`
        : `, sorted by ${s.sort_columns.join(", ")}`;
  return `${s.compression}${level}, ${s.row_group_size}-row groups${plainEncoding}${sort}, parquet ${s.parquet_version}`;
}

/** DuckDB's dictionary bound at its default row-group size (a twentieth of it): the plain rewrite's. */
export const PLAIN_DICTIONARY_LIMIT = DEFAULT_ROW_GROUP_SIZE / 20;
/** A tighter dictionary bound, tried: columns of a few thousand values or more are written plainly. */
export const SMALL_DICTIONARY_LIMIT = 2048;

/** The plain rewrite's settings: the baseline every candidate is measured against. */
export const PLAIN_SETTINGS: CrunchWriteSettings = {
  compression: "zstd",
  compression_level: 3,
  row_group_size: DEFAULT_ROW_GROUP_SIZE,
  sort_columns: [],
  parquet_version: "v1",
  dictionary_size_limit: PLAIN_DICTIONARY_LIMIT,
};

/**
 * Rows per row group for a bin of `binRows` rows of `bytesPerRow` uncompressed bytes written by
 * `threads` threads: one row group per thread, a multiple of 2,048 rows, no smaller than DuckDB's
 * default and no larger than `MAX_ROW_GROUP_SIZE` rows, `ROW_GROUP_MAX_BYTES`, or (all threads'
 * together) `ROW_GROUP_MEMORY_SHARE` of the memory limit.
 */
export function rowGroupSize(
  binRows: number,
  bytesPerRow: number,
  threads: number,
  /** DuckDB's memory limit: the row groups of all threads stay within `ROW_GROUP_MEMORY_SHARE` of it. */
  memoryLimitMb = Number.POSITIVE_INFINITY,
): number {
  const round = (n: number) => Math.ceil(n / 2048) * 2048;
  const perThread = round(binRows / Math.max(1, threads));
  const maxBytes = Math.min(
    ROW_GROUP_MAX_BYTES,
    (ROW_GROUP_MEMORY_SHARE * memoryLimitMb * 2 ** 20) / Math.max(1, threads),
  );
  const byBytes = Math.floor(maxBytes / Math.max(1, bytesPerRow) / 2048) * 2048;
  return Math.max(DEFAULT_ROW_GROUP_SIZE, Math.min(perThread, MAX_ROW_GROUP_SIZE, byBytes));
}

/**
 * Sort keys worth trying, best guess first: the cluster columns, then the sample's low-cardinality
 * columns (fewest distinct values first, so runs nest) ending in the cluster columns. Columns with
 * nearly one value per row are left out of the low-cardinality key: they would end every run.
 */
export function sortCandidates(options: {
  clusterColumns: readonly string[];
  enumeratedColumns: readonly string[];
  distinct: readonly { name: string; distinct: number }[];
  sampleRows: number;
}): string[][] {
  const out: string[][] = [];
  const add = (key: string[]) => {
    if (key.length > 0 && !out.some((k) => k.join("\0") === key.join("\0"))) out.push(key);
  };
  add([...options.clusterColumns]);
  const lowCardinality = options.distinct
    .filter((d) => d.distinct > 1 && d.distinct <= options.sampleRows / 16)
    .filter((d) => !options.clusterColumns.includes(d.name))
    .sort((a, b) => a.distinct - b.distinct)
    .map((d) => d.name);
  const leading = [...new Set([...options.enumeratedColumns, ...lowCardinality])].filter(
    (c) => !options.clusterColumns.includes(c),
  );
  add([...leading.slice(0, 3), ...options.clusterColumns]);
  add([...leading.slice(0, 2), ...options.clusterColumns]);
  return out;
}

/**
 * The winner among `trials` (plain first): the smallest output whose write took at most `allowance`
 * times the plain one's; plain when none qualifies. Between outputs of the same size, the tighter
 * dictionary bound wins (both using dictionaries): the sample holds a fraction of a row group's rows,
 * so it sees fewer of a column's distinct values than the rewrite will. A column the sample finds
 * under both bounds can pass the looser one in a full row group, where its dictionary is built and
 * then dropped. Measured at full size on both benchmark tables, the tighter bound wrote smaller files
 * about 10% faster where the sample could not tell the two apart. A tie is not judged by time.
 */
export function pickTrial(trials: readonly Trial[], allowance: number): Trial {
  const plain = trials[0];
  if (!plain) throw new Error("pickTrial needs at least the plain trial");
  return trials.reduce((best, t) => {
    // The same bytes mean the sample was written with the same encodings: their times differ by
    // noise alone, so a tie is not judged by time.
    if (t.bytes === best.bytes)
      return dictionaryBound(t.settings) < dictionaryBound(best.settings) ? t : best;
    return t.bytes < best.bytes && t.ms <= plain.ms * allowance ? t : best;
  }, plain);
}

/** A dictionary bound to compare: plain encoding (no dictionaries) never wins a tie by it. */
function dictionaryBound(settings: CrunchWriteSettings): number {
  if (settings.dictionary_encoding === false) return Number.POSITIVE_INFINITY;
  return settings.dictionary_size_limit ?? Math.floor(settings.row_group_size / 20);
}

/**
 * The write allowance (times plain) that keeps a crunch at `TARGET_THROUGHPUT`: out of `1 / target`
 * times the plain write, tuning takes `TUNE_SHARE`, validation `validationRatio` (its scans' time over
 * the plain write's) and the noise margin; the rest is the write's, but never less than 1 (see the
 * module comment).
 */
export function writeAllowance(validationRatio: number): number {
  return Math.max(1, 1 / TARGET_THROUGHPUT - TUNE_SHARE - NOISE_MARGIN - validationRatio);
}

/** Measures candidates on a sample of the bin and returns the chosen settings with the trials. */
export async function tuneSettings(
  engine: Engine,
  options: TuneOptions,
): Promise<CrunchSettings & CrunchWriteSettings> {
  const started = performance.now();
  const cpuStarted = cpuMs();
  await mkdir(options.scratchDir, { recursive: true });
  const plan = await planSample(engine, options);
  // Trials are worth their cost only where it fits tuning's share of the crunch's writes: at the
  // least, the sample is read once and written once per always-run trial, each pass about what
  // writing its files' bytes costs. A crunch too small for that gets the base settings untried.
  const passes = 2 + ALWAYS_TRIALS + (options.allowParquetV2 ? 1 : 0);
  const crunchBytes = options.crunchBytes ?? plan.binBytes;
  const share = options.tuneShare ?? TUNE_SHARE;
  const trialsFit = options.sampleRows !== undefined || passes * plan.bytes <= share * crunchBytes;
  const cost = { passes, share, sampleBytes: plan.bytes, crunchBytes, started };
  const layout = options.layout ?? null;
  const cluster = layout?.columns ?? options.clusterColumns ?? [];
  // The order sorted trials are written in: the job's layout, else the cluster columns in order.
  const clusterSort: SortSettings = layout ? sortSettingsOf(layout) : { sort_columns: [...cluster] };
  const clusterOf = (e: Engine) => ({ sort: clusterSort, memoryLimitMb: e.memoryLimitMb });
  if (!trialsFit) {
    // Sizing row groups needs only the bytes a row takes: estimated from the column types where
    // they are flat, measured on the fewest sample rows where a column is nested.
    const estimated = await estimateRowBytes(engine, plan.files.slice(0, 1), options.columns);
    if (estimated !== null) {
      const sizing = { binRows: plan.binRows, bytesPerRow: estimated, threads: await engine.threads() };
      return untried(sizing, cost, "estimated from the column types and string lengths", clusterOf(engine));
    }
  }
  const sample = await loadSample(
    engine,
    options,
    plan,
    trialsFit ? plan.cap : Math.min(plan.cap, MIN_SAMPLE_ROWS),
  );
  try {
    if (!trialsFit) return untried(sample, cost, `measured on ${sample.rows} rows`, clusterOf(engine));
    const dir = options.scratchDir;
    // The plain rewrite keeps DuckDB's default of preserving insertion order; so does its trial.
    const trials: Trial[] = [await trialWrite(engine, PLAIN_SETTINGS, join(dir, "tune-plain.parquet"), true)];
    const plain = trials[0] as Trial;
    // Validation reads the inputs once and the outputs once, each with the checksum aggregates.
    const t0 = cpuMs();
    await engine.query(`select ${checksumAggregates(options.columns)} from crunch_tune_sample`);
    const validationRatio = (2 * (cpuMs() - t0)) / Math.max(1, plain.ms);
    const allowance = options.maxSlowdown ?? writeAllowance(validationRatio);
    const estimatedPlainMs = plain.ms * (sample.binRows / Math.max(1, sample.rows));
    const budget = options.timeBudgetMs ?? Math.min(10_000, share * estimatedPlainMs);
    // The time box is CPU time too: tuning's share of the CPU the bin's plain write would take.
    const withinBudget = () => cpuMs() - cpuStarted <= budget;
    const best = () => pickTrial(trials, allowance);
    /** One trial; its time is scaled by `scale` (sorts, see below) before it is judged. */
    const run = async (settings: CrunchWriteSettings, scale = 1) => {
      const write = async () => {
        const trial = await trialWrite(engine, settings, join(dir, `tune-${trials.length}.parquet`));
        return { ...trial, ms: trial.ms * scale };
      };
      const trial = await write();
      // A smaller output that measured too slow is measured once more and the faster time counts:
      // one stall from other work on the machine must not decide the table's settings.
      if (trial.bytes < best().bytes && trial.ms > plain.ms * allowance)
        trial.ms = Math.min(trial.ms, (await write()).ms);
      trials.push(trial);
      return trial;
    };

    const rowGroups = rowGroupSize(sample.binRows, sample.bytesPerRow, sample.threads, engine.memoryLimitMb);
    // Large row groups keep plain's dictionary bound: DuckDB's default grows with the row group, and
    // a bound of 30,000 entries made a 626,688-row group's write about 1.5x slower, building and then
    // dropping dictionaries of high-cardinality columns. The sample holds one row group, so this
    // base writes it exactly as the plain trial did: that trial stands for it.
    const base: CrunchWriteSettings = { ...PLAIN_SETTINGS, row_group_size: rowGroups };
    // Always measured: the encoding is what most often decides a table's size (a tighter dictionary
    // bound, or none), and v2 pages where the table's readers accept them (a choice made for the
    // table, worth one trial whatever the budget).
    await run({ ...base, dictionary_size_limit: SMALL_DICTIONARY_LIMIT });
    await run({ ...base, dictionary_encoding: false, dictionary_size_limit: 0 });
    if (options.allowParquetV2) await run({ ...encodingOf(best().settings, base), parquet_version: "v2" });
    const encoded = encodingOf(best().settings, base);
    // A sort costs more per row than the sample's (n log n): sorted trial times are scaled by
    // log(rows sorted at once) / log(sample rows). A bin larger than memory allows is sorted in
    // chunks (`sortChunkRows`).
    const sortRows = Math.min(sample.binRows, sortChunkRows(engine.memoryLimitMb, sample.bytesPerRow));
    const sortScale = Math.log(Math.max(2, sortRows)) / Math.log(Math.max(2, sample.rows));
    // Cluster columns (asked for, or the recipe's) are applied unless measured too costly: one trial
    // sorted by them, and the choice is then made among trials sorted that way. Without them, sort
    // keys of the sample's low-cardinality columns compete like any candidate.
    let clusterRefusal: string | null = null;
    let layoutCost: string | null = null;
    let clustered: Trial | null = null;
    if (cluster.length > 0) {
      // Whether every bin is sorted is the costliest choice the tuner makes (sorting wrote the full
      // bins of the benchmark at 2.5x plain's CPU): the sort is timed twice, and the mean decides,
      // so that neither one lucky nor one unlucky measurement does.
      const sorted: CrunchWriteSettings = { ...encoded, ...clusterSort };
      const first = await trialWrite(engine, sorted, join(dir, `tune-${trials.length}.parquet`));
      const second = await trialWrite(engine, sorted, join(dir, `tune-${trials.length}.parquet`));
      const trial: Trial = { ...first, ms: ((first.ms + second.ms) / 2) * sortScale };
      trials.push(trial);
      const over =
        trial.ms <= plain.ms * allowance
          ? null
          : `sorting measured ${(trial.ms / Math.max(1, plain.ms)).toFixed(2)}x plain's write CPU time on the sample ` +
            `(the mean of two trials, scaled to the rows sorted at once), over the allowance of ${allowance.toFixed(2)}x`;
      // A layout the job names is its choice to make: applied, and the reason says what it costs.
      if (!over || layout) clustered = trial;
      if (over && layout)
        layoutCost = `layout ${describeSort(clusterSort)} applied as asked although ${over}`;
      else clusterRefusal = over;
    }
    // The distinct counts that pick sort keys are taken only when a sort can still be tried.
    const keys =
      cluster.length === 0 && withinBudget()
        ? sortCandidates({
            clusterColumns: [],
            enumeratedColumns: options.enumeratedColumns ?? [],
            distinct: await sampleDistinct(engine, options.columns),
            sampleRows: sample.rows,
          })
        : [];
    for (const key of keys) {
      if (!withinBudget()) break;
      await run({ ...encoded, sort_columns: key }, sortScale);
    }
    // Once clustered, the choice is among trials sorted by the cluster columns.
    const choose = (): Trial => {
      if (!clustered) return best();
      const first = clustered;
      return trials
        .filter((t) => sameSort(t.settings, clusterSort))
        .reduce((b, t) => (t.bytes < b.bytes && t.ms <= plain.ms * allowance ? t : b), first);
    };
    for (const level of [1, 9]) {
      if (!withinBudget()) break;
      await run(
        { ...choose().settings, row_group_size: rowGroups, compression_level: level },
        clustered ? sortScale : 1,
      );
    }

    const winner = choose();
    const chosen: CrunchWriteSettings = { ...winner.settings, row_group_size: rowGroups };
    const saved = plain.bytes > 0 ? Math.round(100 * (1 - winner.bytes / plain.bytes)) : 0;
    const measured =
      `on a ${sample.rows}-row sample (write allowance ${allowance.toFixed(2)}x plain: ` +
      `validation ${validationRatio.toFixed(2)}x, tuning ${TUNE_SHARE}x, target ${TARGET_THROUGHPUT}x plain throughput; ` +
      `${trials.length} trials in ${Math.round(performance.now() - started)} ms)`;
    const groups =
      `${rowGroups}-row groups: ~${sample.binRows} rows over ${sample.threads} threads, ` +
      `${Math.round(sample.bytesPerRow)} bytes a row in memory` +
      (clustered && sortRows < sample.binRows ? `; sorted in chunks of up to ${sortRows} rows` : "");
    const refused = clusterRefusal
      ? `${clusterNotApplied(cluster, clusterRefusal)}; `
      : layoutCost
        ? `${layoutCost}; `
        : "";
    return {
      ...chosen,
      tuned_with: tunedWith(options, sample.bytesPerRow),
      reason:
        refused +
        (winner === plain
          ? `${describeSettings(chosen)}: no candidate beat plain zstd within the allowance ${measured}; ${groups}`
          : `${describeSettings(chosen)}: ${saved >= 0 ? `${saved}% smaller` : `${-saved}% larger`} than plain zstd, write ${(winner.ms / Math.max(1, plain.ms)).toFixed(2)}x plain ${measured}; ${groups}`),
      trials: trials.map((t) => ({
        settings: describeSettings(t.settings),
        bytes: t.bytes,
        ms: Math.round(t.ms),
      })),
    };
  } finally {
    await engine.run("drop table if exists crunch_tune_sample");
  }
}

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

/** The words a crunch reports when its cluster columns were not applied, and why. */
export function clusterNotApplied(cluster: readonly string[], why: string): string {
  return `cluster columns ${cluster.join(", ")} not applied (files left unsorted): ${why}`;
}

/**
 * The base settings without trials, for a crunch too small to repay them: plain zstd, row groups
 * sized to the bin, dictionaries bounded as in plain's row groups. Not recorded as measured, so a
 * later crunch of the table tunes (or decides the same) rather than reusing them.
 */
function untried(
  sample: Pick<Sample, "binRows" | "bytesPerRow" | "threads">,
  cost: { passes: number; share: number; sampleBytes: number; crunchBytes: number; started: number },
  /** How the bytes a row takes were found. */
  how: string,
  /** The cluster columns' (or the job's layout's) order: applied untried (a small crunch's sort costs little). */
  cluster: { sort: SortSettings; memoryLimitMb: number },
): CrunchSettings & CrunchWriteSettings {
  const rowGroups = rowGroupSize(sample.binRows, sample.bytesPerRow, sample.threads, cluster.memoryLimitMb);
  const settings: CrunchWriteSettings = {
    ...PLAIN_SETTINGS,
    row_group_size: rowGroups,
    ...cluster.sort,
  };
  return {
    ...settings,
    reason:
      `${describeSettings(settings)}: not tried against other candidates, as this crunch's ${mb(cost.crunchBytes)} ` +
      `would not repay the trials (${cost.passes} passes over a ${mb(cost.sampleBytes)} sample, more than ` +
      `${cost.share} of the crunch's writes); ${rowGroups}-row groups: ~${sample.binRows} rows over ` +
      `${sample.threads} threads, ${Math.round(sample.bytesPerRow)} bytes a row in memory ` +
      `(${how}, in ${Math.round(performance.now() - cost.started)} ms)`,
    trials: [],
  };
}

/** `base` with the dictionary choice (none, or a bound) and page version of `settings`. */
function encodingOf(settings: CrunchWriteSettings, base: CrunchWriteSettings): CrunchWriteSettings {
  return {
    ...base,
    parquet_version: settings.parquet_version,
    dictionary_size_limit: settings.dictionary_size_limit,
    ...(settings.dictionary_encoding === false ? { dictionary_encoding: false } : {}),
  };
}

/** What a tuning measured for, recorded with its choice so a later crunch can tell whether it still holds. */
function tunedWith(
  options: Pick<
    TuneOptions,
    "columns" | "clusterColumns" | "layout" | "enumeratedColumns" | "allowParquetV2"
  >,
  bytesPerRow: number,
): CrunchTunedWith {
  return {
    columns: options.columns.map((c) => `${c.name} ${c.type}`).join(", "),
    cluster_columns: [...(options.clusterColumns ?? [])],
    ...(options.layout ? { layout: options.layout } : {}),
    enumerated_columns: [...(options.enumeratedColumns ?? [])],
    parquet_v2: options.allowParquetV2 ?? false,
    bytes_per_row: Math.round(bytesPerRow),
  };
}

/**
 * An earlier crunch's measured settings, for a crunch of the same table, or null where they must be
 * measured again: the table's columns, its cluster or enumerated columns, layout or v2 choice changed
 * since (a sort of a bin larger than memory allows is chunked, so the bin's size does not matter). The row-group
 * size is sized anew, to this bin's rows and the engine's threads, with the bytes per row measured
 * then. `earlier` must itself have been measured (not reused).
 */
export function reuseSettings(
  earlier: { settings: CrunchSettings; version: number },
  options: Pick<
    TuneOptions,
    "columns" | "clusterColumns" | "layout" | "enumeratedColumns" | "allowParquetV2"
  > & {
    /** The bin's rows (from the log's statistics). */
    binRows: number;
    threads: number;
    memoryLimitMb: number;
  },
): (CrunchSettings & CrunchWriteSettings) | null {
  const was = earlier.settings.tuned_with;
  if (!was || earlier.settings.reused_from_version !== undefined) return null;
  const now = tunedWith(options, was.bytes_per_row);
  const same = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  if (
    now.columns !== was.columns ||
    !same(now.cluster_columns, was.cluster_columns) ||
    JSON.stringify(now.layout ?? null) !== JSON.stringify(was.layout ?? null) ||
    !same(now.enumerated_columns, was.enumerated_columns) ||
    now.parquet_v2 !== was.parquet_v2
  )
    return null;
  const rowGroups = rowGroupSize(options.binRows, was.bytes_per_row, options.threads, options.memoryLimitMb);
  const settings = { ...earlier.settings, row_group_size: rowGroups };
  return {
    ...settings,
    reason:
      `${describeSettings(settings)}: as measured by the crunch committed at version ${earlier.version} ` +
      `for the same columns, cluster and enumerated columns, layout and v2 choice; ${rowGroups}-row groups: ` +
      `~${options.binRows} rows over ${options.threads} threads. Measured then: ${earlier.settings.reason}`,
    trials: [],
    reused_from_version: earlier.version,
  };
}

interface SamplePlan {
  /** The files to read, whole, and their bytes. */
  files: string[];
  bytes: number;
  /** The most rows to load. */
  cap: number;
  /** The bin's rows, estimated from the sampled files' rows per byte, and its bytes. */
  binRows: number;
  binBytes: number;
}

interface Sample {
  rows: number;
  binRows: number;
  bytesPerRow: number;
  threads: number;
}

/**
 * Whole files spread across the bin, up to the row cap (`sampleRows`, else a sixteenth of the bin
 * between 32,768 and 262,144 rows), from their footers alone.
 */
async function planSample(engine: Engine, options: TuneOptions): Promise<SamplePlan> {
  const sizes = await Promise.all(options.inputs.map(async (f) => (await stat(f)).size));
  const binBytes = sizes.reduce((a, b) => a + b, 0);
  const maxFiles = Math.max(1, Math.min(options.sampleFiles ?? 16, options.inputs.length));
  const step = options.inputs.length / maxFiles;
  const order = Array.from({ length: maxFiles }, (_, i) => Math.floor(i * step));
  const footers = await engine.query<{ file_name: string; rows: string }>(
    `select file_name, num_rows as rows from parquet_file_metadata(${sqlList(order.map((i) => options.inputs[i] as string))})`,
  );
  const rowsOf = new Map(footers.map((f) => [f.file_name, Number(f.rows)]));
  const firstRows = rowsOf.get(options.inputs[order[0] ?? 0] as string) ?? 0;
  const estimate = (firstRows / Math.max(1, sizes[order[0] ?? 0] ?? 1)) * binBytes;
  const cap = options.sampleRows ?? Math.min(262_144, Math.max(MIN_SAMPLE_ROWS, Math.ceil(estimate / 16)));
  const picked: number[] = [];
  let rows = 0;
  for (const i of order) {
    if (rows >= cap) break;
    picked.push(i);
    rows += rowsOf.get(options.inputs[i] as string) ?? 0;
  }
  const bytes = picked.reduce((n, i) => n + (sizes[i] ?? 0), 0);
  return {
    files: picked.map((i) => options.inputs[i] as string),
    bytes,
    cap,
    binRows: Math.round((rows / Math.max(1, bytes)) * binBytes),
    binBytes,
  };
}

/** Loads up to `cap` rows of the planned files into `crunch_tune_sample`, measuring their memory. */
async function loadSample(
  engine: Engine,
  options: TuneOptions,
  plan: SamplePlan,
  cap: number,
): Promise<Sample> {
  const select = await readAsColumns(engine, plan.files, options.columns);
  const memory = `(select sum(memory_usage_bytes) from duckdb_memory())`;
  const [before] = await engine.query<{ bytes: string }>(`select ${memory} as bytes`);
  await engine.run(`create or replace temp table crunch_tune_sample as ${select} limit ${cap}`);
  const [row = {}] = await engine.query<Record<string, string>>(
    `select count(*) as n, ${memory} as memory from crunch_tune_sample`,
  );
  const sampleRows = Number(row.n ?? 0);
  return {
    rows: sampleRows,
    binRows: Math.max(sampleRows, plan.binRows),
    bytesPerRow: Math.max(0, Number(row.memory ?? 0) - Number(before?.bytes ?? 0)) / Math.max(1, sampleRows),
    threads: await engine.threads(),
  };
}

/** Approximate distinct values of the sample's sortable columns: what sort keys are chosen from. */
async function sampleDistinct(
  engine: Engine,
  columns: readonly TableColumn[],
): Promise<{ name: string; distinct: number }[]> {
  const sortable = columns.filter((c) => !/^(STRUCT|MAP|UNION)\(|\]$/i.test(c.type.trim()));
  if (sortable.length === 0) return [];
  const [row = {}] = await engine.query<Record<string, string>>(
    `select ${sortable.map((c, i) => `approx_count_distinct(${sqlIdent(c.name)}) as d_${i}`).join(", ")} from crunch_tune_sample`,
  );
  return sortable.map((c, i) => ({ name: c.name, distinct: Number(row[`d_${i}`] ?? 0) }));
}

/**
 * CPU milliseconds this process has used, DuckDB's threads included: what trials are timed in. A
 * write's CPU time is what its cost is, where its wall time on a shared machine also counts the
 * other work that held the cores: a sample's wall times, taken under load, chose settings that wrote
 * the full bin no faster than plain. (Another job running in the same agent counts too; trials of
 * one tuning are close together, so it weighs on them alike.)
 */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Writes the sample with `settings` as the rewrite would (insertion order kept only for a sort). */
async function trialWrite(
  engine: Engine,
  settings: CrunchWriteSettings,
  path: string,
  preserveOrder = settings.sort_columns.length > 0,
): Promise<Trial> {
  const t0 = cpuMs();
  await withInsertionOrder(engine, preserveOrder, () =>
    engine.run(
      `copy (${sortedSelect("select * from crunch_tune_sample", settings)}) to ${sqlString(path)} (${parquetOptions(settings)})`,
    ),
  );
  const ms = cpuMs() - t0;
  const bytes = (await stat(path)).size;
  await rm(path, { force: true });
  return { settings, bytes, ms };
}
