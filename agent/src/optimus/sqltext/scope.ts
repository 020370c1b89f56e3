/**
 * Name resolution for SQL text: which scanned table (and which of its columns) a column reference
 * reads. A query's `FROM` items are entries of its scope; a subquery's scope has its query's as outer.
 *
 * Rules:
 * - A base table is one scan; the same table twice (a self-join, a CTE read twice: Trino inlines
 *   CTEs) is two scans, each with its own filters.
 * - A derived table (subquery in `FROM`, CTE reference) passes a column through to the base columns
 *   its select list reads (`x`, `t.x AS y`, `*`); a computed output reads none.
 * - Qualified `q.c` binds to the innermost entry named `q` (its alias, else the table's last name
 *   parts). Unqualified `c` binds in the innermost scope with `FROM` items: to its only entry, else
 *   to the one entry known to have `c` (Trino's input columns, a derived table's outputs); where
 *   every entry is known not to have it (a correlated column), to the outer scope; otherwise to none.
 */
import type { Predicate } from "../spark/filters.ts";

/** One table read by the statement, with the filters found on it. */
export interface TextScan {
  table: string;
  filterColumns: string[];
  predicates: Predicate[];
}

/** A base column a reference reads. */
export interface Source {
  scan: TextScan;
  column: string;
}

export interface Entry {
  /** Whether the qualifier `parts` (lower case) names this entry. */
  named(parts: string[]): boolean;
  /** `true`/`false` when the entry is known to have the column (lower case), `undefined` when unknown. */
  has(column: string): boolean | undefined;
  lookup(column: string): Source[];
}

/** A column reference as written: qualifier parts and the name. */
export interface ColumnRef {
  qualifier: string[];
  name: string;
}

export class Scope {
  constructor(
    readonly entries: Entry[],
    readonly outer?: Scope,
  ) {}

  /** The entry `ref` binds to and the base columns it reads; `undefined` when it can't be told. */
  resolve(ref: ColumnRef): { entry: Entry; sources: Source[] } | undefined {
    const name = ref.name.toLowerCase();
    const qualifier = ref.qualifier.map((q) => q.toLowerCase());
    for (let scope: Scope | undefined = this; scope; scope = scope.outer) {
      const entry =
        qualifier.length > 0 ? scope.entries.find((e) => e.named(qualifier)) : scope.unqualified(name);
      if (entry === "outer") continue;
      if (entry) return { entry, sources: entry.lookup(name) };
      if (qualifier.length === 0) return undefined;
    }
    return undefined;
  }

  private unqualified(name: string): Entry | "outer" | undefined {
    if (this.entries.length === 0) return "outer";
    if (this.entries.length === 1) return this.entries[0]?.has(name) === false ? "outer" : this.entries[0];
    const known = this.entries.map((e) => e.has(name));
    const holders = this.entries.filter((_, i) => known[i] === true);
    if (holders.length === 1) return holders[0];
    return known.every((k) => k === false) ? "outer" : undefined;
  }
}

/** An entry for a base table read as one scan; `columns` are its columns where the log lists them. */
export function baseEntry(
  scan: TextScan,
  written: string[],
  alias: string | undefined,
  columns: ReadonlySet<string> | undefined,
  fold: (name: string) => string,
): Entry {
  const full = scan.table.toLowerCase().split(".");
  const parts = written.map((p) => p.toLowerCase());
  return {
    named: (q) =>
      alias !== undefined
        ? q.length === 1 && q[0] === alias.toLowerCase()
        : endsWith(full, q) || endsWith(parts, q),
    has: (c) => columns?.has(c),
    lookup: (c) => [{ scan, column: fold(c) }],
  };
}

/** What a derived table's select list passes through. */
export interface Outputs {
  columns: { name: string; sources: Source[] }[];
  /** Entries whose every column passes through (`*`, `t.*`). */
  stars: Entry[];
}

/** An entry for a subquery in `FROM` or a CTE reference, named by `alias`. */
export function derivedEntry(outputs: Outputs, alias: string | undefined): Entry {
  const byName = new Map<string, Source[]>();
  for (const c of outputs.columns) {
    const key = c.name.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), ...c.sources]);
  }
  const through = (c: string): Entry | undefined => {
    if (outputs.stars.length === 1) return outputs.stars[0];
    const holders = outputs.stars.filter((e) => e.has(c) === true);
    return holders.length === 1 ? holders[0] : undefined;
  };
  return {
    named: (q) => alias !== undefined && q.length === 1 && q[0] === alias.toLowerCase(),
    has: (c) => {
      if (byName.has(c)) return true;
      const known = outputs.stars.map((e) => e.has(c));
      if (known.includes(true)) return true;
      return known.every((k) => k === false) ? false : undefined;
    },
    lookup: (c) => byName.get(c) ?? through(c)?.lookup(c) ?? [],
  };
}

/** An entry whose columns can't be followed (`UNNEST`, `VALUES`, a table function). */
export function opaqueEntry(alias: string | undefined): Entry {
  return {
    named: (q) => alias !== undefined && q.length === 1 && q[0] === alias.toLowerCase(),
    has: () => undefined,
    lookup: () => [],
  };
}

function endsWith(parts: string[], suffix: string[]): boolean {
  if (suffix.length === 0 || suffix.length > parts.length) return false;
  return suffix.every((s, i) => parts[parts.length - suffix.length + i] === s);
}
