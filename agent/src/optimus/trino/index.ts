/**
 * Optimus' Trino reader: completed-query events (JSON lines, plain or gzipped) as `LoggedQuery`
 * records with the tables each query read and the filters its SQL puts on them.
 */
export { trinoLoggedQuery } from "./event.ts";
export { readTrinoQueries } from "./reader.ts";
