/**
 * One crunch or optimize job, end to end, on a Delta table:
 *
 * 1. Load the snapshot; refuse a table the agent can't rewrite safely (the job fails for good with
 *    the reason). A retried job whose earlier attempt already committed answers with that commit.
 * 2. Decide the pass: a crunch on a table another writer committed to within the mutation interval
 *    runs as the lighter optimize pass (no re-sort, no tuning), and says why.
 * 3. Plan bins per partition (`plan.ts`); choose rewrite settings from a sample of the first bin
 *    (`engine/tune.ts`): the choice and the trials behind it go into the result. A crunch whose
 *    table's log, since its last checkpoint, holds an earlier crunch's measured choice reuses it
 *    while it was measured for the same columns, cluster and enumerated columns and v2 choice
 *    (`reuseSettings`), so tuning is paid about once per checkpoint interval, not every run.
 * 4. Per bin: get local copies (a `file://` table is read in place), rewrite with DuckDB, validate
 *    (same schema, same rows, same order-insensitive checksum of every column) and upload the new
 *    files under fresh names, the upload beside the next bin's rewrite. A mismatch fails the job
 *    before anything is committed. At most two bins are on local disk at a time (one rewriting, one
 *    uploading), so disk and memory are bounded by the bin, not the table. A sorted bin is written in
 *    chunks, one sorted file each, sized to the target file size and to the rows a sort may hold in
 *    memory (`sortChunks`).
 * 5. Commit once: `remove` (dataChange false) of every input and `add` of every output, with the job
 *    id in commitInfo. A concurrent append is merged by the commit; if another writer removed one of
 *    our inputs, the bins that read it are dropped and the rest commit.
 *
 * The result's `notes` say what the figures cannot: that the date range selected no file (and which
 * range), or that the cluster columns were not applied (and why).
 *
 * Nothing is deleted: replaced files stay until vacuum. Files uploaded by an attempt that never
 * committed (a killed agent) are unreferenced, and vacuum's orphan pass reclaims them.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type {
  CrunchKind,
  CrunchPartition,
  CrunchPayload,
  CrunchResult,
  CrunchSettings,
} from "@lakesmith/shared/jobs";
import { CrunchResultSchema, DEFAULT_TARGET_FILE_SIZE_MB } from "@lakesmith/shared/jobs";
import {
  type AddFile,
  addFor,
  ConflictError,
  commit,
  dataFileLocation,
  duckdbColumns,
  findJobCommit,
  JOB_ID_FIELD,
  JOB_RESULT_FIELD,
  loadSnapshot,
  OWN_COMMIT_LOOKBACK,
  recordedJobResult,
  removeFor,
  type Snapshot,
  writeRefusal,
} from "../delta/index.ts";
import {
  checkSchema,
  checksumOf,
  clusterNotApplied,
  compareChecksums,
  type DeltaStats,
  Engine,
  estimateRowBytes,
  explainMismatch,
  type RewriteResult,
  readAsColumns,
  reuseSettings,
  rewriteFiles,
  sortChunkRows,
  sqlList,
  sumChecksums,
  tuneSettings,
  type WrittenFile,
} from "../engine/index.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import { flushFiles, localPaths, type ObjectStore } from "../store/index.ts";
import { balancedBins, type PartitionPlan, planCrunch, WRITTEN_BY_TAG } from "./plan.ts";

export interface CrunchOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  /** The most input bytes one bin holds (default 1 GiB). */
  maxBinBytes?: number;
  /** The share of the crunch's write time tuning may spend (default `TUNE_SHARE`, engine/tune.ts). */
  tuneShare?: number;
}

const MB = 1024 * 1024;
/**
 * Output bytes per input byte assumed for a crunch's first sorted bin, to size its chunks (later bins
 * use the ratio measured so far): zstd rewrites of small snappy files wrote 0.4-0.6 of their input.
 */
const FIRST_OUTPUT_RATIO = 0.5;
const DEFAULT_MAX_BIN_BYTES = 1024 * MB;

interface BinOutput {
  partition: string;
  removes: PlannedFile[];
  adds: {
    path: string;
    size: number;
    rows: number;
    stats: DeltaStats;
    partitionValues: Record<string, string | null>;
  }[];
  rows: number;
}

export async function runCrunch(
  kind: CrunchKind,
  ctx: JobContext<CrunchPayload>,
  options: CrunchOptions,
): Promise<CrunchResult> {
  const started = Date.now();
  const phases = new Phases();
  const { payload, signal, log } = ctx;
  const store = options.store;
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    ctx.progress({ phase: "loading" });
    const snapshot = await phases.time("load", () =>
      loadSnapshot(store, engine, { scratchDir: join(ctx.scratchDir, "log") }),
    );
    const refusal = writeRefusal(snapshot);
    if (refusal) throw new JobError(`the table can't be crunched safely: ${refusal}`, { retryable: false });

    const earlier = await findJobCommit(store, snapshot, ctx.job.id, {
      sinceVersion: Math.max(0, snapshot.version - OWN_COMMIT_LOOKBACK),
    });
    if (earlier !== null) {
      log.info({ version: earlier }, "this job committed in an earlier attempt; reporting that commit");
      return earlierResult(store, snapshot, earlier);
    }

    const pass = choosePass(kind, snapshot, payload);
    const partitionColumns = snapshot.metadata.partitionColumns;
    const columns = duckdbColumns(snapshot.metadata.schema, partitionColumns);
    const names = new Set(columns.map((c) => c.name));
    const cluster =
      pass.kind === "crunch" ? (payload.cluster_columns ?? payload.recipe?.cluster_columns ?? []) : [];
    const unknown = cluster.filter((c) => !names.has(c));
    if (unknown.length)
      throw new JobError(
        `cluster column${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} not in the table's data columns`,
        {
          retryable: false,
        },
      );

    const targetBytes = (payload.target_file_size_mb ?? DEFAULT_TARGET_FILE_SIZE_MB) * MB;
    const dateColumn = payload.backfill_col ?? payload.recipe?.date_filter_column ?? null;
    // Files outside the table's root (a shallow clone's source) are someone else's: never touched.
    const ownFiles = snapshot.files.flatMap((file) => {
      const location = dataFileLocation(store, file);
      return "key" in location ? [{ ...file, key: location.key }] : [];
    });
    const plan = planCrunch(ownFiles, {
      mode: pass.kind,
      targetBytes,
      partitionColumns,
      dateColumn,
      ...(payload.date_range ? { dateRange: payload.date_range } : {}),
      maxBinBytes: options.maxBinBytes ?? DEFAULT_MAX_BIN_BYTES,
    });
    const notes = rangeNotes(payload, dateColumn, plan.selectedFiles, ownFiles.length);
    if (pass.kind === "optimize") {
      const asked = payload.cluster_columns ?? payload.recipe?.cluster_columns ?? [];
      if (asked.length > 0)
        notes.push(
          clusterNotApplied(
            asked,
            `the job ran as optimize (${pass.reason ?? "asked for"}), which never re-sorts`,
          ),
        );
    }
    const bins = plan.partitions.flatMap((p) => p.bins.map((bin) => ({ partition: p, bin })));
    const totalBytes = bins.reduce((n, b) => n + b.bin.reduce((m, f) => m + f.size, 0), 0);
    log.info(
      { pass: pass.kind, partitions: plan.partitions.length, bins: bins.length, bytes: totalBytes },
      "planned",
    );

    // What settings are measured for (or an earlier measurement must have been made for).
    const measure = {
      columns,
      clusterColumns: cluster,
      enumeratedColumns: (payload.recipe?.enumerated_columns ?? []).filter((c) =>
        columns.some((col) => col.name === c),
      ),
      allowParquetV2: payload.parquet_v2 ?? false,
    };
    let settings: CrunchSettings | null = null;
    const outputs: BinOutput[] = [];
    let doneBytes = 0;
    let bytesRead = 0;
    let bytesWritten = 0;
    // A bin's upload runs beside the next bin's rewrite (I/O beside DuckDB's CPU work), one at a
    // time, so at most two bins are on local disk. It settles to its error, never rejects: a failure
    // surfaces when the loop next waits for it, not as an unhandled rejection meanwhile.
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
        let rewritten: RewrittenBin;
        try {
          const inputs = await phases.time("download", () =>
            localPaths(
              store,
              bin.map((f) => f.key),
              join(binDir, "in"),
              signal,
            ),
          );
          const chosen: CrunchSettings =
            settings ??
            (pass.kind === "optimize"
              ? OPTIMIZE_SETTINGS
              : ((await reuseEarlier(engine, snapshot, bin, measure)) ??
                (await phases.time("tune", () =>
                  tuneSettings(engine, {
                    ...measure,
                    inputs,
                    scratchDir: join(binDir, "tune"),
                    crunchBytes: totalBytes,
                    ...(options.tuneShare !== undefined ? { tuneShare: options.tuneShare } : {}),
                  }),
                ))));
          if (!settings) {
            log.info({ settings: chosen }, "rewrite settings chosen");
            const note = clusterNote(cluster, chosen);
            if (note) notes.push(note);
          }
          settings = chosen;
          rewritten = await rewriteBin(engine, phases, {
            store,
            partition,
            bin,
            inputs,
            columns,
            settings: chosen,
            targetBytes,
            outputRatio: bytesRead > 0 ? Math.max(0.05, bytesWritten / bytesRead) : FIRST_OUTPUT_RATIO,
            binDir,
          });
          bytesRead += sum(bin.map((f) => f.size));
          bytesWritten += sum(rewritten.files.map((f) => f.bytes));
        } catch (err) {
          await rm(binDir, { recursive: true, force: true });
          throw err;
        }
        await uploaded();
        upload = (async () => {
          try {
            outputs.push(await phases.time("upload", () => uploadBin(store, rewritten, partitionColumns)));
          } finally {
            await rm(binDir, { recursive: true, force: true });
          }
        })().then(
          () => null,
          (err: Error) => err,
        );
        doneBytes += bin.reduce((n, f) => n + f.size, 0);
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

    const resultOf = (committed: number | null, kept: BinOutput[]): CrunchResult =>
      summarize({
        pass,
        snapshot,
        plan: plan.partitions,
        outputs: kept,
        settings,
        committed,
        started,
        phases,
        notes,
      });
    if (outputs.length === 0) return resultOf(null, []);

    signal.throwIfAborted();
    ctx.progress({ phase: "committing" });
    log.info({ bins: outputs.length, version: snapshot.version }, "committing");
    const done = await phases.time("commit", () =>
      commitOutputs(store, engine, snapshot, outputs, ctx, resultOf),
    );
    return { ...done, duration_ms: Date.now() - started, phases_ms: phases.toJSON() };
  } finally {
    engine.close();
  }
}

/**
 * The settings of this table's latest crunch that measured them, found among the commits the
 * snapshot read (those since the last checkpoint), as `reuseSettings` adapts them to `bin`; null
 * when there is none, it no longer holds, or the bin's row count is not in the log.
 */
async function reuseEarlier(
  engine: Engine,
  snapshot: Snapshot,
  bin: readonly PlannedFile[],
  measure: Omit<Parameters<typeof reuseSettings>[1], "binRows" | "threads" | "memoryLimitMb">,
): Promise<CrunchSettings | null> {
  const earlier = snapshot.commits
    .map((c) => ({ version: c.version, settings: measuredSettings(c.commitInfo) }))
    .findLast((c) => c.settings !== null);
  if (!earlier?.settings) return null;
  const rows = bin.map((f) => f.stats?.numRecords);
  if (rows.some((n) => n === undefined)) return null;
  return reuseSettings(
    { settings: earlier.settings, version: earlier.version },
    {
      ...measure,
      binRows: sum(rows as number[]),
      threads: await engine.threads(),
      memoryLimitMb: engine.memoryLimitMb,
    },
  );
}

/** The measured (not reused) settings a crunch recorded in its commit, or null. */
function measuredSettings(commitInfo: Record<string, unknown> | null): CrunchSettings | null {
  const parsed = CrunchResultSchema.safeParse(commitInfo?.[JOB_RESULT_FIELD]);
  if (!parsed.success || parsed.data.job_type !== "crunch") return null;
  const settings = parsed.data.settings;
  return settings?.tuned_with && settings.reused_from_version === undefined ? settings : null;
}

/** The pass to run: a crunch on a table written to within the mutation interval runs as optimize. */
function choosePass(
  kind: CrunchKind,
  snapshot: Snapshot,
  payload: CrunchPayload,
): { kind: CrunchKind; reason?: string } {
  const minutes = payload.mutation_interval_minutes;
  if (kind !== "crunch" || !minutes) return { kind };
  const last = lastForeignCommitAt(snapshot);
  if (last === null) return { kind };
  const ago = (Date.now() - last) / 60_000;
  if (ago >= minutes) return { kind };
  return {
    kind: "optimize",
    reason: `another writer committed ${ago.toFixed(1)} minutes ago, within the mutation interval of ${minutes} minutes`,
  };
}

/**
 * When another writer last committed: the newest commit read after the checkpoint that no Lakesmith
 * job made, else (every such commit is ours, or the checkpoint is the latest version) the snapshot's
 * own time when its latest commit is not ours.
 */
function lastForeignCommitAt(snapshot: Snapshot): number | null {
  const foreign = snapshot.commits.findLast((c) => !c.commitInfo?.[JOB_ID_FIELD]);
  if (foreign) return foreign.timestamp;
  return snapshot.commits.length === 0 ? snapshot.timestamp : null;
}

/** The result a job recorded in its earlier commit, so a retry reports what that attempt did. */
async function earlierResult(store: ObjectStore, snapshot: Snapshot, version: number): Promise<CrunchResult> {
  return {
    ...(await recordedJobResult(store, snapshot, version, CrunchResultSchema)),
    committed_version: version,
  };
}

type PlannedFile = AddFile & { key: string };

/** A validated bin: its rewritten files, still in the bin's scratch folder. */
interface RewrittenBin {
  partition: string;
  bin: PlannedFile[];
  files: WrittenFile[];
  outDir: string;
  rows: number;
}

/** One bin to rewrite, with what its rewrite needs. */
interface BinJob {
  store: ObjectStore;
  partition: PartitionPlan<PlannedFile>;
  bin: PlannedFile[];
  inputs: string[];
  columns: ReturnType<typeof duckdbColumns>;
  settings: CrunchSettings;
  targetBytes: number;
  /** Bytes written per byte read, so far in this crunch (`FIRST_OUTPUT_RATIO` before any). */
  outputRatio: number;
  binDir: string;
}

async function rewriteBin(engine: Engine, phases: Phases, job: BinJob): Promise<RewrittenBin> {
  const outDir = join(job.binDir, "out");
  // The inputs are read as the table's columns twice, for their checksum and by the rewrite.
  const source = await phases.time("validate", () => readAsColumns(engine, job.inputs, job.columns));
  const before = await phases.time("validate", () => checksumOf(engine, source, job.columns));
  const chunks =
    job.settings.sort_columns.length > 0
      ? await phases.time("rewrite", () => sortChunks(engine, job))
      : [job.inputs];
  const written = await phases.time("rewrite", async () => {
    const parts: RewriteResult[] = [];
    for (const chunk of chunks)
      parts.push(
        await rewriteFiles(engine, {
          ...(chunks.length === 1 ? { source } : {}),
          inputs: chunk,
          columns: job.columns,
          outDir,
          namePrefix: `part-${randomUUID()}`,
          settings: job.settings,
          targetFileBytes: job.targetBytes,
          // A local table takes the files by a rename (uploadBin): their flush to disk, which that
          // write must wait for, runs beside the output checksum instead.
          ...(job.store.localFile ? { onWritten: flushFiles } : {}),
        }),
      );
    return {
      files: parts.flatMap((p) => p.files),
      checksum: sumChecksums(
        job.columns,
        parts.map((p) => p.checksum),
      ),
    };
  });
  const outputs = written.files.map((f) => f.path);
  const problems = await phases.time("validate", async () => {
    const found = [
      ...compareChecksums(before, written.checksum),
      ...(await checkSchema(engine, outputs, job.columns)),
    ];
    // The row counts the log will state come from the writer: they must add up to what was read back.
    const stated = sum(written.files.map((f) => f.rows));
    if (stated !== written.checksum.rows)
      found.push(
        `the written files' statistics state ${stated} rows, the files hold ${written.checksum.rows}`,
      );
    // Two more scans, only after a mismatch, so the report names the columns that differ.
    if (found.length > 0) found.push(...(await explainMismatch(engine, job.inputs, outputs, job.columns)));
    return found;
  });
  if (problems.length > 0)
    throw new JobError(
      `validation failed for partition '${job.partition.partition || "(table)"}', nothing committed: ${[...new Set(problems)].join("; ")}`,
      { retryable: false },
    );
  return {
    partition: job.partition.partition,
    bin: job.bin,
    files: written.files,
    outDir,
    rows: before.rows,
  };
}

/**
 * The inputs of a sorted bin in chunks, each written as one sorted file (rewrite.ts: DuckDB keeps
 * a sort's order in one file only): chunks near the target file size at the output ratio seen so
 * far, and within the rows a sort may hold in memory (`sortChunkRows`), so that neither a file nor
 * the sort's memory grows with the bin.
 */
async function sortChunks(
  engine: Engine,
  job: Pick<BinJob, "bin" | "inputs" | "columns" | "settings" | "targetBytes" | "outputRatio">,
): Promise<string[][]> {
  const files = job.inputs.map((path, i) => ({ path, size: job.bin[i]?.size ?? 0 }));
  const bytes = sum(files.map((f) => f.size));
  const bytesPerRow =
    job.settings.tuned_with?.bytes_per_row ??
    (await estimateRowBytes(engine, job.inputs.slice(0, 1), job.columns));
  let maxBytes = job.targetBytes / job.outputRatio;
  if (bytesPerRow && bytes > 0) {
    const [row] = await engine.query<{ rows: string }>(
      `select sum(num_rows)::bigint as rows from parquet_file_metadata(${sqlList(job.inputs)})`,
    );
    const rowsPerByte = Number(row?.rows ?? 0) / bytes;
    if (rowsPerByte > 0)
      maxBytes = Math.min(maxBytes, sortChunkRows(engine.memoryLimitMb, bytesPerRow) / rowsPerByte);
  }
  return balancedBins(files, Math.max(1, maxBytes)).map((chunk) => chunk.map((f) => f.path));
}

/** Uploads a validated bin's files under fresh names in its partition's folder. */
async function uploadBin(
  store: ObjectStore,
  rewritten: RewrittenBin,
  partitionColumns: string[],
): Promise<BinOutput> {
  const partitionValues = rewritten.bin[0]?.partitionValues ?? {};
  const folder = partitionFolder(partitionValues, partitionColumns);
  const adds: BinOutput["adds"] = [];
  for (const file of rewritten.files) {
    const name = file.path.slice(rewritten.outDir.length + 1).replaceAll("/", "-");
    const key = `${folder}${name}`;
    // The scratch copy is not needed after: a `file://` table on the same file system takes it by a rename.
    await store.write(key, { file: file.path, move: true });
    adds.push({ path: key, size: file.bytes, rows: file.rows, stats: file.stats, partitionValues });
  }
  return { partition: rewritten.partition, removes: rewritten.bin, adds, rows: rewritten.rows };
}

/** Hive-style folder of a partition, escaped like Delta writers do (`date=2026-01-01/`). */
function partitionFolder(values: Record<string, string | null>, columns: readonly string[]): string {
  if (columns.length === 0) return "";
  return `${columns
    .map(
      (c) =>
        `${escapePartition(c)}=${values[c] === null || values[c] === undefined ? "__HIVE_DEFAULT_PARTITION__" : escapePartition(values[c])}`,
    )
    .join("/")}/`;
}

/** Characters Hive-style writers percent-escape in partition folder names (besides control characters). */
const ESCAPED = new Set(`"#%'*/:=?\\{[]^`);

function escapePartition(value: string): string {
  let out = "";
  for (const c of value) {
    const code = c.charCodeAt(0);
    out +=
      code < 0x20 || code === 0x7f || ESCAPED.has(c)
        ? `%${code.toString(16).toUpperCase().padStart(2, "0")}`
        : c;
  }
  return out;
}

async function commitOutputs(
  store: ObjectStore,
  engine: Engine,
  snapshot: Snapshot,
  outputs: BinOutput[],
  ctx: JobContext<CrunchPayload>,
  resultOf: (committed: number | null, kept: BinOutput[]) => CrunchResult,
): Promise<CrunchResult> {
  let base = snapshot;
  let kept = outputs;
  for (let attempt = 1; ; attempt++) {
    const provisional = resultOf(null, kept);
    try {
      const { version } = await commit(store, base, actionsOf(kept, provisional.settings), {
        jobId: ctx.job.id,
        operation: "OPTIMIZE",
        operationParameters: {
          pass: provisional.job_type,
          predicate: JSON.stringify(ctx.payload.date_range ?? null),
        },
        operationMetrics: {
          numRemovedFiles: String(provisional.files_before),
          numAddedFiles: String(provisional.files_after),
          numRemovedBytes: String(provisional.bytes_before),
          numAddedBytes: String(provisional.bytes_after),
        },
        commitInfo: { [JOB_RESULT_FIELD]: { ...provisional, committed_version: null } },
        engine,
        scratchDir: join(ctx.scratchDir, "commit"),
      });
      return { ...provisional, committed_version: version };
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= 3) throw err;
      // Another writer removed files we read (or changed the table): keep the bins it left alone.
      base = await loadSnapshot(store, engine, { scratchDir: join(ctx.scratchDir, `log-${attempt}`) });
      const active = new Set(base.files.map((f) => f.path));
      kept = kept.filter((o) => o.removes.every((f) => active.has(f.path)));
      ctx.log.warn(
        { err: err.message, bins_left: kept.length },
        "commit conflict; re-planned against the winner",
      );
      if (kept.length === 0) throw new JobError(`every bin conflicted with another writer: ${err.message}`);
    }
  }
}

function actionsOf(outputs: BinOutput[], settings: CrunchSettings | null) {
  const now = Date.now();
  const tags = settings ? { [WRITTEN_BY_TAG]: settingsTag(settings) } : null;
  return outputs.flatMap((o) => [
    ...o.removes.map((f) => ({ remove: removeFor(f, now) })),
    ...o.adds.map((a) => ({
      add: addFor({
        key: a.path,
        size: a.size,
        modificationTime: now,
        partitionValues: a.partitionValues,
        stats: a.stats,
        tags,
      }),
    })),
  ]);
}

/** The settings as the short tag files written with them carry (`zstd:3;rg=122880;sort=none;v1`). */
function settingsTag(s: CrunchSettings): string {
  return [
    `${s.compression}${s.compression_level === null ? "" : `:${s.compression_level}`}`,
    `rg=${s.row_group_size}`,
    `sort=${s.sort_columns.join(",") || "none"}`,
    ...(s.dictionary_encoding === false
      ? ["plain-encoding"]
      : s.dictionary_size_limit !== undefined
        ? [`dict=${s.dictionary_size_limit}`]
        : []),
    s.parquet_version,
  ].join(";");
}

function summarize(input: {
  pass: { kind: CrunchKind; reason?: string };
  snapshot: Snapshot;
  plan: PartitionPlan<PlannedFile>[];
  outputs: BinOutput[];
  settings: CrunchSettings | null;
  committed: number | null;
  started: number;
  phases: Phases;
  notes: string[];
}): CrunchResult {
  const byPartition = new Map<string, BinOutput[]>();
  for (const o of input.outputs) byPartition.set(o.partition, [...(byPartition.get(o.partition) ?? []), o]);
  const partitions: CrunchPartition[] = input.plan.map((p) => {
    const outs = byPartition.get(p.partition) ?? [];
    if (outs.length === 0)
      return {
        partition: p.partition,
        status: "skipped",
        reason: p.skipReason ?? "another writer changed its files during the crunch",
        files_before: p.files.length,
        files_after: p.files.length,
        bytes_before: sum(p.files.map((f) => f.size)),
        bytes_after: sum(p.files.map((f) => f.size)),
        rows: sum(p.files.map((f) => f.stats?.numRecords ?? 0)),
      };
    const removed = outs.flatMap((o) => o.removes);
    const added = outs.flatMap((o) => o.adds);
    const untouched = p.files.length - removed.length;
    const untouchedBytes = sum(p.files.map((f) => f.size)) - sum(removed.map((f) => f.size));
    return {
      partition: p.partition,
      status: "crunched",
      files_before: p.files.length,
      files_after: untouched + added.length,
      bytes_before: sum(p.files.map((f) => f.size)),
      bytes_after: untouchedBytes + sum(added.map((a) => a.size)),
      rows: sum(outs.map((o) => o.rows)),
    };
  });
  const removed = input.outputs.flatMap((o) => o.removes);
  const added = input.outputs.flatMap((o) => o.adds);
  const bytesBefore = sum(removed.map((f) => f.size));
  const bytesAfter = sum(added.map((a) => a.size));
  return {
    job_type: input.pass.kind,
    ...(input.pass.reason ? { job_type_reason: input.pass.reason } : {}),
    table_version_before: input.snapshot.version,
    committed_version: input.committed,
    files_before: removed.length,
    files_after: added.length,
    bytes_before: bytesBefore,
    bytes_after: bytesAfter,
    drr: bytesBefore > 0 ? Math.round(10_000 * (1 - bytesAfter / bytesBefore)) / 100 : 0,
    rows_in: sum(input.outputs.map((o) => o.rows)),
    rows_out: sum(added.map((a) => a.rows)),
    partitions,
    partitions_crunched: partitions.filter((p) => p.status === "crunched").length,
    partitions_skipped: partitions.filter((p) => p.status === "skipped").length,
    settings: input.settings,
    ...(input.notes.length > 0 ? { notes: input.notes } : {}),
    duration_ms: Date.now() - input.started,
    phases_ms: input.phases.toJSON(),
  };
}

/**
 * What the job's date range did, where a reader could not tell from the figures: it selected no file
 * (and which range, on which column), or the table has no date column to apply it to.
 */
function rangeNotes(
  payload: CrunchPayload,
  dateColumn: string | null,
  selected: number,
  files: number,
): string[] {
  const range = payload.date_range;
  if (!range) return [];
  const span = `${range.start} to ${range.end}`;
  if (!dateColumn)
    return [
      `the table has no date column (the recipe names none), so the range ${span} could not select files: every file was considered`,
    ];
  if (selected > 0) return [];
  return [
    `no file fell in the range ${span} (inclusive) of column ${dateColumn}: nothing to crunch among the table's ${files} files`,
  ];
}

/** Why the chosen settings do not sort by the cluster columns, when they don't; null when they do. */
function clusterNote(cluster: readonly string[], settings: CrunchSettings): string | null {
  if (cluster.length === 0) return null;
  const sorted = settings.sort_columns;
  if (sorted.length >= cluster.length && cluster.every((c, i) => sorted[i] === c)) return null;
  // The tuner states a refusal first in its reason; settings reused from an earlier crunch repeat it.
  const refusal = /cluster columns [^;]* not applied[^;]*/.exec(settings.reason)?.[0];
  return (
    refusal ??
    clusterNotApplied(
      cluster,
      `the settings chosen sort by ${sorted.join(", ") || "nothing"}: ${settings.reason}`,
    )
  );
}

/** The settings of an optimize pass: bin-packing with DuckDB's defaults and zstd, no sort, no trials. */
const OPTIMIZE_SETTINGS: CrunchSettings = {
  compression: "zstd",
  compression_level: null,
  row_group_size: 122_880,
  sort_columns: [],
  parquet_version: "v1",
  reason: "optimize pass: small files merged with zstd at default settings, without re-sorting or trials",
  trials: [],
};

/**
 * Milliseconds spent per phase, summed over bins. Uploads run beside the next bin's rewrite, so the
 * phases can add up to more than the job's duration.
 */
class Phases {
  private readonly ms: Record<string, number> = {};

  async time<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      this.ms[phase] = (this.ms[phase] ?? 0) + Math.round(performance.now() - t0);
    }
  }

  toJSON(): Record<string, number> {
    return { ...this.ms };
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
