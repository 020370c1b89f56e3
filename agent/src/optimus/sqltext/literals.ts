/**
 * The literal a predicate can compare a column with, read from node-sql-parser's AST and printed the
 * way the Spark reader prints plan literals: numbers as written, strings and `DATE '…'`/`TIMESTAMP
 * '…'` literals as their text without quotes, booleans as `true`/`false`, `CAST(literal AS type)` as
 * the literal. `NULL`, parameters (`?`) and anything computed are not literals.
 */
import { isNode, type SqlNode } from "./grammar.ts";

const TEXT = new Set([
  "single_quote_string",
  "string",
  "natural_string",
  "date",
  "time",
  "timestamp",
  "datetime",
]);

/** The literal `node` stands for, or `undefined` when it is not one. */
export function literalOf(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  const type = String(node.type);
  const value = node.value;
  if (type === "number" || type === "bigint")
    return typeof value === "number" || typeof value === "string" ? String(value) : undefined;
  if (type === "bool" || type === "boolean") return value === true || value === "TRUE" ? "true" : "false";
  if (TEXT.has(type) && typeof value === "string") return value.replaceAll("''", "'");
  if (type === "cast") return literalOf(node.expr);
  if (type === "unary_expr" && node.operator === "-") {
    const inner = literalOf(node.expr);
    return inner === undefined ? undefined : inner.startsWith("-") ? inner.slice(1) : `-${inner}`;
  }
  return undefined;
}

/** The literals of a list node (`IN (…)`, `BETWEEN`'s bounds), or `undefined` unless all are literals. */
export function literalsOf(list: unknown): string[] | undefined {
  if (!isNode(list) || list.type !== "expr_list" || !Array.isArray(list.value)) return undefined;
  const out: string[] = [];
  for (const item of list.value as SqlNode[]) {
    const literal = literalOf(item);
    if (literal === undefined) return undefined;
    out.push(literal);
  }
  return out;
}
