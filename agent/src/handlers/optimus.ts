/**
 * The Optimus jobs (issue 22): `query_log_analysis` reads a submission's query logs where they live
 * (the store at `query_logs_uri`, which the allow list must cover) and sends each table's workload;
 * `layout_scoring` scores layouts for one table's workload, a table job like any other (its `uri`
 * and catalog checked by the allow list; `optimus/scoring/`).
 */
import {
  LAYOUT_SCORING_KIND,
  LayoutScoringPayloadSchema,
  QUERY_LOG_ANALYSIS_KIND,
  QueryLogAnalysisPayloadSchema,
} from "@lakesmith/shared/optimus";
import { runQueryLogAnalysis } from "../optimus/analysis/run.ts";
import { readerFor } from "../optimus/readers.ts";
import { runLayoutScoring } from "../optimus/scoring/run.ts";
import { workersWithin } from "../optimus/spark/parallel.ts";
import { defineHandler, type JobHandler } from "../registry.ts";
import { storeFor } from "../store/index.ts";
import { storeOptions, type TableHandlerConfig } from "./tables.ts";

export function optimusHandlers(config: TableHandlerConfig): JobHandler[] {
  const options = storeOptions(config);
  return [
    defineHandler({
      kind: QUERY_LOG_ANALYSIS_KIND,
      payload: QueryLogAnalysisPayloadSchema,
      locations: (p) => [p.query_logs_uri],
      // The tables' roots are names scans are matched to; the analysis reads only the logs.
      references: (p) => p.tables.flatMap((t) => t.uris),
      run: (ctx) =>
        runQueryLogAnalysis(ctx, {
          store: storeFor(ctx.payload.query_logs_uri, options),
          // Spark logs are read in worker threads, as many as fit the job's memory.
          reader: readerFor(ctx.payload.engine, {
            signal: ctx.signal,
            workers: workersWithin(config.memory_limit_mb),
          }),
        }),
    }),
    defineHandler({
      kind: LAYOUT_SCORING_KIND,
      payload: LayoutScoringPayloadSchema,
      locations: (p) => [p.uri],
      endpoints: (p) => (p.catalog ? [p.catalog.uri] : []),
      run: (ctx) =>
        runLayoutScoring(ctx, {
          store: storeFor(ctx.payload.uri, options),
          memoryLimitMb: config.memory_limit_mb,
        }),
    }),
  ];
}
