/**
 * Pieces of SQL that write JSON text the way the API's wire forms do, for views that SQLite builds
 * whole (`tables/view.ts`, `users/view.ts`): reading one text per page instead of every column of
 * every row was most of a list request's time with the libSQL driver.
 */
import { type AnyColumn, type SQL, type SQLWrapper, sql } from "drizzle-orm";

/**
 * Epoch milliseconds as `Date.toISOString()` writes them (text, not JSON), or null. `datetime`
 * with `subsec` writes the same digits as `strftime('%Y-%m-%dT%H:%M:%fZ', ...)` at about half the
 * cost; migration 0005 writes `wire`'s timestamps the same way.
 */
export const isoText = (ms: AnyColumn): SQL =>
  sql`replace(datetime(${ms} / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'`;

/** The same as a JSON string, or `null`. */
export const isoJson = (ms: AnyColumn): SQL => sql`json_quote(${isoText(ms)})`;

/** A JSON array of the `items` (each JSON text) in the order the rows come. */
export const jsonArrayOf = (items: SQLWrapper): SQL<string> =>
  sql<string>`'[' || coalesce(group_concat(${items}, ','), '') || ']'`;
