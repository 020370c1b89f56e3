/**
 * One crunch or optimize job, end to end, on a table of any format (`formats/`), in its steps:
 *
 * 1. Load: the table's snapshot through its format; a table the agent can't rewrite safely fails
 *    the job for good with the reason. A retried job whose earlier attempt already committed
 *    answers with that commit's result.
 * 2. Plan (`plan.ts`): the pass (`pass.ts`: a busy table gets the optimize pass), then bins per
 *    partition of the files the date range (or a fanned-out job's one partition) selects; the
 *    settings (`settings.ts`) are measured on a sample of the first bin or reused from the table's
 *    latest measured crunch.
 * 3. Per bin: local copies (a `file://` table is read in place), the rewrite (`rewrite.ts`), the
 *    proof that it kept every row (`validate.ts`), and the upload under fresh names (`upload.ts`)
 *    beside the next bin's rewrite. At most two bins are on local disk at a time (one rewriting,
 *    one uploading), so disk and memory are bounded by the bin, not the table.
 * 4. Commit once (`commit.ts`), with the job id and result in the commit; a conflicting writer
 *    drops only the bins it touched.
 * 5. Metrics (`metrics.ts`): figures, DRR, settings (with the sort: linear or Z-order), notes (no
 *    file in the range; cluster columns or layout not applied, and why) and time per phase.
 *
 * Nothing is deleted: replaced files stay until vacuum. Files uploaded by an attempt that never
 * committed (a killed agent) are unreferenced, and vacuum's orphan pass reclaims them.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { CrunchKind, CrunchPayload, CrunchResult, CrunchSettings } from "@lakesmith/shared/jobs";
import { DEFAULT_TARGET_FILE_SIZE_MB } from "@lakesmith/shared/jobs";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { clusterNotApplied, Engine, tuneSettings } from "../engine/index.ts";
import { type FormatContext, type Table, tableFormat } from "../formats/index.ts";
import { sum } from "../numbers.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import { localPaths, type ObjectStore } from "../store/index.ts";
import { commitOutputs } from "./commit.ts";
import { type BinOutput, type Pass, Phases, rangeNotes, summarize } from "./metrics.ts";
import { choosePass } from "./pass.ts";
import { type CrunchPlan, partitionRefusal, planCrunch } from "./plan.ts";
import { FIRST_OUTPUT_RATIO, rewriteBin } from "./rewrite.ts";
import { clusterNote, layoutNotApplied, type Measure, OPTIMIZE_SETTINGS, reuseEarlier } from "./settings.ts";
import { uploadBin } from "./upload.ts";
import { refuseUndeclaredColumns, validateBin } from "./validate.ts";

export interface CrunchOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  /** The most input bytes one bin holds (default 1 GiB). */
  maxBinBytes?: number;
  /** The share of the crunch's write time tuning may spend (default `TUNE_SHARE`, engine/tune.ts). */
  tuneShare?: number;
  clock?: Clock;
}

const MB = 1024 * 1024;
const DEFAULT_MAX_BIN_BYTES = 1024 * MB;

export async function runCrunch(
  kind: CrunchKind,
  ctx: JobContext<CrunchPayload>,
  options: CrunchOptions,
): Promise<CrunchResult> {
  const clock = options.clock ?? systemClock;
  const started = clock.now().getTime();
  const phases = new Phases();
  const { payload, log } = ctx;
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    const format = tableFormat(payload.format);
    const formatContext = (folder: string): FormatContext => ({
      store: options.store,
      catalog: payload.catalog,
      engine,
      scratchDir: join(ctx.scratchDir, folder),
      clock,
      log,
    });

    // 1. Load.
    ctx.progress({ phase: "loading" });
    const table = await phases.time("load", () => format.load(formatContext("table")));
    const refusal = table.writeRefusal();
    if (refusal) throw new JobError(`the table can't be crunched safely: ${refusal}`, { retryable: false });
    const earlier = await table.earlierResult(ctx.job.id);
    if (earlier) {
      log.info(
        { version: earlier.committed_version },
        "this job committed in an earlier attempt; reporting that commit",
      );
      return earlier;
    }

    // 2. Plan.
    const pass = choosePass(kind, table, payload, clock);
    const cluster = clusterColumns(pass, table, payload);
    const layout = pass.kind === "crunch" ? payload.layout : undefined;
    const targetBytes = (payload.target_file_size_mb ?? DEFAULT_TARGET_FILE_SIZE_MB) * MB;
    const dateColumn = payload.backfill_col ?? payload.recipe?.date_filter_column ?? null;
    const partitionProblem = payload.partition && partitionRefusal(payload.partition, table.partitionColumns);
    if (partitionProblem) throw new JobError(partitionProblem, { retryable: false });
    const plan = planCrunch(table.files, {
      mode: pass.kind,
      targetBytes,
      partitionColumns: table.partitionColumns,
      dateColumn,
      ...(payload.date_range ? { dateRange: payload.date_range } : {}),
      ...(payload.partition ? { partition: payload.partition } : {}),
      maxBinBytes: options.maxBinBytes ?? DEFAULT_MAX_BIN_BYTES,
    });
    const notes = rangeNotes(payload, dateColumn, plan.selectedFiles, table.files.length);
    if (pass.kind === "optimize") {
      const why = `the job ran as optimize (${pass.reason ?? "asked for"}), which never re-sorts`;
      const asked = payload.cluster_columns ?? payload.recipe?.cluster_columns ?? [];
      if (payload.layout) notes.push(layoutNotApplied(payload.layout, why));
      else if (asked.length > 0) notes.push(clusterNotApplied(asked, why));
    }

    // 3. Rewrite, validate and upload, bin by bin.
    const { outputs, settings } = await rewriteBins({
      ctx,
      options,
      engine,
      phases,
      table,
      plan,
      pass,
      targetBytes,
      notes,
      measure: {
        columns: table.columns,
        clusterColumns: layout ? [] : cluster,
        ...(layout ? { layout } : {}),
        enumeratedColumns: (payload.recipe?.enumerated_columns ?? []).filter((c) =>
          table.columns.some((col) => col.name === c),
        ),
        allowParquetV2: payload.parquet_v2 ?? false,
      },
    });

    // 5. Metrics (the commit records them, so a retry can report them).
    const resultOf = (committed: number | null, kept: readonly BinOutput[]): CrunchResult =>
      summarize({
        pass,
        versionBefore: table.version,
        plan: plan.partitions,
        outputs: kept,
        settings,
        committed,
        notes,
        durationMs: clock.now().getTime() - started,
        phases,
      });
    if (outputs.length === 0) return resultOf(null, []);

    // 4. Commit.
    ctx.signal.throwIfAborted();
    ctx.progress({ phase: "committing" });
    log.info({ bins: outputs.length, version: table.version }, "committing");
    const done = await phases.time("commit", () =>
      commitOutputs({
        table,
        outputs,
        jobId: ctx.job.id,
        predicate: JSON.stringify(payload.partition ?? payload.date_range ?? null),
        resultOf,
        reload: (attempt) => format.load(formatContext(`table-${attempt}`)),
        log,
      }),
    );
    return { ...done, duration_ms: clock.now().getTime() - started, phases_ms: phases.toJSON() };
  } finally {
    engine.close();
  }
}

/**
 * The columns the pass sorts by: the job's layout's, else its cluster columns, else the recipe's;
 * none for optimize. A name the table lacks fails the job for good, naming it.
 */
function clusterColumns(pass: Pass, table: Table, payload: CrunchPayload): string[] {
  if (pass.kind !== "crunch") return [];
  const cluster = payload.layout?.columns ?? payload.cluster_columns ?? payload.recipe?.cluster_columns ?? [];
  const names = new Set(table.columns.map((c) => c.name));
  const unknown = cluster.filter((c) => !names.has(c));
  const what = payload.layout ? `${payload.layout.type} layout column` : "cluster column";
  if (unknown.length)
    throw new JobError(
      `${what}${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} not in the table's data columns`,
      { retryable: false },
    );
  return cluster;
}

interface BinsJob {
  ctx: JobContext<CrunchPayload>;
  options: CrunchOptions;
  engine: Engine;
  phases: Phases;
  table: Table;
  plan: CrunchPlan<Table["files"][number]>;
  pass: Pass;
  targetBytes: number;
  /** Notes of the job so far; the settings' note on the cluster columns is added. */
  notes: string[];
  measure: Measure;
}

/**
 * Every bin rewritten, validated and uploaded, in plan order. A bin's upload runs beside the next
 * bin's rewrite (I/O beside DuckDB's CPU work), one at a time, so at most two bins are on local disk.
 */
async function rewriteBins(job: BinsJob): Promise<{ outputs: BinOutput[]; settings: CrunchSettings | null }> {
  const { ctx, engine, phases, table, pass, notes } = job;
  const { signal, log } = ctx;
  const store = job.options.store;
  const bins = job.plan.partitions.flatMap((p) => p.bins.map((bin) => ({ partition: p.partition, bin })));
  const totalBytes = sum(bins.map((b) => sum(b.bin.map((f) => f.size))));
  log.info(
    { pass: pass.kind, partitions: job.plan.partitions.length, bins: bins.length, bytes: totalBytes },
    "planned",
  );
  let settings: CrunchSettings | null = null;
  const outputs: BinOutput[] = [];
  let doneBytes = 0;
  let bytesRead = 0;
  let bytesWritten = 0;
  // The upload in flight settles to its error, never rejects: a failure surfaces when the loop next
  // waits for it, not as an unhandled rejection meanwhile.
  let upload: Promise<Error | null> = Promise.resolve(null);
  const uploaded = async () => {
    const err = await upload;
    upload = Promise.resolve(null);
    if (err) throw err;
  };
  try {
    for (const [index, { partition, bin }] of bins.entries()) {
      signal.throwIfAborted();
      const binDir = join(ctx.scratchDir, `bin-${index}`);
      await mkdir(binDir, { recursive: true });
      const binBytes = sum(bin.map((f) => f.size));
      const columns = table.columnsFor(bin[0]?.partitionValues ?? {});
      let rewritten: Awaited<ReturnType<typeof rewriteBin>>;
      let rows: number;
      try {
        const inputs = await phases.time("download", () =>
          localPaths(
            store,
            bin.map((f) => f.key),
            join(binDir, "in"),
            signal,
          ),
        );
        if (table.readsDeclaredColumnsOnly)
          await refuseUndeclaredColumns(engine, { partition, inputs }, [
            ...columns.map((c) => c.name),
            ...table.partitionColumns,
          ]);
        if (!settings) {
          settings = await chooseSettings(
            { ...job, measure: { ...job.measure, columns } },
            bin,
            inputs,
            join(binDir, "tune"),
            totalBytes,
          );
          log.info({ settings }, "rewrite settings chosen");
          const note = clusterNote(job.measure.clusterColumns ?? [], settings);
          if (note) notes.push(note);
        }
        rewritten = await rewriteBin(engine, phases, {
          store,
          bin,
          inputs,
          columns,
          settings,
          fieldIds: table.parquetFieldIds,
          targetBytes: job.targetBytes,
          outputRatio: bytesRead > 0 ? Math.max(0.05, bytesWritten / bytesRead) : FIRST_OUTPUT_RATIO,
          binDir,
        });
        await validateBin(engine, phases, { partition, inputs, columns }, rewritten);
        rows = rewritten.before.rows;
        bytesRead += binBytes;
        bytesWritten += sum(rewritten.files.map((f) => f.bytes));
      } catch (err) {
        await rm(binDir, { recursive: true, force: true });
        throw err;
      }
      await uploaded();
      const done = rewritten;
      upload = (async () => {
        try {
          outputs.push(
            await phases.time("upload", () => uploadBin(store, { partition, files: bin, rows }, done, table)),
          );
        } finally {
          await rm(binDir, { recursive: true, force: true });
        }
      })().then(
        () => null,
        (err: Error) => err,
      );
      doneBytes += binBytes;
      ctx.progress({
        phase: "rewriting",
        bins_done: index + 1,
        bins_total: bins.length,
        bytes_done: doneBytes,
        bytes_total: totalBytes,
        fraction: totalBytes ? doneBytes / totalBytes : 1,
      });
    }
    await uploaded();
  } finally {
    await upload;
  }
  return { outputs, settings };
}

/** The first bin's settings: fixed for optimize, else reused from an earlier crunch, else measured. */
async function chooseSettings(
  job: BinsJob,
  bin: readonly Table["files"][number][],
  inputs: string[],
  scratchDir: string,
  crunchBytes: number,
): Promise<CrunchSettings> {
  if (job.pass.kind === "optimize") return OPTIMIZE_SETTINGS;
  const reused = await reuseEarlier(job.engine, job.table, bin, job.measure);
  if (reused) return reused;
  const { tuneShare } = job.options;
  return job.phases.time("tune", () =>
    tuneSettings(job.engine, {
      ...job.measure,
      inputs,
      scratchDir,
      crunchBytes,
      ...(tuneShare !== undefined ? { tuneShare } : {}),
    }),
  );
}
