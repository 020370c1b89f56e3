/**
 * The query-log reader of each engine a submission names (`spark`, `trino`, `sql`). The analysis
 * reads every engine's logs through this one choice, and never sees a log format. Spark's reader
 * reads several logs at once in worker threads (`spark/parallel.ts`); the others read in this
 * thread and ignore `options`.
 *
 * @example for await (const q of readerFor("spark")(store, "", stats)) console.log(q.scans);
 */
import type { OptimusEngine } from "@lakesmith/shared/optimus";
import type { QueryLogReader } from "./query.ts";
import { type SparkReadOptions, sparkQueryReader } from "./spark/parallel.ts";
import { readSqlQueries } from "./sql/index.ts";
import { readTrinoQueries } from "./trino/index.ts";

/** The reader of `engine`'s logs. */
export function readerFor(engine: OptimusEngine, options: SparkReadOptions = {}): QueryLogReader {
  switch (engine) {
    case "spark":
      return sparkQueryReader(options);
    case "trino":
      return readTrinoQueries;
    case "sql":
      return readSqlQueries;
  }
}
