/**
 * Optimus' Spark reader: the scans Spark actually ran, per SQL execution, read from event logs in the
 * customer's store (plain or zstd/lz4/snappy, single files or rolling `eventlog_v2_*` folders).
 *
 * @example for await (const e of readSparkExecutions(store, "spark-logs/")) console.log(e.scans);
 */
export { codecOf, decompress, type SparkCodec } from "./codec.ts";
export { type SparkLog, sparkLogs } from "./files.ts";
export { columnsOf, type Predicate, type PredicateKind, predicatesOf, splitList } from "./filters.ts";
export { readSparkQueries, sparkLoggedQuery } from "./logged.ts";
export { type SparkScan, scansOf } from "./plan.ts";
export { readSparkExecutions, type SparkExecution, type SparkReadStats } from "./reader.ts";
