/**
 * The order a sorted rewrite writes its rows in: a linear sort by the columns in order, or a Z-order
 * (a Morton curve) over 2-4 columns, as SQL that DuckDB runs (no per-row JavaScript).
 *
 * Z-order, in two steps over the rows being sorted together (one sorted write):
 * - Each column gets an order-preserving key of `zorderBits(k)` bits (64 / k, so the Z-value fits a
 *   UBIGINT): its `percent_rank` over those rows, scaled to the key's range. Ranks, not values, so
 *   skewed data, strings and dates spread over the whole key range alike; equal values get equal
 *   keys, and nulls sort after every value (the largest key).
 * - The keys' bits are interleaved, most significant first, the first column's bit leading each
 *   group: rows close in the Z-value are close in every column, so a file's range is narrow in each.
 *
 * Costs: one window sort per Z-order column on top of the final sort, all under the sort's memory.
 *
 * @example
 * sortedSelect("select * from t", { sort_columns: ["a", "b"], sort_layout: "zorder" })
 * // select * exclude (...) from (... percent_rank() over (order by "a" nulls last) ...) order by ...
 */
import type { CrunchSettings, Layout } from "@lakesmith/shared/jobs";
import { sqlIdent } from "./duckdb.ts";

/** What of the settings decides the order: the columns and how they are combined. */
export type SortSettings = Pick<CrunchSettings, "sort_columns" | "sort_layout">;

/** Names of the helper columns a Z-order adds (and removes again before writing). */
const KEY = "__lakesmith_zorder_key";
const ZVALUE = "__lakesmith_zorder_value";

/** Bits of each column's key in a Z-value over `k` columns: the 64 bits of a UBIGINT shared out. */
export function zorderBits(k: number): number {
  return Math.floor(64 / k);
}

/** The settings' order as `linear`/`zorder` with its columns; null when unsorted. */
export function layoutOf(settings: SortSettings): Layout | null {
  if (settings.sort_columns.length === 0) return null;
  return settings.sort_layout === "zorder"
    ? { type: "zorder", columns: [...settings.sort_columns] }
    : { type: "linear", columns: [...settings.sort_columns] };
}

/** The settings' sort fields for `layout` (unsorted without one). */
export function sortSettingsOf(layout: Layout | null): SortSettings {
  if (!layout) return { sort_columns: [] };
  return layout.type === "zorder"
    ? { sort_columns: [...layout.columns], sort_layout: "zorder" }
    : { sort_columns: [...layout.columns] };
}

/**
 * How the order reads in tags and reasons: `zorder(a,b)`, `a,b` for a linear sort, `none`.
 *
 * @example describeSort({ sort_columns: ["a", "b"], sort_layout: "zorder" }) // "zorder(a,b)"
 */
export function describeSort(settings: SortSettings): string {
  const columns = settings.sort_columns.join(",");
  if (!columns) return "none";
  return settings.sort_layout === "zorder" ? `zorder(${columns})` : columns;
}

/** Whether two settings sort the same way (same columns, same layout). */
export function sameSort(a: SortSettings, b: SortSettings): boolean {
  return describeSort(a) === describeSort(b);
}

/** `select` with its rows in the settings' order (unchanged when unsorted). */
export function sortedSelect(select: string, settings: SortSettings): string {
  const columns = settings.sort_columns;
  if (columns.length === 0) return select;
  if (settings.sort_layout !== "zorder") return `${select} order by ${columns.map(sqlIdent).join(", ")}`;
  const bits = zorderBits(columns.length);
  const max = 2 ** bits - 1;
  const keys = columns.map((c, i) => ({
    name: sqlIdent(`${KEY}_${i}`),
    sql: `floor(percent_rank() over (order by ${sqlIdent(c)} nulls last) * ${max})::ubigint`,
  }));
  const helpers = [...keys.map((k) => k.name), sqlIdent(ZVALUE)].join(", ");
  return (
    `select * exclude (${helpers}) from (` +
    `select *, ${interleave(
      keys.map((k) => k.name),
      bits,
    )} as ${sqlIdent(ZVALUE)} from (` +
    `select *, ${keys.map((k) => `${k.sql} as ${k.name}`).join(", ")} from (${select}))) ` +
    `order by ${sqlIdent(ZVALUE)}`
  );
}

/** The Z-value: bit `b` of key `i` (of `k`) goes to bit `b * k + (k - 1 - i)` of a UBIGINT. */
function interleave(keys: readonly string[], bits: number): string {
  const k = keys.length;
  const terms: string[] = [];
  for (let b = bits - 1; b >= 0; b--)
    keys.forEach((key, i) => {
      terms.push(`(((${key} >> ${b}) & 1::ubigint) << ${b * k + (k - 1 - i)})`);
    });
  return `(${terms.join(" | ")})`;
}
