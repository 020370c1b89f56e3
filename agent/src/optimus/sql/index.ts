/**
 * Optimus' SQL-log reader: plain statement logs (JSON lines, plain or gzipped) as `LoggedQuery`
 * records with the tables each statement read and the filters it puts on them.
 */

export { readSqlQueries } from "./reader.ts";
export { sqlLoggedQuery } from "./record.ts";
