/**
 * A candidate layout simulated on the sample (`sample.ts`), in DuckDB: the sample's rows put in the
 * layout's order, cut into `pseudoFiles` stretches of equal rows (row i of R goes to pseudo-file
 * floor(i·N/R)), and each stretch's row count and min/max of the filtered columns brought back as
 * the replay's `FileBounds`. No per-row JavaScript.
 *
 * - The order is exactly the crunch's (`engine/layout.ts` `sortedSelect`: a linear sort, or its
 *   Z-order over percent-rank keys); rows it ties are kept in the files' order (`ORD_COLUMN`), so
 *   a simulation is deterministic. No layout (null) is the files' order itself.
 * - A stretch whose column is all null has no min/max: it is only nulls (`Bounds.onlyNulls`).
 */
import type { Layout } from "@lakesmith/shared/jobs";
import { type Engine, sqlIdent } from "../../engine/duckdb.ts";
import { sortedSelect, sortSettingsOf } from "../../engine/layout.ts";
import { withInsertionOrder } from "../../engine/rewrite.ts";
import type { Bounds, FileBounds } from "./replay.ts";
import { ORD_COLUMN, SAMPLE_TABLE } from "./sample.ts";
import { readValue, type ValueKind } from "./values.ts";

/** The filtered columns and their kinds. */
export type ColumnKinds = ReadonlyMap<string, ValueKind>;

export async function simulateLayout(
  engine: Engine,
  layout: Layout | null,
  columns: ColumnKinds,
  pseudoFiles: number,
  rows: number,
): Promise<FileBounds[]> {
  if (rows === 0) return [];
  // Only the order is materialized (the row's number and the layout's columns); the summaries join back.
  const ord = sqlIdent(ORD_COLUMN);
  const select = `select ${[ord, ...(layout?.columns ?? []).map(sqlIdent)].join(", ")} from ${SAMPLE_TABLE}`;
  // `sortedSelect` ends in its ORDER BY: the files' order breaks its ties.
  const ordered = layout
    ? `${sortedSelect(select, sortSettingsOf(layout))}, ${ord}`
    : `${select} order by ${ord}`;
  await withInsertionOrder(engine, true, () =>
    engine.run(`create or replace temp table optimus_layout as ${ordered}`),
  );
  try {
    const names = [...columns.keys()];
    const aggregates = names.map(
      (c, i) => `, min(s.${sqlIdent(c)})::varchar as min_${i}, max(s.${sqlIdent(c)})::varchar as max_${i}`,
    );
    const summaries = await engine.query<Record<string, string | null>>(
      `select l.pf, count(*)::varchar as n${aggregates.join("")}
       from (select ${ord}, (rowid * ${pseudoFiles}) // ${rows} as pf from optimus_layout) l
       join ${SAMPLE_TABLE} s on l.${ord} = s.${ord} group by l.pf order by l.pf`,
    );
    return summaries.map((s) => {
      const bounds: Record<string, Bounds> = {};
      names.forEach((c, i) => {
        const kind = columns.get(c) as ValueKind;
        const min = s[`min_${i}`] ?? null;
        const max = s[`max_${i}`] ?? null;
        bounds[c] =
          min === null && max === null
            ? { onlyNulls: true }
            : { min: readValue(kind, min), max: readValue(kind, max) };
      });
      return { weight: Number(s.n), columns: bounds };
    });
  } finally {
    await engine.run("drop table if exists optimus_layout");
  }
}

/** Distinct values of each column in the sample. */
export async function distinctCounts(
  engine: Engine,
  columns: readonly string[],
): Promise<Map<string, number>> {
  if (columns.length === 0) return new Map();
  const [row] = await engine.query<Record<string, string | number>>(
    `select ${columns.map((c, i) => `count(distinct ${sqlIdent(c)}) as d_${i}`).join(", ")} from ${SAMPLE_TABLE}`,
  );
  return new Map(columns.map((c, i) => [c, Number(row?.[`d_${i}`] ?? 0)]));
}
