/**
 * Parses one SQL statement of a query log into node-sql-parser's AST.
 *
 * Why node-sql-parser (5.4.0, pinned): the most used SQL parser on npm, pure JavaScript (no native or
 * WebAssembly build), with one grammar per dialect shipped as its own small build, among them a
 * Trino grammar that reads Trino's literals (`DATE '…'`, `TIMESTAMP '…'`), lambdas, `TRY_CAST`,
 * `UNNEST` and three-part names. Its AST marks parenthesized expressions, which the repair below needs.
 *
 * Rules:
 * - Grammars are tried in the order given; the first that parses wins (the Trino grammar has no
 *   `EXISTS`, so `postgresql` follows it; SQL logs also try `mysql` for backquoted names).
 * - AND/OR precedence is repaired: the 5.4.0 grammars give AND and OR the same precedence (Trino's
 *   right-associative, PostgreSQL's and MySQL's left-associative), so `a AND b OR c` can come back as
 *   `a AND (b OR c)`. Every unparenthesized AND/OR chain is flattened in source order and regrouped
 *   with AND binding tighter, which is also a no-op on a tree that was already right.
 * - Only a query (`SELECT`, `WITH … SELECT`, set operations) is a statement to analyse; inserts,
 *   CTAS, DDL, `EXPLAIN` and the rest are `other`. Of several statements, the first query counts.
 * - Logs repeat statements (dashboards, schedules): the last `CACHED` distinct statements up to
 *   `CACHED_LENGTH` characters keep their parse (callers only read the AST, never change it); an AST
 *   is about 30 times its text, so the cache stays near 30 MiB at most.
 */
import mysql from "node-sql-parser/build/mysql.js";
import postgresql from "node-sql-parser/build/postgresql.js";
import trino from "node-sql-parser/build/trino.js";

export type Grammar = "trino" | "postgresql" | "mysql";

/** A node of node-sql-parser's AST, read loosely: its shape differs a little per grammar. */
export type SqlNode = { [key: string]: unknown };

/** A query and the grammar that parsed it. */
export interface ParsedQuery {
  kind: "select";
  select: SqlNode;
  grammar: Grammar;
}

export type ParsedStatement = ParsedQuery | { kind: "other" } | { kind: "unparseable"; error: string };

const PARSERS: Record<Grammar, { astify(sql: string, options: { database: string }): unknown }> = {
  trino: new trino.Parser(),
  postgresql: new postgresql.Parser(),
  mysql: new mysql.Parser(),
};

const CACHED = 128;
const CACHED_LENGTH = 8192;
const cache = new Map<string, ParsedStatement>();

/** The statement's AST (the first query of the text), trying `grammars` in order. */
export function parseStatement(sql: string, grammars: readonly Grammar[]): ParsedStatement {
  if (sql.length > CACHED_LENGTH) return parse(sql, grammars);
  const key = `${grammars.join(",")}\n${sql}`;
  const parsed = cache.get(key) ?? parse(sql, grammars);
  cache.delete(key);
  cache.set(key, parsed);
  if (cache.size > CACHED) cache.delete(cache.keys().next().value as string);
  return parsed;
}

function parse(sql: string, grammars: readonly Grammar[]): ParsedStatement {
  let error = "no grammar given";
  for (const grammar of grammars) {
    let ast: unknown;
    try {
      ast = PARSERS[grammar].astify(sql, { database: grammar });
    } catch (e) {
      error = `${grammar}: ${e instanceof Error ? e.message : String(e)}`;
      continue;
    }
    const statements = (Array.isArray(ast) ? ast : [ast]).filter(isNode);
    const select = statements.find((s) => s.type === "select");
    if (!select) return { kind: "other" };
    return { kind: "select", select: regroup(select) as SqlNode, grammar };
  }
  return { kind: "unparseable", error };
}

export function isNode(value: unknown): value is SqlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isLogical(node: SqlNode): boolean {
  const op = typeof node.operator === "string" ? node.operator.toUpperCase() : "";
  return node.type === "binary_expr" && (op === "AND" || op === "OR");
}

/** A copy of `value` with every AND/OR chain regrouped by SQL precedence. */
function regroup(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(regroup);
  if (!isNode(value)) return value;
  if (isLogical(value)) {
    const operands: unknown[] = [];
    const ops: string[] = [];
    flatten(value, operands, ops, true);
    return rebuild(operands.map(regroup), ops, value.parentheses === true);
  }
  const out: SqlNode = {};
  for (const [k, v] of Object.entries(value)) out[k] = regroup(v);
  return out;
}

/** The operands and operators of an unparenthesized AND/OR chain, in source order. */
function flatten(node: unknown, operands: unknown[], ops: string[], top: boolean): void {
  if (isNode(node) && isLogical(node) && (top || node.parentheses !== true)) {
    flatten(node.left, operands, ops, false);
    ops.push(String(node.operator).toUpperCase());
    flatten(node.right, operands, ops, false);
    return;
  }
  operands.push(node);
}

function rebuild(operands: unknown[], ops: string[], parentheses: boolean): SqlNode {
  const groups: unknown[][] = [[operands[0]]];
  ops.forEach((op, i) => {
    if (op === "OR") groups.push([operands[i + 1]]);
    else groups[groups.length - 1]?.push(operands[i + 1]);
  });
  const chain = (items: unknown[], operator: string) =>
    items.reduce((left, right) => ({ type: "binary_expr", operator, left, right }));
  const tree = chain(
    groups.map((g) => chain(g, "AND")),
    "OR",
  ) as SqlNode;
  return parentheses ? { ...tree, parentheses: true } : tree;
}
