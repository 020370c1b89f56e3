/**
 * The Optimus jobs (issue 22): `query_log_analysis` reads a submission's query logs where they live
 * (the store at `query_logs_uri`, which the allow list must cover) and sends each table's workload.
 */
import { QUERY_LOG_ANALYSIS_KIND, QueryLogAnalysisPayloadSchema } from "@lakesmith/shared/optimus";
import { runQueryLogAnalysis } from "../optimus/analysis/run.ts";
import { readerFor } from "../optimus/readers.ts";
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
      run: (ctx) =>
        runQueryLogAnalysis(ctx, {
          store: storeFor(ctx.payload.query_logs_uri, options),
          reader: readerFor(ctx.payload.engine),
        }),
    }),
  ];
}
