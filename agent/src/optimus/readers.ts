/**
 * The query-log reader of each engine a submission names (`spark`, `trino`, `sql`). The analysis
 * reads every engine's logs through this one choice, and never sees a log format.
 *
 * @example for await (const q of readerFor("spark")(store, "", stats)) console.log(q.scans);
 */
import type { OptimusEngine } from "@lakesmith/shared/optimus";
import { JobError } from "../registry.ts";
import type { QueryLogReader } from "./query.ts";
import { readSparkQueries } from "./spark/index.ts";

const notYet = (what: string): QueryLogReader =>
  // biome-ignore lint/correctness/useYield: refuses before reading anything
  async function* () {
    throw new JobError(`${what} logs can't be read by this agent version yet`, { retryable: false });
  };

/** The reader of `engine`'s logs. */
export function readerFor(engine: OptimusEngine): QueryLogReader {
  switch (engine) {
    case "spark":
      return readSparkQueries;
    case "trino":
      return notYet("Trino query-event");
    case "sql":
      return notYet("SQL");
  }
}
