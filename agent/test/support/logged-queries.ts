/**
 * Helpers for tests of Optimus log readers: a predicate as readers yield it, each scan's filters in
 * a form to compare whole, and every query a reader yields from a folder.
 */
import type { LoggedQuery, QueryLogReader, ReadStats } from "../../src/optimus/query.ts";
import { FileStore } from "../../src/store/index.ts";

/** A predicate with its kind from its operator (`=` equality, `in`, else range). */
export const pred = (column: string, op: string, values: string[], disjunctive = false) => ({
  column,
  kind: op === "=" ? "equality" : op === "in" ? "in" : "range",
  op,
  values,
  disjunctive,
});

/** Per scan, in order: its table, filter columns and predicates. */
export function filtersOf(q: LoggedQuery | undefined) {
  return q?.scans.map((s) => ({ table: s.table, columns: s.filterColumns, predicates: s.predicates }));
}

/** Every query `reader` yields under `prefix` of the folder `root`, in order, and the read's counters. */
export async function readAll(reader: QueryLogReader, root: string, prefix: string) {
  const stats: ReadStats = { logs: 0, lines: 0, malformedLines: 0 };
  const queries: LoggedQuery[] = [];
  for await (const q of reader(new FileStore(root), prefix, stats)) queries.push(q);
  return { stats, queries, byId: new Map(queries.map((q) => [q.id, q])) };
}
