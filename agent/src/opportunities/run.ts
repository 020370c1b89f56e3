/**
 * One `opportunity_scan` job: what a crunch of the table would gain, measured, in its steps:
 *
 * 1. Load the table's snapshot through its format (Delta, Iceberg, Hive; through its catalog where
 *    the payload names one). Nothing is ever written to the table or its catalog.
 * 2. Plan as a crunch of the whole table would (`crunch/plan.ts`): its candidates are what a sample
 *    is drawn from (`sample.ts`: deterministic, at most `sample_max_files` / `sample_max_bytes`).
 * 3. Rewrite the sample in scratch with the crunch's settings and rewrite (`measure.ts`), and check
 *    each sampled file's row order against the cluster columns.
 * 4. Report (`OpportunityScanResult`): the snapshot's version, small files (`small-files.ts`),
 *    potential DRR of the sample, ordering, and how it was measured.
 */
import { DEFAULT_TARGET_FILE_SIZE_MB } from "@lakesmith/shared/jobs";
import type { OpportunityScanPayload, OpportunityScanResult } from "@lakesmith/shared/opportunities";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { planCrunch } from "../crunch/plan.ts";
import { withLoadedTable } from "../formats/read-only.ts";
import { sum } from "../numbers.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { methodOf, rewriteSample } from "./measure.ts";
import { countSorted } from "./ordering.ts";
import { pickSample } from "./sample.ts";
import { smallFiles } from "./small-files.ts";

export interface ScanOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  clock?: Clock;
}

const MB = 2 ** 20;

export async function runOpportunityScan(
  ctx: JobContext<OpportunityScanPayload>,
  options: ScanOptions,
): Promise<OpportunityScanResult> {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  const { payload } = ctx;
  return withLoadedTable(ctx, payload, { ...options, clock }, async (engine, table) => {
    // 2. Plan as a whole-table crunch would, and draw the sample from its candidates.
    const targetBytes = (payload.target_file_size_mb ?? DEFAULT_TARGET_FILE_SIZE_MB) * MB;
    const plan = planCrunch(table.files, {
      mode: "crunch",
      targetBytes,
      partitionColumns: table.partitionColumns,
      maxBinBytes: Number.MAX_SAFE_INTEGER,
    });
    const candidates = plan.partitions.flatMap((p) => p.bins.flat());
    // A table the crunch refuses to rewrite has nothing to gain from one: nothing is sampled.
    const refusal = table.writeRefusal();
    const sample = refusal
      ? []
      : pickSample(candidates, { maxFiles: payload.sample_max_files, maxBytes: payload.sample_max_bytes });
    const names = new Set(table.columns.map((c) => c.name));
    const asked = payload.cluster_columns ?? payload.recipe?.cluster_columns ?? [];
    const unknown = asked.filter((c) => !names.has(c) && !table.partitionColumns.includes(c));
    if (unknown.length > 0)
      throw new JobError(`cluster columns ${unknown.join(", ")} are not columns of the table`, {
        retryable: false,
      });
    const cluster = asked.filter((c) => names.has(c));
    const source = asked.length === 0 ? "none" : payload.cluster_columns ? "payload" : "recipe";

    // 3. Rewrite the sample as the crunch would.
    ctx.progress({ phase: "rewriting sample", files: sample.length, bytes: sum(sample.map((f) => f.size)) });
    const rewrite = await rewriteSample({
      engine,
      store: options.store,
      table,
      sample,
      measure: {
        columns: table.columns,
        clusterColumns: cluster,
        enumeratedColumns: (payload.recipe?.enumerated_columns ?? []).filter((c) => names.has(c)),
        allowParquetV2: payload.parquet_v2 ?? false,
      },
      crunchBytes: sum(candidates.map((f) => f.size)),
      targetBytes,
      orderColumns: cluster,
      scratchDir: ctx.scratchDir,
      signal: ctx.signal,
    });

    // Where a crunch would rewrite nothing, the order is checked on a sample of the live files.
    const bounds = { maxFiles: payload.sample_max_files, maxBytes: payload.sample_max_bytes };
    const ordered = sample.length > 0 ? sample : pickSample(table.files, bounds);
    const filesSorted =
      cluster.length === 0
        ? 0
        : sample.length > 0
          ? rewrite.filesSorted
          : await countSorted(engine, options.store, ordered, cluster, ctx.scratchDir, ctx.signal);
    const checked = cluster.length === 0 ? 0 : ordered.length;

    // 4. Report.
    const { small, alone } = smallFiles(table.files, table.partitionColumns, targetBytes);
    const sampleBytes = sum(sample.map((f) => f.size));
    const unsorted = cluster.length > 0 && filesSorted < checked;
    const notes: string[] = [];
    if (refusal) notes.push(`a crunch would refuse this table: ${refusal}`);
    else if (candidates.length === 0)
      notes.push("a crunch would rewrite no file now: every partition is in shape");
    else if (sample.length === 0)
      notes.push(
        `every file a crunch would rewrite is larger than the sample bound of ${payload.sample_max_bytes} bytes`,
      );
    if (asked.length > cluster.length)
      notes.push(
        `partition columns ${asked.filter((c) => !names.has(c)).join(", ")} order the table by its folders`,
      );
    return {
      measured_at: started.toISOString(),
      table_version: table.version,
      method: refusal
        ? "nothing sampled: a crunch would refuse to rewrite this table"
        : methodOf(sample, candidates.length, rewrite),
      files: table.files.length,
      total_bytes: sum(table.files.map((f) => f.size)),
      target_file_size_bytes: targetBytes,
      small_files: small.length,
      small_files_bytes: sum(small.map((f) => f.size)),
      small_file_share: table.files.length > 0 ? small.length / table.files.length : 0,
      lone_small_files: alone.length,
      crunch_candidates: candidates.length,
      crunch_candidate_bytes: sum(candidates.map((f) => f.size)),
      sample: {
        files: sample.length,
        bytes: sampleBytes,
        rows: rewrite.rows,
        bytes_after: rewrite.bytesAfter,
        files_after: rewrite.filesAfter,
        settings: rewrite.settings ? rewrite.settings.reason : null,
      },
      // Nothing a crunch would rewrite: it would gain nothing. Candidates too large to sample: unknown.
      potential_drr_percent:
        sampleBytes > 0
          ? round2(100 * (1 - rewrite.bytesAfter / sampleBytes))
          : candidates.length === 0 && !refusal
            ? 0
            : null,
      ordering: { columns: cluster, source, files_checked: checked, files_sorted: filesSorted },
      missing_ordering: unsorted,
      suggested_columns: unsorted ? cluster : [],
      notes,
      duration_ms: clock.now().getTime() - started.getTime(),
    };
  });
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
