/**
 * The layouts a scoring simulates besides the current one, from the workload's most filtered
 * columns. Pure.
 *
 * - Top columns: the (at most `MAX_TOP_COLUMNS`) columns with usable predicates, most filtered
 *   first (`workload.ts`).
 * - A linear sort on each top column that is not low-cardinality; compound linear sorts on the top
 *   2 and top 3; Z-orders over the top 2, 3 and 4. At most 10, in that order, none equal to the
 *   current layout (which is scored as the current).
 * - Low cardinality: a column with no more distinct values in the sample than there are
 *   pseudo-files. Sorted by it alone, files would hold about one value each (a partitioning, which
 *   is the partitions' job) and rows within a value would keep no order, so it is never a candidate
 *   alone; it may lead a compound sort or join a Z-order.
 */
import type { Layout } from "@lakesmith/shared/jobs";
import { describeSort, sortSettingsOf } from "../../engine/layout.ts";

export const MAX_TOP_COLUMNS = 5;

/** Whether a column with `distinct` values in the sample is low-cardinality for `pseudoFiles`. */
export function isLowCardinality(distinct: number, pseudoFiles: number): boolean {
  return distinct <= pseudoFiles;
}

/** How a layout reads in reasons and tags: `zorder(a,b)`, `a,b`, `none`. */
export function describeLayout(layout: Layout | null): string {
  return describeSort(sortSettingsOf(layout));
}

export function candidateLayouts(
  top: readonly string[],
  lowCardinality: ReadonlySet<string>,
  current: Layout | null,
): Layout[] {
  const columns = top.slice(0, MAX_TOP_COLUMNS);
  const layouts: Layout[] = columns
    .filter((c) => !lowCardinality.has(c))
    .map((c) => ({ type: "linear", columns: [c] }));
  for (const k of [2, 3])
    if (columns.length >= k) layouts.push({ type: "linear", columns: columns.slice(0, k) });
  for (const k of [2, 3, 4])
    if (columns.length >= k) layouts.push({ type: "zorder", columns: columns.slice(0, k) });
  const currentSort = describeLayout(current);
  return layouts.filter((l) => describeLayout(l) !== currentSort);
}
