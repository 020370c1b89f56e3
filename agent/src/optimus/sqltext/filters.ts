/**
 * The tables a SQL query reads and the filters on each, from its text: the shared core of the Trino
 * and SQL-log readers. Input is a parsed query (`grammar.ts`); output is one `TextScan` per table
 * read (`scope.ts` says when a table counts twice).
 *
 * Rules:
 * - Filters are the `WHERE` of every query block (subqueries, CTEs, set-operation branches) and the
 *   join conditions (`ON`, `USING`); `HAVING` filters groups, not scans, and is not read.
 * - Predicates: `=`, `<`, `<=`, `>`, `>=`, `IN (…)` and `BETWEEN a AND b` (as `>=` and `<=`) between a
 *   column and literals (`literals.ts`), either side (`5 > c` is `c < 5`). One under an `OR` is
 *   `disjunctive`. `NOT`, `<>`, `LIKE`, `IS NULL`, functions of columns, comparisons of two columns:
 *   their columns are filter columns, without a predicate.
 * - A join condition narrows only the side it may drop rows of: every table for an inner or cross
 *   join, the joined table for `LEFT`, the tables before it for `RIGHT`, none for `FULL`; other
 *   sides get the columns only.
 * - A filter on a derived table's column lands on the base column it passes through; a column that
 *   can't be resolved to a table (ambiguous, computed) is left out.
 */
import type { Predicate } from "../spark/filters.ts";
import { isNode, type ParsedQuery, type SqlNode } from "./grammar.ts";
import { literalOf, literalsOf } from "./literals.ts";
import {
  baseEntry,
  type ColumnRef,
  derivedEntry,
  type Entry,
  type Outputs,
  opaqueEntry,
  Scope,
  type Source,
  type TextScan,
} from "./scope.ts";

export interface TextFilterOptions {
  /** Defaults for names written without catalog or schema (Trino's session catalog and schema). */
  catalog?: string;
  schema?: string;
  /** Whether names are case-insensitive and reported in lower case (Trino's identifiers). */
  lowerCase: boolean;
  /** The columns of a table (`catalog.schema.table`, lower case), where the log lists them. */
  columnsOf?(table: string): ReadonlySet<string> | undefined;
}

interface Cte {
  select: SqlNode;
  /** The names `WITH name (a, b) AS …` gives its outputs, in order (none: the select list's). */
  columns: string[];
  /** The CTEs its body sees: those defined before it. */
  visible: Map<string, Cte>;
}

const FLIP: Record<string, string> = { "=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

/** Every table `select` reads, each with the columns and predicates its filters put on it. */
export function textScans(statement: ParsedQuery, options: TextFilterOptions): TextScan[] {
  const walk = new Walk(options, statement.grammar !== "mysql");
  walk.query(statement.select, undefined, new Map());
  return walk.scans;
}

class Walk {
  readonly scans: TextScan[] = [];
  private readonly fold: (name: string) => string;
  /**
   * @param quotedNames whether `"x"` is a name (Trino, PostgreSQL; MySQL reads it as a string):
   *   the Trino grammar returns a quoted name in an expression as a string node.
   */
  constructor(
    private readonly options: TextFilterOptions,
    private readonly quotedNames: boolean,
  ) {
    this.fold = options.lowerCase ? (n) => n.toLowerCase() : (n) => n;
  }

  /** Walks a query (with its CTEs and set-operation branches); returns what its select list passes on. */
  query(select: SqlNode, outer: Scope | undefined, ctes: Map<string, Cte>): Outputs {
    const visible = new Map(ctes);
    for (const w of asArray(select.with)) {
      const name = nameOf(w.name);
      const body = subquery(w.stmt);
      const columns = asArray(w.columns).map((c) => columnRef(c, true)?.name ?? "");
      if (name && body) visible.set(name.toLowerCase(), { select: body, columns, visible: new Map(visible) });
    }
    const outputs = this.block(select, outer, visible);
    for (let next = select._next; isNode(next); next = next._next) {
      const branch = this.block(next, outer, visible);
      for (const [i, c] of branch.columns.entries()) outputs.columns[i]?.sources.push(...c.sources);
      outputs.stars.push(...branch.stars);
    }
    return outputs;
  }

  private block(select: SqlNode, outer: Scope | undefined, ctes: Map<string, Cte>): Outputs {
    const items = asArray(select.from);
    const entries = items.map((item) => this.entry(item, outer, ctes));
    const scope = new Scope(entries, outer);
    const context = { scope, ctes };
    this.filter(select.where, context, () => true, false);
    items.forEach((item, i) => {
      const join = String(item.join ?? "").toUpperCase();
      const narrows = (e: Entry) =>
        join.startsWith("FULL")
          ? false
          : join.startsWith("LEFT")
            ? e === entries[i]
            : join.startsWith("RIGHT")
              ? entries.indexOf(e) < i
              : true;
      this.filter(item.on, context, narrows, false);
      for (const u of asArray(item.using)) this.using(nameOf(u) ?? "", entries.slice(0, i + 1));
    });
    for (const part of [select.columns, select.groupby, select.having, select.orderby])
      this.expression(part, context, false);
    return this.outputs(select, scope);
  }

  private entry(item: SqlNode, outer: Scope | undefined, ctes: Map<string, Cte>): Entry {
    const alias = typeof item.as === "string" ? item.as : undefined;
    const body = subquery(item.expr);
    if (body) return derivedEntry(this.query(body, outer, ctes), alias);
    if (typeof item.table !== "string") return opaqueEntry(alias);
    const written = [item.db, item.schema, item.table].filter(
      (p): p is string => typeof p === "string" && p !== "",
    );
    const cte = written.length === 1 ? ctes.get(item.table.toLowerCase()) : undefined;
    if (cte)
      return derivedEntry(
        renamed(this.query(cte.select, outer, cte.visible), cte.columns),
        alias ?? item.table,
      );
    const table = this.tableName(written);
    const scan: TextScan = { table, filterColumns: [], predicates: [] };
    this.scans.push(scan);
    return baseEntry(scan, written, alias, this.options.columnsOf?.(table.toLowerCase()), this.fold);
  }

  /** `catalog.schema.table`, completed from the defaults where the text leaves parts out. */
  private tableName(written: string[]): string {
    const { catalog, schema } = this.options;
    const defaults = written.length === 1 ? [catalog, schema] : written.length === 2 ? [catalog] : [];
    if (defaults.some((d) => d === undefined)) return written.map(this.fold).join(".");
    return [...(defaults as string[]), ...written].map(this.fold).join(".");
  }

  private outputs(select: SqlNode, scope: Scope): Outputs {
    const out: Outputs = { columns: [], stars: [] };
    for (const item of asArray(select.columns)) {
      const ref = columnRef(item.expr, this.quotedNames);
      if (ref?.name === "*") {
        if (ref.qualifier.length === 0) out.stars.push(...scope.entries);
        else {
          const q = ref.qualifier.map((p) => p.toLowerCase());
          const entry = scope.entries.find((e) => e.named(q));
          if (entry) out.stars.push(entry);
        }
        continue;
      }
      const alias = typeof item.as === "string" ? item.as : undefined;
      const name = alias ?? ref?.name;
      out.columns.push({ name: name ?? "", sources: ref ? (scope.resolve(ref)?.sources ?? []) : [] });
    }
    return out;
  }

  /** Finds the column references and predicates of one filter expression. */
  private filter(node: unknown, context: Context, narrows: (e: Entry) => boolean, underOr: boolean): void {
    if (!isNode(node)) return;
    const op = typeof node.operator === "string" ? node.operator.toUpperCase() : "";
    if (node.type !== "binary_expr") {
      this.expression(node, context, true);
      return;
    }
    if (op === "AND" || op === "OR") {
      this.filter(node.left, context, narrows, underOr || op === "OR");
      this.filter(node.right, context, narrows, underOr || op === "OR");
      return;
    }
    const comparison = comparisonOf(node, op, this.quotedNames);
    if (!comparison) {
      this.expression(node, context, true);
      return;
    }
    const resolved = context.scope.resolve(comparison.column);
    if (!resolved) return;
    for (const source of resolved.sources) {
      mentionColumn(source);
      if (!narrows(resolved.entry)) continue;
      for (const p of comparison.made) addPredicate(source, { ...p, disjunctive: underOr });
    }
  }

  /**
   * Walks an expression: its subqueries as queries (their own filters count) and, with `columns`
   * (filters, not a select list or `GROUP BY`), its column references as filter columns.
   */
  private expression(node: unknown, context: Context, columns: boolean): void {
    if (Array.isArray(node)) {
      for (const n of node) this.expression(n, context, columns);
      return;
    }
    if (!isNode(node) || node.type === "lambda") return;
    const body = subquery(node);
    if (body) {
      this.query(body, context.scope, context.ctes);
      return;
    }
    const ref = columnRef(node, this.quotedNames);
    if (ref) {
      if (columns && ref.name !== "*")
        for (const s of context.scope.resolve(ref)?.sources ?? []) mentionColumn(s);
      return;
    }
    for (const value of Object.values(node)) this.expression(value, context, columns);
  }

  /** `USING (c)`: `c` is a filter column of every joined entry that reads it. */
  private using(name: string, entries: Entry[]): void {
    const c = name.toLowerCase();
    for (const e of entries) if (e.has(c) !== false) for (const s of e.lookup(c)) mentionColumn(s);
  }
}

/** A column-versus-literal comparison's predicates, or `undefined` when `node` isn't one. */
function comparisonOf(node: SqlNode, op: string, quotedNames: boolean) {
  let column = columnRef(node.left, quotedNames);
  let literal: unknown = node.right;
  let operator = op;
  if (!column && op in FLIP) {
    column = columnRef(node.right, quotedNames);
    literal = node.left;
    operator = FLIP[op] ?? op;
  }
  if (!column || column.name === "*") return undefined;
  let made: Omit<Predicate, "column" | "disjunctive">[] | undefined;
  if (operator in FLIP) {
    const value = literalOf(literal);
    if (value !== undefined)
      made = [{ kind: operator === "=" ? "equality" : "range", op: operator, values: [value] }];
  } else if (operator === "IN") {
    const values = literalsOf(literal);
    if (values && values.length > 0) made = [{ kind: "in", op: "in", values }];
  } else if (operator === "BETWEEN") {
    const [low, high, ...rest] = literalsOf(literal) ?? [];
    if (low !== undefined && high !== undefined && rest.length === 0)
      made = [
        { kind: "range", op: ">=", values: [low] },
        { kind: "range", op: "<=", values: [high] },
      ];
  }
  return made ? { column, made } : undefined;
}

/** `outputs` with the first columns renamed to `names` (a CTE's column list). */
function renamed(outputs: Outputs, names: string[]): Outputs {
  if (names.length === 0) return outputs;
  return { ...outputs, columns: outputs.columns.map((c, i) => ({ ...c, name: names[i] ?? c.name })) };
}

interface Context {
  scope: Scope;
  ctes: Map<string, Cte>;
}

function mentionColumn(source: Source): void {
  if (!source.scan.filterColumns.includes(source.column)) source.scan.filterColumns.push(source.column);
}

function addPredicate(source: Source, p: Omit<Predicate, "column">): void {
  const predicate: Predicate = { column: source.column, ...p };
  const key = JSON.stringify(predicate);
  if (!source.scan.predicates.some((q) => JSON.stringify(q) === key)) source.scan.predicates.push(predicate);
}

/** The query a node wraps (`(SELECT …)` in `FROM`, `IN`, `EXISTS`, a CTE body), if it is one. */
function subquery(node: unknown): SqlNode | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === "select") return node;
  if (isNode(node.ast) && node.ast.type === "select") return node.ast;
  return undefined;
}

/** A column reference's qualifier and name, across the grammars' shapes. */
export function columnRef(node: unknown, quotedNames: boolean): ColumnRef | undefined {
  if (!isNode(node)) return undefined;
  if (quotedNames && node.type === "double_quote_string" && typeof node.value === "string")
    return { qualifier: [], name: node.value };
  if (node.type !== "column_ref") return undefined;
  const name = nameOf(node.column);
  if (name === undefined) return undefined;
  const qualifier = [node.db, node.schema, node.table].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return { qualifier, name };
}

/** An identifier's text: a string, `{ value }` or `{ expr: { value } }`. */
function nameOf(node: unknown): string | undefined {
  if (typeof node === "string") return node;
  if (!isNode(node)) return undefined;
  if (typeof node.value === "string") return node.value;
  return nameOf(node.expr);
}

function asArray(value: unknown): SqlNode[] {
  return Array.isArray(value) ? value.filter(isNode) : [];
}
