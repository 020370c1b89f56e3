/**
 * A table's logged workload made ready for replay: each filter set's predicates matched to the
 * table's columns and read in their types, and the filtered columns ranked. Pure.
 *
 * Rules:
 * - A predicate's column is matched to a data or partition column of the table case-insensitively
 *   (engines print names as the query spelled them); one naming no column of the table, or a column
 *   whose type has no replay kind (`values.ts`), or with any literal that can't be read in the
 *   column's type, is unusable: ignored (the set keeps its other predicates) and counted.
 * - Identical predicates are one object, so the replay evaluates each once.
 * - Columns are ranked by the weight of the sets with a usable predicate on them: bytes scanned, or
 *   queries where the workload logged no bytes; ties by queries, then name.
 */
import type { OptimusFilterSet } from "@lakesmith/shared/optimus";
import type { Op, TypedPredicate, Volume } from "./replay.ts";
import { kindOf, readLiteral, type Value, type ValueKind } from "./values.ts";

export interface TypedFilterSet {
  predicates: TypedPredicate[];
  volume: Volume;
  days: Record<string, Volume>;
}

export interface TypedWorkload {
  sets: TypedFilterSet[];
  /** The columns with usable predicates, most filtered first. */
  columns: string[];
  /** Predicates ignored as unusable. */
  unusable: number;
  predicates: number;
}

/** The table as the typing needs it. */
export interface ColumnCatalog {
  /** Data and partition columns, in the table's spelling. */
  names: readonly string[];
  typeOf(column: string): string;
}

export function typeWorkload(sets: readonly OptimusFilterSet[], table: ColumnCatalog): TypedWorkload {
  const byLower = new Map(table.names.map((n) => [n.toLowerCase(), n]));
  const kinds = new Map<string, ValueKind | null>();
  const kindOfColumn = (c: string) => {
    if (!kinds.has(c)) kinds.set(c, kindOf(table.typeOf(c)));
    return kinds.get(c) ?? null;
  };
  const interned = new Map<string, TypedPredicate>();
  let unusable = 0;
  let predicates = 0;
  const typed = sets.map((set): TypedFilterSet => {
    const out: TypedPredicate[] = [];
    for (const p of set.predicates) {
      predicates++;
      const column = byLower.get(p.column.toLowerCase());
      const kind = column === undefined ? null : kindOfColumn(column);
      const values = kind ? p.values.map((v) => readLiteral(kind, v)) : [];
      if (!column || !kind || values.length === 0 || values.some((v) => v === undefined)) {
        unusable++;
        continue;
      }
      const key = JSON.stringify([column, p.op, p.values]);
      let predicate = interned.get(key);
      if (!predicate) {
        predicate = { column, kind, op: p.op as Op, values: values as Value[] };
        interned.set(key, predicate);
      }
      if (!out.includes(predicate)) out.push(predicate);
    }
    return {
      predicates: out,
      volume: { queries: set.queries, bytes_scanned: set.bytes_scanned },
      days: set.days,
    };
  });
  return { sets: typed, columns: rankColumns(typed), unusable, predicates };
}

function rankColumns(sets: readonly TypedFilterSet[]): string[] {
  const byBytes = sets.some((s) => s.volume.bytes_scanned > 0);
  const score = new Map<string, { weight: number; queries: number }>();
  for (const set of sets)
    for (const column of new Set(set.predicates.map((p) => p.column))) {
      const s = score.get(column) ?? { weight: 0, queries: 0 };
      s.weight += byBytes ? set.volume.bytes_scanned : set.volume.queries;
      s.queries += set.volume.queries;
      score.set(column, s);
    }
  return [...score.entries()]
    .sort(([a, x], [b, y]) => y.weight - x.weight || y.queries - x.queries || (a < b ? -1 : a > b ? 1 : 0))
    .map(([c]) => c);
}
