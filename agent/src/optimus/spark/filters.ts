/**
 * Reads the filter lists a Spark scan node prints (`PartitionFilters`, `PushedFilters`, `DataFilters`)
 * into the columns they reference and the predicates layout can use. Two spellings occur:
 * Catalyst expressions (`isnotnull(d_year#50)`, `(d_year#50 = 2000)`, `(t_minute#146 >= 30)`,
 * `ca_state#9 IN (CA,WA)`, `dynamicpruningexpression(cs_sold_date_sk#769 IN dynamicpruning#918)`),
 * where a column is an attribute `name#id`; and data-source filters (`EqualTo(d_year,2000)`,
 * `GreaterThanOrEqual(t_minute,30)`, `In(ca_state, [CA,WA])`, `IsNotNull(d_year)`), where the column
 * is the first argument. Predicates are only those comparing a column with literals; a comparison
 * between two columns or over a computed value names its columns but yields no predicate.
 */

export type PredicateKind = "equality" | "range" | "in" | "dynamic";

export interface Predicate {
  column: string;
  kind: PredicateKind;
  /** `=`, `<`, `<=`, `>`, `>=`, `in`, or `dynamic` for a runtime (dynamic partition pruning) filter. */
  op: string;
  /** The literal values as the plan prints them (absent for `dynamic`). */
  values: string[];
  /**
   * Whether the predicate sits under an `OR` (`Or(...)`): it then narrows the scan only together
   * with its alternatives, so a replay must not apply it alone.
   */
  disjunctive: boolean;
}

/** The items of a printed list `[a, b(c, d), e]`, split at top-level commas. */
export function splitList(list: string | undefined): string[] {
  if (!list) return [];
  const body = list.trim().replace(/^\[/, "").replace(/\]$/, "");
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      items.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = body.slice(start).trim();
  if (last !== "") items.push(last);
  return items.filter((s) => s !== "" && s !== "...");
}

const ATTRIBUTE = /([A-Za-z_][\w$]*)#\d+L?/g;
const SOURCE_FILTER =
  /\b(EqualTo|EqualNullSafe|GreaterThan|GreaterThanOrEqual|LessThan|LessThanOrEqual|In|IsNull|IsNotNull|StringStartsWith|StringEndsWith|StringContains)\(([^,()[\]]+)/g;

/** The columns an expression references, in first-seen order. */
export function columnsOf(expression: string): string[] {
  const found = new Set<string>();
  for (const [, name = ""] of expression.matchAll(ATTRIBUTE)) if (name !== "dynamicpruning") found.add(name);
  if (found.size === 0)
    for (const [, , name = ""] of expression.matchAll(SOURCE_FILTER)) found.add(unquote(name));
  return [...found];
}

const CATALYST_COMPARE = /\(([A-Za-z_][\w$]*)#\d+L? (=|<=>|<|<=|>|>=) ([^()#]*?)\)/g;
const CATALYST_IN = /([A-Za-z_][\w$]*)#\d+L? IN \(([^()#]*)\)/g;
const CATALYST_DYNAMIC = /([A-Za-z_][\w$]*)#\d+L? IN dynamicpruning#\d+/g;
const SOURCE_COMPARE =
  /\b(EqualTo|EqualNullSafe|GreaterThan|GreaterThanOrEqual|LessThan|LessThanOrEqual)\(([^,()[\]]+),([^()[\]]*)\)/g;
const SOURCE_IN = /\bIn\(([^,()[\]]+), \[([^\]]*)\]\)/g;

const SOURCE_OPS: Record<string, string> = {
  EqualTo: "=",
  EqualNullSafe: "<=>",
  GreaterThan: ">",
  GreaterThanOrEqual: ">=",
  LessThan: "<",
  LessThanOrEqual: "<=",
};

/** The column-versus-literal predicates in one filter expression. */
export function predicatesOf(expression: string): Predicate[] {
  const disjunctive = / OR |\bOr\(/.test(expression);
  return literalPredicates(expression).map((p) => ({ ...p, disjunctive }));
}

function literalPredicates(expression: string): Omit<Predicate, "disjunctive">[] {
  const out: Omit<Predicate, "disjunctive">[] = [];
  for (const [, column = "", op = "", value = ""] of expression.matchAll(CATALYST_COMPARE))
    out.push(compare(column, op, value));
  for (const [, column = "", values = ""] of expression.matchAll(CATALYST_IN))
    out.push(inList(column, values.split(",")));
  for (const [, column = ""] of expression.matchAll(CATALYST_DYNAMIC))
    out.push({ column, kind: "dynamic", op: "dynamic", values: [] });
  for (const [, name = "", column = "", value = ""] of expression.matchAll(SOURCE_COMPARE))
    out.push(compare(unquote(column), SOURCE_OPS[name] ?? "=", value));
  for (const [, column = "", values = ""] of expression.matchAll(SOURCE_IN))
    out.push(inList(unquote(column), values.split(",")));
  return out;
}

function compare(column: string, op: string, value: string): Omit<Predicate, "disjunctive"> {
  const kind = op === "=" || op === "<=>" ? "equality" : "range";
  return { column, kind, op: op === "<=>" ? "=" : op, values: [value.trim()] };
}

function inList(column: string, values: string[]): Omit<Predicate, "disjunctive"> {
  return { column, kind: "in", op: "in", values: values.map((v) => v.trim()).filter((v) => v !== "") };
}

function unquote(name: string): string {
  return name.trim().replace(/^`(.*)`$/, "$1");
}
