/**
 * One record of a plain SQL log (`engine: "sql"`) as a `LoggedQuery`. The format: JSON lines
 * (optionally gzipped), one statement per record.
 *
 * | field | aliases | meaning |
 * |---|---|---|
 * | `statement` | `query_text`, `sql`, `query` | the SQL text (required) |
 * | `bytes_scanned` | `bytes_processed`, `total_bytes_processed` | bytes the statement read |
 * | `start_time` | `started_at`, `creation_time` | ISO-8601, or epoch milliseconds |
 * | `query_id` | `id` | default `<object key>:<line>` |
 * | `application` | `client`, else `user` | who ran it (Lakesmith's own reads are recognized by it) |
 * | `default_catalog`, `default_schema` | | completes table names written without them |
 *
 * Rules: a record without a statement, or whose statement no grammar parses (Trino's, then
 * PostgreSQL's, then MySQL's), is malformed; a statement that isn't a query, or reads no table, is
 * skipped. Names keep their case (dialects differ on folding; the analysis compares table names
 * case-insensitively).
 */
import {
  countOf,
  type LogRecord,
  labelOf,
  parseStatement,
  type RecordVerdict,
  stringField,
  textScans,
  timeOf,
} from "../sqltext/index.ts";

/** The record as a query, `"skipped"` when it is not a query that read a table, `"malformed"` otherwise. */
export function sqlLoggedQuery(record: LogRecord): RecordVerdict {
  const { fields } = record;
  const sql = stringField(fields, "statement", "query_text", "sql", "query");
  if (!sql) return "malformed";
  const parsed = parseStatement(sql, ["trino", "postgresql", "mysql"]);
  if (parsed.kind === "unparseable") return "malformed";
  if (parsed.kind === "other") return "skipped";
  const scans = textScans(parsed, {
    catalog: stringField(fields, "default_catalog"),
    schema: stringField(fields, "default_schema"),
    lowerCase: false,
  });
  if (scans.length === 0) return "skipped";
  const id = fields.query_id ?? fields.id;
  return {
    engine: "sql",
    id: typeof id === "string" || typeof id === "number" ? String(id) : `${record.key}:${record.line}`,
    label: labelOf(sql),
    startedAt: timeOf(fields.start_time ?? fields.started_at ?? fields.creation_time),
    bytesScanned: countOf(fields.bytes_scanned ?? fields.bytes_processed ?? fields.total_bytes_processed),
    client: stringField(fields, "application", "client", "user"),
    scans: scans.map((s) => ({ ...s, locations: [] })),
  };
}
