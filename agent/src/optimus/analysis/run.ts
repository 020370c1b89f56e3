/**
 * The `query_log_analysis` job: reads the window's query logs with the engine's reader, maps each
 * scan to one of the run's tables, folds each table's scans into filter sets, and sends one
 * `OptimusWorkloadPart` per table before returning the read's summary.
 *
 * Steps, in order:
 * 1. Read: every query the reader yields is counted; one outside the window (`window.ts`) is
 *    dropped, one of Lakesmith's own reads (`isOwnQuery`) is counted and dropped.
 * 2. Map (`tables.ts`): a scan weighs its own bytes where the log gives every scan's (Trino's
 *    inputs); otherwise the query's bytes are split evenly over all its scans, so an unmatched scan
 *    keeps its share out of the tables'; a query without a byte figure counts 1 query and 0 bytes.
 * 3. Fold (`fold.ts`, `workload.ts`): bounded per table and over all tables; unmatched scans are
 *    tallied by name (`unmatched.ts`).
 * 4. Send: one part per table, validated, in fqn order, each awaited before the next.
 * Progress is reported every `progressEvery` queries read (2,000) and per part; `ctx.signal` is
 * checked per query and per part.
 */
import {
  type OptimusTableRef,
  OptimusWorkloadPartSchema,
  type QueryLogAnalysisPayload,
  type QueryLogAnalysisResult,
  QueryLogAnalysisResultSchema,
} from "@lakesmith/shared/optimus";
import type { JobContext } from "../../registry.ts";
import type { ObjectStore } from "../../store/index.ts";
import { isOwnQuery, type LoggedQuery, type QueryLogReader, type ReadStats } from "../query.ts";
import { type FoldLimits, RunFold } from "./fold.ts";
import { TableMatcher } from "./tables.ts";
import { UnmatchedScans } from "./unmatched.ts";
import { dayOf, inWindow } from "./window.ts";
import type { ScanShare } from "./workload.ts";

export interface AnalysisOptions {
  store: ObjectStore;
  reader: QueryLogReader;
  /** The key prefix of the logs in `store` ("" for all of it). */
  prefix?: string;
  progressEvery?: number;
  limits?: FoldLimits;
}

const PROGRESS_EVERY = 2_000;

/** Runs the analysis of `ctx.payload`'s window over the logs in `options.store`. */
export async function runQueryLogAnalysis(
  ctx: Pick<JobContext<QueryLogAnalysisPayload>, "payload" | "signal" | "progress" | "part">,
  options: AnalysisOptions,
): Promise<QueryLogAnalysisResult> {
  const { payload } = ctx;
  const window = { start: payload.window_start, end: payload.window_end };
  const stats: ReadStats = { logs: 0, lines: 0, malformedLines: 0 };
  const counts = {
    queries_read: 0,
    queries_in_window: 0,
    own_queries_skipped: 0,
    scans: 0,
    scans_matched: 0,
  };
  const matcher = new TableMatcher(payload.tables);
  const fold = new RunFold(options.limits);
  const unmatched = new UnmatchedScans();
  const every = options.progressEvery ?? PROGRESS_EVERY;
  const report = () =>
    ctx.progress({
      step: "reading",
      logs: stats.logs,
      lines: stats.lines,
      ...counts,
      filter_sets_held: fold.openSets,
    });

  for await (const query of options.reader(options.store, options.prefix ?? "", stats)) {
    ctx.signal.throwIfAborted();
    if (++counts.queries_read % every === 0) report();
    if (!inWindow(window, query.startedAt)) continue;
    counts.queries_in_window++;
    if (isOwnQuery(query)) {
      counts.own_queries_skipped++;
      continue;
    }
    const { matched, missed } = mapScans(query, matcher);
    counts.scans += query.scans.length;
    counts.scans_matched += query.scans.length - missed.length;
    const seen = { day: dayOf(query.startedAt), example: query.label ?? query.id };
    for (const [table, shares] of matched) fold.add(table, seen, shares);
    if (missed.length > 0) unmatched.add(missed);
  }
  report();

  const ordered = fold.workloads();
  for (const [i, workload] of ordered.entries()) {
    ctx.signal.throwIfAborted();
    await ctx.part(OptimusWorkloadPartSchema.parse(workload.part()));
    ctx.progress({ step: "sending", tables_sent: i + 1, tables: ordered.length });
  }
  return QueryLogAnalysisResultSchema.parse({
    logs: stats.logs,
    lines: stats.lines,
    malformed_lines: stats.malformedLines,
    ...counts,
    unmatched: unmatched.top(),
    tables: ordered.length,
  });
}

/** A query's scans grouped by the table they matched, and those that matched none, each with its bytes. */
function mapScans(
  query: LoggedQuery,
  matcher: TableMatcher,
): { matched: Map<OptimusTableRef, ScanShare[]>; missed: ScanShare[] } {
  // Each scan's own bytes where the log gives every scan's (Trino's inputs); else the query's, split evenly.
  const perScan = query.scans.every((s) => s.bytesScanned !== undefined);
  const even = query.scans.length > 0 ? (query.bytesScanned ?? 0) / query.scans.length : 0;
  const matched = new Map<OptimusTableRef, ScanShare[]>();
  const missed: ScanShare[] = [];
  for (const scan of query.scans) {
    const bytes = perScan ? (scan.bytesScanned ?? 0) : even;
    const table = matcher.match(scan);
    if (!table) missed.push({ scan, bytes });
    else {
      const shares = matched.get(table);
      if (shares) shares.push({ scan, bytes });
      else matched.set(table, [{ scan, bytes }]);
    }
  }
  return { matched, missed };
}
