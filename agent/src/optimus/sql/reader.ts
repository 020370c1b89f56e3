/**
 * Optimus' SQL-log reader: every statement record in the JSON-lines logs under a prefix (plain or
 * `.gz`) as a `LoggedQuery` (`record.ts` defines the format). Lines that aren't JSON objects, and
 * records without a readable statement, count as malformed.
 *
 * @example for await (const q of readSqlQueries(store, "sql-logs/", stats)) console.log(q.scans);
 */
import { jsonLinesReader } from "../sqltext/index.ts";
import { sqlLoggedQuery } from "./record.ts";

/** The queries of every SQL log under `prefix`. */
export const readSqlQueries = jsonLinesReader(sqlLoggedQuery);
