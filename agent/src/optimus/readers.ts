/**
 * The query-log reader of each engine a submission names (`spark`, `trino`, `sql`). The analysis
 * reads every engine's logs through this one choice, and never sees a log format.
 *
 * @example for await (const q of readerFor("spark")(store, "", stats)) console.log(q.scans);
 */
import type { OptimusEngine } from "@lakesmith/shared/optimus";
import type { QueryLogReader } from "./query.ts";
import { readSparkQueries } from "./spark/index.ts";
import { readSqlQueries } from "./sql/index.ts";
import { readTrinoQueries } from "./trino/index.ts";

/** The reader of `engine`'s logs. */
export function readerFor(engine: OptimusEngine): QueryLogReader {
  switch (engine) {
    case "spark":
      return readSparkQueries;
    case "trino":
      return readTrinoQueries;
    case "sql":
      return readSqlQueries;
  }
}
