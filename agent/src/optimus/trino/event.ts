/**
 * One Trino `QueryCompletedEvent` (as the SPI's JSON serialization writes it: the http and kafka
 * event listeners, or a custom `EventListener` logging it) as a `LoggedQuery`.
 *
 * Fields read:
 * - `metadata.queryId`, `metadata.query` (the SQL; `metadata.preparedQuery` for `EXECUTE`),
 *   `metadata.queryState`, `metadata.updateType`; `context.queryType`, `context.source`,
 *   `context.user`, `context.catalog`, `context.schema`; `statistics.physicalInputBytes` (else
 *   `statistics.totalBytes`); `ioMetadata.inputs[]`: `catalogName`, `schema`, `table`, `columns`,
 *   `physicalInputBytes`; `failureInfo`; `executionStartTime` (else `createTime`).
 *
 * Rules:
 * - Skipped: a query not `FINISHED` or with `failureInfo` (a failed query's scans stopped part way
 *   and the user runs it again), a statement that isn't a query (`updateType` set, `queryType` other
 *   than `SELECT`, or text that parses as something else), an event without inputs.
 * - Tables are `catalog.schema.table` in lower case (Trino's names), completed with the session's
 *   catalog and schema, else named after the one input whose name they end; the inputs' `columns`
 *   tell unqualified columns apart in joins.
 * - Every input becomes a scan: a table the text names is one scan per reference with its filters;
 *   an input the text doesn't name (a table under a view) is one scan without filters, and so is every
 *   input when no grammar parses the text.
 * - An input's `physicalInputBytes` is split evenly over the scans of its table.
 * - client = `context.source`, else `context.user`.
 */
import type { LoggedScan } from "../query.ts";
import {
  countOf,
  labelOf,
  parseStatement,
  type RecordVerdict,
  stringField,
  type TextScan,
  textScans,
  timeOf,
} from "../sqltext/index.ts";

type Fields = Record<string, unknown>;

interface Input {
  table: string;
  columns: Set<string>;
  bytes?: number;
}

/** The event as a query, `"skipped"` when it is not a query to count, `"malformed"` when it isn't an event. */
export function trinoLoggedQuery(event: Fields): RecordVerdict {
  const metadata = objectOf(event.metadata);
  const context = objectOf(event.context) ?? {};
  const statistics = objectOf(event.statistics) ?? {};
  const id = metadata && stringField(metadata, "queryId");
  const text = metadata && stringField(metadata, "query");
  if (!metadata || !id || !text) return "malformed";
  if (stringField(metadata, "queryState") !== "FINISHED" || objectOf(event.failureInfo)) return "skipped";
  if (stringField(metadata, "updateType")) return "skipped";
  const queryType = stringField(context, "queryType");
  if (queryType && queryType !== "SELECT") return "skipped";
  const inputs = inputsOf(objectOf(event.ioMetadata)?.inputs);
  if (inputs.length === 0) return "skipped";

  const sql = /^\s*EXECUTE\b/i.test(text) ? (stringField(metadata, "preparedQuery") ?? text) : text;
  const parsed = parseStatement(sql, ["trino", "postgresql"]);
  if (parsed.kind === "other") return "skipped";
  const named =
    parsed.kind === "select"
      ? textScans(parsed, {
          catalog: stringField(context, "catalog")?.toLowerCase(),
          schema: stringField(context, "schema")?.toLowerCase(),
          lowerCase: true,
          columnsOf: (table) => inputOf(table, inputs)?.columns,
        })
      : [];
  return {
    engine: "trino",
    id,
    label: labelOf(sql),
    startedAt: timeOf(event.executionStartTime) ?? timeOf(event.createTime),
    bytesScanned: countOf(statistics.physicalInputBytes) ?? countOf(statistics.totalBytes),
    client: stringField(context, "source", "user"),
    scans: scansOf(named, inputs),
  };
}

function scansOf(named: TextScan[], inputs: Input[]): LoggedScan[] {
  const scans: TextScan[] = named.map((s) => ({ ...s, table: inputOf(s.table, inputs)?.table ?? s.table }));
  for (const input of inputs)
    if (!scans.some((s) => s.table === input.table))
      scans.push({ table: input.table, filterColumns: [], predicates: [] });
  return scans.map((s) => {
    const input = inputs.find((i) => i.table === s.table);
    const share = scans.filter((t) => t.table === s.table).length;
    const scan: LoggedScan = {
      table: s.table,
      locations: [],
      filterColumns: s.filterColumns,
      predicates: s.predicates,
    };
    if (input?.bytes !== undefined) scan.bytesScanned = input.bytes / share;
    return scan;
  });
}

/** The input a table name of the text stands for: the same name, else the one input it ends. */
function inputOf(table: string, inputs: Input[]): Input | undefined {
  const same = inputs.find((i) => i.table === table);
  if (same) return same;
  const ending = inputs.filter((i) => i.table.endsWith(`.${table}`));
  return ending.length === 1 ? ending[0] : undefined;
}

function inputsOf(value: unknown): Input[] {
  const out: Input[] = [];
  for (const item of Array.isArray(value) ? value : []) {
    const input = objectOf(item) ?? {};
    const parts = [input.catalogName, input.schema, input.table];
    if (!parts.every((p) => typeof p === "string" && p !== "")) continue;
    const table = parts.join(".").toLowerCase();
    const columns = Array.isArray(input.columns) ? input.columns : [];
    const bytes = countOf(input.physicalInputBytes);
    const same = out.find((i) => i.table === table);
    if (same) {
      for (const c of columns) if (typeof c === "string") same.columns.add(c.toLowerCase());
      if (bytes !== undefined) same.bytes = (same.bytes ?? 0) + bytes;
      continue;
    }
    out.push({
      table,
      columns: new Set(columns.filter((c): c is string => typeof c === "string").map((c) => c.toLowerCase())),
      bytes,
    });
  }
  return out;
}

function objectOf(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}
