/**
 * What the Trino and SQL-log readers share: JSON-lines logs under a prefix (`records.ts`), parsing a
 * statement (`grammar.ts`) and the tables it reads with their filters (`filters.ts`, `scope.ts`).
 *
 * @example const s = parseStatement(sql, ["trino"]); if (s.kind === "select") textScans(s.select, { lowerCase: true });
 */
export { type TextFilterOptions, textScans } from "./filters.ts";
export { type Grammar, type ParsedQuery, type ParsedStatement, parseStatement } from "./grammar.ts";
export {
  countOf,
  jsonLinesReader,
  jsonRecords,
  type LogRecord,
  labelOf,
  type RecordVerdict,
  stringField,
  timeOf,
} from "./records.ts";
export type { TextScan } from "./scope.ts";
