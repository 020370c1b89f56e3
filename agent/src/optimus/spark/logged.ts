/**
 * The Spark reader as an Optimus `QueryLogReader`: each SQL execution becomes a `LoggedQuery`.
 *
 * - id `<log>#<executionId>`, label = Spark's description, bytes = the scans' bytes-read metric.
 * - `client` is left undefined: the reader parses only plan and metric events, not the application
 *   start that carries Spark's app name, so an own-query check can't match a Spark execution.
 * - The reader's counters (logs, lines, malformed lines) are copied into the caller's `stats` as
 *   the read goes, so a progress report between queries sees them.
 */
import type { LoggedQuery, QueryLogReader, ReadStats } from "../query.ts";
import { readSparkExecutions, type SparkExecution, type SparkReadStats } from "./reader.ts";

/** One execution as the analysis sees it. */
export function sparkLoggedQuery(execution: SparkExecution): LoggedQuery {
  return {
    engine: "spark",
    id: `${execution.log}#${execution.executionId}`,
    label: execution.description,
    startedAt: execution.startedAt,
    bytesScanned: execution.bytesRead,
    scans: execution.scans.map((s) => ({
      table: s.table,
      locations: s.locations,
      filterColumns: s.filterColumns,
      predicates: s.predicates,
    })),
  };
}

/** Every Spark execution with scans under `prefix`, as `LoggedQuery` records. */
export const readSparkQueries: QueryLogReader = async function* (store, prefix, stats) {
  const spark: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 };
  const sync = (to: ReadStats) => {
    to.logs = spark.logs;
    to.lines = spark.lines;
    to.malformedLines = spark.malformedLines;
  };
  for await (const execution of readSparkExecutions(store, prefix, spark)) {
    sync(stats);
    yield sparkLoggedQuery(execution);
  }
  sync(stats);
};
