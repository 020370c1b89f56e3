/**
 * A scan's filters in the canonical form filter sets are keyed by: the conjunction of the
 * predicates a layout can use, each once, in one order.
 *
 * - Left out: a predicate under an `OR` (it narrows nothing alone), a dynamic (runtime) filter (it
 *   has no literals), and an `IN` list over `OPTIMUS_MAX_IN_VALUES` values. Leaving a conjunct out
 *   only makes a replay skip less, never wrongly.
 * - `<=>` (null-safe equality) against a literal is `=`; an `IN` list's values are sorted and each
 *   kept once; predicates are sorted by column, operator, then values. At most 64 are kept (the
 *   schema's bound), so the key never holds what the part can't.
 */
import type { OptimusPredicate } from "@lakesmith/shared/optimus";
import type { Predicate } from "../spark/filters.ts";

/** The most literals one `IN` predicate keeps (the part schema's bound). */
export const OPTIMUS_MAX_IN_VALUES = 1_000;
const MAX_PREDICATES = 64;

const OPS: Record<string, OptimusPredicate["op"]> = {
  "=": "=",
  "<=>": "=",
  "<": "<",
  "<=": "<=",
  ">": ">",
  ">=": ">=",
  in: "in",
};

/** The canonical conjunction of `predicates` and its key. */
export function canonicalFilters(predicates: readonly Predicate[]): {
  key: string;
  predicates: OptimusPredicate[];
} {
  const kept = new Map<string, OptimusPredicate>();
  for (const p of predicates) {
    const op = OPS[p.op];
    if (p.disjunctive || p.kind === "dynamic" || !op || p.values.length === 0) continue;
    const values = op === "in" ? [...new Set(p.values)].sort() : p.values.slice(0, 1);
    if (values.length > OPTIMUS_MAX_IN_VALUES) continue;
    const predicate = { column: p.column, op, values };
    kept.set(JSON.stringify(predicate), predicate);
  }
  const sorted = [...kept.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_PREDICATES);
  return { key: JSON.stringify(sorted.map(([k]) => k)), predicates: sorted.map(([, p]) => p) };
}
