/**
 * Optimus' Trino reader: every `QueryCompletedEvent` in the JSON-lines logs under a prefix (plain or
 * `.gz`), as `LoggedQuery` records (`event.ts` says what is read and what is skipped). A line that
 * is not JSON, or JSON that is not a completed-query event, counts as malformed.
 *
 * @example for await (const q of readTrinoQueries(store, "trino/", stats)) console.log(q.scans);
 */
import { jsonLinesReader } from "../sqltext/index.ts";
import { trinoLoggedQuery } from "./event.ts";

/** The completed queries of every Trino event log under `prefix`. */
export const readTrinoQueries = jsonLinesReader((record) => trinoLoggedQuery(record.fields));
