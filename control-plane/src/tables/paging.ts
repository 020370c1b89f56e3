/**
 * Which rows a page of the table list holds, found on the index alone, and the list's total.
 *
 * SQLite has no faster way to an offset than to step over the index entries before it (about
 * 50 ns each), so a page's cost grows with its offset. Three things bound that walk:
 * - the walk reads only the (status, name) or name index (it selects rowids, which those indexes
 *   hold), never a table row; the page's rows are then read by rowid;
 * - a deep page starts from a bookmark, the name at a known position (`bookmarks.ts`), and steps
 *   over fewer than `BOOKMARK_STRIDE` entries from there;
 * - without a bookmark yet, a page in the back half of the list is walked from the end
 *   (`ORDER BY name DESC`), so no walk is longer than half the matching tables. Its window is
 *   computed inside the statement from the exact total (`table_status_counts`, kept by triggers in
 *   the same transaction as every change), so the page and the count it was cut with always come
 *   from one snapshot.
 */
import { and, desc, gte, type Placeholder, type SQL, sql } from "drizzle-orm";
import { lakeTables, type OnboardingStatus, tableStatusCounts } from "../db/schema.ts";

/** What a table list is filtered by. */
export interface TableFilter {
  status?: OnboardingStatus | undefined;
  name?: string | undefined;
}

/** The number of tables that match the filter (`where`, by `status`), as a scalar subquery. */
export function totalOf(filter: TableFilter, where: SQL | undefined, status: Placeholder): SQL {
  if (filter.name !== undefined) return sql`(select count(*) from ${lakeTables} where ${where})`;
  if (filter.status)
    return sql`(select ${tableStatusCounts.n} from ${tableStatusCounts} where ${tableStatusCounts.status} = ${status})`;
  return sql`(select sum(${tableStatusCounts.n}) from ${tableStatusCounts})`;
}

/**
 * The list's generation (see `bookmarks.ts`), as a scalar subquery: that of the filter's status,
 * or for all tables the sum over statuses, which goes up whenever any of them does.
 */
export function generationOf(filter: TableFilter, status: Placeholder): SQL {
  if (filter.status)
    return sql`(select ${tableStatusCounts.generation} from ${tableStatusCounts} where ${tableStatusCounts.status} = ${status})`;
  return sql`(select sum(${tableStatusCounts.generation}) from ${tableStatusCounts})`;
}

/**
 * The name at position `skip` of the list, counted from its start, or with `fromEnd` from its end,
 * as a scalar subquery: one walk of the index to find a bookmark.
 */
export function nameAt(where: SQL | undefined, skip: Placeholder, fromEnd: boolean): SQL {
  const order = fromEnd ? desc(lakeTables.name) : lakeTables.name;
  return sql`(select ${lakeTables.name} from ${lakeTables} ${where ? sql`where ${where}` : sql``}
    order by ${order} limit 1 offset ${skip})`;
}

/**
 * The rowids of the page `[offset, offset + limit)` by name, as a subquery. With `from` (a
 * bookmark's name), `offset` counts from that name on; with `total` (the scalar `totalOf`), the
 * window is walked from the end of the list.
 */
export function pageRowids(
  where: SQL | undefined,
  offset: Placeholder,
  limit: Placeholder,
  window: { total?: SQL; from?: Placeholder } = {},
): SQL {
  const { total, from } = window;
  const conditions = and(where, from ? gte(lakeTables.name, from) : undefined);
  const filtered = sql`select rowid from ${lakeTables} ${conditions ? sql`where ${conditions}` : sql``}`;
  if (!total) return sql`(${filtered} order by ${lakeTables.name} limit ${limit} offset ${offset})`;
  // Rows [offset, offset + limit) counted from the front are rows
  // [total - offset - limit, total - offset) counted from the back; LIMIT 0 when offset >= total
  // (a negative LIMIT would mean no limit at all).
  return sql`(${filtered} order by ${desc(lakeTables.name)}
    limit max(0, min(${limit}, ${total} - ${offset})) offset max(0, ${total} - ${offset} - ${limit}))`;
}
