/**
 * Which rows a page of the table list holds, found on the index alone, and the list's total.
 *
 * SQLite has no faster way to an offset than to step over the index entries before it (about
 * 50 ns each), so a page's cost grows with its offset. Two things bound that walk:
 * - the walk reads only the (status, name) or name index (it selects rowids, which those indexes
 *   hold), never a table row; the page's rows are then read by rowid;
 * - a page in the back half of the list is walked from the end (`ORDER BY name DESC`), so no walk
 *   is longer than half the matching tables. Its window is computed inside the statement from the
 *   exact total (`table_status_counts`, kept by triggers in the same transaction as every change),
 *   so the page and the count it was cut with always come from one snapshot.
 */
import { desc, type Placeholder, type SQL, sql } from "drizzle-orm";
import { lakeTables, tableStatusCounts } from "../db/schema.ts";
import type { TableFilter } from "./service.ts";

/** The number of tables that match the filter (`where`, by `status`), as a scalar subquery. */
export function totalOf(filter: TableFilter, where: SQL | undefined, status: Placeholder): SQL {
  if (filter.name !== undefined) return sql`(select count(*) from ${lakeTables} where ${where})`;
  if (filter.status)
    return sql`(select ${tableStatusCounts.n} from ${tableStatusCounts} where ${tableStatusCounts.status} = ${status})`;
  return sql`(select sum(${tableStatusCounts.n}) from ${tableStatusCounts})`;
}

/**
 * The rowids of the page `[offset, offset + limit)` by name, as a subquery. With `total` (the
 * scalar `totalOf`), the window is walked from the end of the list.
 */
export function pageRowids(
  where: SQL | undefined,
  offset: Placeholder,
  limit: Placeholder,
  total?: SQL,
): SQL {
  const filtered = sql`select rowid from ${lakeTables} ${where ? sql`where ${where}` : sql``}`;
  if (!total) return sql`(${filtered} order by ${lakeTables.name} limit ${limit} offset ${offset})`;
  // Rows [offset, offset + limit) counted from the front are rows
  // [total - offset - limit, total - offset) counted from the back; LIMIT 0 when offset >= total
  // (a negative LIMIT would mean no limit at all).
  return sql`(${filtered} order by ${desc(lakeTables.name)}
    limit max(0, min(${limit}, ${total} - ${offset})) offset max(0, ${total} - ${offset} - ${limit}))`;
}
