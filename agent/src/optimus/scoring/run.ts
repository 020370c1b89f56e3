/**
 * One `layout_scoring` job (Optimus, issue 22): a table's logged workload replayed against candidate
 * layouts simulated on a sample of the table, and against the table's real files. In its steps:
 *
 * 1. Load the table's snapshot through its format (and catalog); nothing is ever written to it.
 * 2. Type the workload (`workload.ts`): predicates matched to the table's columns, literals read in
 *    their types; the filtered columns ranked.
 * 3. Load a bounded sample of the filtered columns (and the current layout's) into DuckDB
 *    (`sample.ts`); the pseudo-files are as many as a rewrite at the payload's target file size
 *    would write (`filesAfterRewrite`), else as many as the table has; at least 1, at most the
 *    sample's rows.
 * 4. Candidates (`candidates.ts`) beside the current layout; each simulated (`simulate.ts`) and
 *    replayed (`replay.ts`).
 * 5. The current skipping measured on the real files' statistics (`measured.ts`), overall and per day.
 * 6. Recommend by the rule of `recommend.ts`; report `LayoutScoringResult`.
 */
import { join } from "node:path";
import type { Layout } from "@lakesmith/shared/jobs";
import type { LayoutScoringPayload, LayoutScoringResult } from "@lakesmith/shared/optimus";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { FIRST_OUTPUT_RATIO, sortedFileCount } from "../../crunch/rewrite.ts";
import { withLoadedTable } from "../../formats/read-only.ts";
import { sum } from "../../numbers.ts";
import { type JobContext, JobError } from "../../registry.ts";
import type { ObjectStore } from "../../store/index.ts";
import { candidateLayouts, isLowCardinality, MAX_TOP_COLUMNS } from "./candidates.ts";
import { measureSkipping } from "./measured.ts";
import { rank, recommend, type ScoredLayout } from "./recommend.ts";
import { skipFractions, weighted } from "./replay.ts";
import { loadSample } from "./sample.ts";
import { distinctCounts, simulateLayout } from "./simulate.ts";
import { kindOf, type ValueKind } from "./values.ts";
import { typeWorkload } from "./workload.ts";

export interface ScoringOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  clock?: Clock;
}

const DAY_MS = 86_400_000;

export async function runLayoutScoring(
  ctx: JobContext<LayoutScoringPayload>,
  options: ScoringOptions,
): Promise<LayoutScoringResult> {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  const { payload } = ctx;
  return withLoadedTable(ctx, payload, { ...options, clock }, async (engine, table) => {
    const names = [...table.columns.map((c) => c.name), ...table.partitionColumns];

    // 2. The workload, typed.
    const workload = typeWorkload(payload.filter_sets, { names, typeOf: (c) => table.typeOf(c) });
    const current = payload.current_layout;
    const unknown = (current?.columns ?? []).filter((c) => !names.includes(c));
    if (unknown.length > 0)
      throw new JobError(`current layout columns ${unknown.join(", ")} are not columns of the table`, {
        retryable: false,
      });
    const top = workload.columns.slice(0, MAX_TOP_COLUMNS);
    const kinds = new Map<string, ValueKind>();
    for (const c of workload.columns) kinds.set(c, kindOf(table.typeOf(c)) as ValueKind);

    // 3. The sample: the filtered columns and the current layout's.
    ctx.progress({ phase: "sampling" });
    const sampled = [...new Set([...workload.columns, ...(current?.columns ?? [])])];
    const sample =
      workload.columns.length > 0
        ? await loadSample({
            engine,
            store: options.store,
            table,
            columns: sampled,
            maxRows: payload.sample_max_rows,
            dir: join(ctx.scratchDir, "sample"),
            signal: ctx.signal,
          })
        : { rows: 0, files: 0 };
    const pseudoFiles =
      sample.rows === 0 ? 0 : Math.max(1, Math.min(filesAfterRewrite(table, payload), sample.rows));

    // 4. Candidates, simulated and replayed.
    const distinct = await distinctCounts(engine, sample.rows > 0 ? top : []);
    const low = new Set(top.filter((c) => isLowCardinality(distinct.get(c) ?? 0, pseudoFiles)));
    const layouts: (Layout | null)[] = [
      current,
      ...(sample.rows > 0 ? candidateLayouts(top, low, current) : []),
    ];
    const sets = workload.sets.map((s) => s.predicates);
    const volumes = workload.sets.map((s) => s.volume);
    const scored: ScoredLayout[] = [];
    for (const [i, layout] of layouts.entries()) {
      ctx.signal.throwIfAborted();
      ctx.progress({ phase: "simulating", candidate: i + 1, candidates: layouts.length });
      const files = await simulateLayout(engine, layout, kinds, pseudoFiles, sample.rows);
      scored.push({ layout, skip: weighted(skipFractions(sets, files), volumes), current: i === 0 });
    }

    // 5. Measured on the real files.
    const measured = measureSkipping(table.files, table.partitionColumns, kinds, workload.sets);

    // 6. Recommend and report.
    const totalBytes = sum(table.files.map((f) => f.size));
    const days = windowDays(payload, Object.keys(Object.assign({}, ...workload.sets.map((s) => s.days))));
    const loggedBytes = sum(volumes.map((v) => v.bytes_scanned));
    const bytesPerDay =
      (loggedBytes > 0 ? loggedBytes : sum(volumes.map((v) => v.queries)) * totalBytes) / days;
    const noPredicates =
      workload.columns.length === 0
        ? `no filter set has a predicate on a column of the table that could be replayed (${workload.unusable} of ${workload.predicates} predicates unusable)`
        : sample.rows === 0
          ? "the table has no rows to sample"
          : null;
    const decision = noPredicates
      ? { recommendation: null, no_recommendation_reason: noPredicates }
      : recommend({ scored, minGain: payload.min_gain, bytesPerDay, totalBytes });
    const currentScore = scored[0]?.skip ?? 0;
    return {
      measured_at: started.toISOString(),
      table_version: table.version,
      files: table.files.length,
      total_bytes: totalBytes,
      sample_rows: sample.rows,
      pseudo_files: pseudoFiles,
      method: methodOf(sample, table.files.length, pseudoFiles, workload, low),
      current: {
        layout: current,
        predicted_skip_fraction: currentScore,
        measured_skip_fraction: measured.overall,
      },
      candidates: rank(scored).map((s) => ({ layout: s.layout, skip_fraction: s.skip })),
      ...decision,
      days: measured.days,
    };
  });
}

/** Days the workload's bytes are averaged over: the payload's window, else the span of its days. */
function windowDays(payload: LayoutScoringPayload, days: readonly string[]): number {
  const sorted = [...days].sort();
  const start = payload.window_start ?? sorted[0];
  const end = payload.window_end ?? sorted[sorted.length - 1];
  if (!start || !end) return 1;
  return Math.max(
    1,
    Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS) + 1,
  );
}

function methodOf(
  sample: { rows: number; files: number },
  files: number,
  pseudoFiles: number,
  workload: ReturnType<typeof typeWorkload>,
  low: ReadonlySet<string>,
): string {
  const replay =
    `${workload.sets.length} filter set${workload.sets.length === 1 ? "" : "s"} replayed ` +
    `(${workload.unusable} of ${workload.predicates} predicates unusable and ignored)`;
  if (sample.rows === 0) return `nothing sampled; ${replay} against the files' statistics`;
  return (
    `sample of ${sample.rows} rows from ${sample.files} of ${files} files (spread evenly in key order, ` +
    `evenly spaced rows of them where they hold more), each layout simulated by sorting it as the crunch writes ` +
    `and cutting it into ${pseudoFiles} pseudo-files; ${replay} against each layout's pseudo-file ` +
    `min/max and the real files' statistics` +
    (low.size > 0 ? `; low-cardinality (never a layout alone): ${[...low].join(", ")}` : "")
  );
}

/**
 * How many files the table would have once a crunch rewrote it in a new layout: as many as the
 * crunch sizes a sorted rewrite of its bytes into at the target file size (`sortedFileCount`, at
 * the output ratio it assumes before measuring one), or, without a target, the files it has now. A
 * table of many small files is skipped over as the few files a rewrite leaves.
 */
export function filesAfterRewrite(
  table: { files: readonly { size: number }[] },
  payload: Pick<LayoutScoringPayload, "target_file_size_mb">,
): number {
  if (!payload.target_file_size_mb) return table.files.length;
  return sortedFileCount(
    sum(table.files.map((f) => f.size)),
    FIRST_OUTPUT_RATIO,
    payload.target_file_size_mb * 2 ** 20,
  );
}
