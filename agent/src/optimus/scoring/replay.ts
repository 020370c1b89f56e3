/**
 * The replay of a workload against a set of files (a candidate's pseudo-files, or the table's real
 * files with their statistics): which files each filter set lets an engine skip. Pure.
 *
 * Rules:
 * - A file is skipped by a filter set when any of its predicates excludes the file's [min, max] in
 *   the predicate's column: `=` and `in` when every value lies outside; `<`, `<=`, `>`, `>=` when
 *   the whole range lies on the wrong side (a range predicate with several values: when every value
 *   excludes, the cautious reading). An unknown bound excludes nothing on its side.
 * - A file holding only nulls in the column is skipped by any comparison on it (nothing compares
 *   true with null).
 * - A filter set's skip fraction is the weight (rows) of the files it skips over all files' weight;
 *   a set without usable predicates skips nothing. The workload's is the sets' fractions weighted by
 *   bytes scanned, or by queries where the weighted sets scanned no bytes at all (logs without
 *   byte figures).
 * - Each distinct predicate is evaluated once per file, whatever the number of sets that use it.
 */
import { compareValues, type Value, type ValueKind } from "./values.ts";

export type Op = "=" | "<" | "<=" | ">" | ">=" | "in";

/** A predicate read in its column's type; `column` is the table's spelling. */
export interface TypedPredicate {
  column: string;
  kind: ValueKind;
  op: Op;
  values: Value[];
}

/** What a file is known to hold in one column; absent bounds are unknown. */
export interface Bounds {
  min?: Value | undefined;
  max?: Value | undefined;
  onlyNulls?: boolean;
}

/** A file (or pseudo-file) as the replay sees it: its weight (rows) and its columns' bounds. */
export interface FileBounds {
  weight: number;
  columns: Record<string, Bounds>;
}

/** Queries and bytes, as in a filter set's volume. */
export interface Volume {
  queries: number;
  bytes_scanned: number;
}

/** Whether `p` excludes every row of a file with `b` in its column. */
export function excludes(p: TypedPredicate, b: Bounds | undefined): boolean {
  if (!b) return false;
  if (b.onlyNulls) return true;
  const { min, max } = b;
  const cmp = (x: Value, y: Value) => compareValues(p.kind, x, y);
  return p.values.every((v) => {
    switch (p.op) {
      case "=":
      case "in":
        return (min !== undefined && cmp(v, min) < 0) || (max !== undefined && cmp(v, max) > 0);
      case "<":
        return min !== undefined && cmp(min, v) >= 0;
      case "<=":
        return min !== undefined && cmp(min, v) > 0;
      case ">":
        return max !== undefined && cmp(max, v) <= 0;
      case ">=":
        return max !== undefined && cmp(max, v) < 0;
    }
    return false;
  });
}

/** Each filter set's skipped fraction of the files' weight (sets given as their predicates). */
export function skipFractions(
  sets: readonly (readonly TypedPredicate[])[],
  files: readonly FileBounds[],
): number[] {
  const total = files.reduce((s, f) => s + f.weight, 0);
  const skipped = new Map<TypedPredicate, Uint8Array>();
  const skips = (p: TypedPredicate) => {
    let out = skipped.get(p);
    if (!out) {
      out = new Uint8Array(files.length);
      for (const [i, f] of files.entries()) out[i] = excludes(p, f.columns[p.column]) ? 1 : 0;
      skipped.set(p, out);
    }
    return out;
  };
  return sets.map((predicates) => {
    if (predicates.length === 0 || total === 0) return 0;
    const arrays = predicates.map(skips);
    let weight = 0;
    for (const [i, f] of files.entries()) if (arrays.some((a) => a[i] === 1)) weight += f.weight;
    return weight / total;
  });
}

/** The fractions weighted by the volumes' bytes, or by their queries where no bytes were logged. */
export function weighted(fractions: readonly number[], volumes: readonly Volume[]): number {
  const bytes = volumes.reduce((s, v) => s + v.bytes_scanned, 0);
  const weightOf = (v: Volume) => (bytes > 0 ? v.bytes_scanned : v.queries);
  const total = volumes.reduce((s, v) => s + weightOf(v), 0);
  if (total === 0) return 0;
  const sum = volumes.reduce((s, v, i) => s + weightOf(v) * (fractions[i] ?? 0), 0);
  return Math.min(1, Math.max(0, sum / total));
}
