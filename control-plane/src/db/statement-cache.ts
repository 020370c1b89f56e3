/**
 * Read-only statements kept prepared between calls, keyed by their SQL text.
 *
 * Drizzle's libSQL driver hands every call to `@libsql/client`, which prepares the statement
 * again each time, reads its column names and builds a named row object per row; drizzle itself
 * renders the query's SQL again on every call unless the query was prepared. For a lookup by key
 * or a short list that was most of the request (docs/benchmarks.md). Node's embedded database
 * provides this cache on its own read connection (`adapter/node-db.ts`); elsewhere (D1, a remote
 * libSQL, an in-memory database) statements go through drizzle's own prepared queries.
 *
 * - `preparedSelect(db, query)`: a select built once (values as `sql.placeholder`s), run through
 *   the database's cache when it has one, rows mapped by drizzle exactly as its driver would
 *   (dates, booleans, JSON columns).
 * - Only for reads outside a transaction: the cache's connection sees what is committed, which is
 *   what any other connection of the client sees between transactions. A transaction (`tx`) has no
 *   cache, so its reads stay on its own connection and see its own writes.
 * - Bounded by the code: one prepared statement per distinct SQL text, and callers build their
 *   statements once (placeholders, never values, in the text).
 * - Each call into the driver costs more than a small query itself: a request reads best with one
 *   statement (`get` where one row answers).
 */
import { fillPlaceholders, type Query, type SQLWrapper } from "drizzle-orm";

export interface StatementCache {
  /** The rows of a read-only statement, each as an array of column values in select order. */
  rows(sql: string, params: unknown[]): unknown[][];
  /**
   * Its first row, or undefined: one call into the driver where `rows` makes two (each call, not
   * the row, is most of the cost of a lookup by key).
   */
  row?(sql: string, params: unknown[]): unknown[] | undefined;
  /**
   * The rows of a read made once (its SQL holds values, like a list order built for one filter):
   * prepared, run and let go, never kept, so such reads don't grow the cache.
   */
  once?(sql: string, params: unknown[]): unknown[][];
}

const caches = new WeakMap<object, StatementCache>();

/** Lets `preparedSelect` run the reads of `db` on `cache` (called once, where the app is built). */
export function useStatementCache(db: object, cache: StatementCache): void {
  caches.set(db, cache);
}

/** A select that drizzle has prepared: its SQL, and its own mapping of driver rows. */
interface DrizzlePrepared<T> {
  getQuery(): Query;
  all(values?: Record<string, unknown>): Promise<T[]>;
  mapAllResult(rows: unknown): unknown;
}

/** A select built once and run many times with `values` for its placeholders. */
export interface PreparedSelect<T> {
  all(values?: Record<string, unknown>): Promise<T[]>;
  /** The first row, or undefined (the statement stops there). */
  get(values?: Record<string, unknown>): Promise<T | undefined>;
}

/**
 * Prepares `query` (a select built from `db`, values as placeholders) once. Build it once too,
 * where the service is made or on first use, not per call.
 *
 * @example
 * const byId = preparedSelect(db, db.select().from(users).where(eq(users.id, sql.placeholder("id"))));
 * const user = await byId.get({ id });
 */
export function preparedSelect<T>(db: object, query: { prepare(): DrizzlePrepared<T> }): PreparedSelect<T> {
  const prepared = query.prepare();
  const { sql, params } = prepared.getQuery();
  const all = async (values: Record<string, unknown> = {}): Promise<T[]> => {
    const cache = caches.get(db);
    if (!cache) return prepared.all(values);
    return prepared.mapAllResult(cache.rows(sql, fillPlaceholders(params, values))) as T[];
  };
  const get = async (values: Record<string, unknown> = {}): Promise<T | undefined> => {
    const cache = caches.get(db);
    if (!cache?.row) return (await all(values))[0];
    const row = cache.row(sql, fillPlaceholders(params, values));
    return row ? (prepared.mapAllResult([row]) as T[])[0] : undefined;
  };
  return { all, get };
}

/** A query that drizzle can render (`toSQL`) and run (`all`), like a prepared select. */
interface RenderableQuery<T> extends SQLWrapper {
  toSQL(): { sql: string; params: unknown[] };
  prepare(): { all(values: Record<string, unknown>): Promise<T[]> };
}

/**
 * Runs `query` through `cache` when there is one, else through drizzle's prepared query: rows come
 * back as objects with `fields`' keys either way. Values fill the query's placeholders.
 */
export function preparedRows<T extends Record<string, unknown>>(
  query: RenderableQuery<T>,
  fields: readonly (keyof T & string)[],
  cache: StatementCache | undefined,
): { all(values: Record<string, unknown>): Promise<T[]> } {
  if (!cache) return query.prepare();
  const { sql, params } = query.toSQL();
  return {
    async all(values) {
      return cache.rows(sql, fillPlaceholders(params, values)).map((row) => rowObject<T>(row, fields));
    },
  };
}

/**
 * The first row of a read made once (values in its SQL, see `StatementCache.once`), as an object
 * with `fields`' keys in select order; through the database's own connection where it has no cache.
 */
export async function selectOnce<T extends Record<string, unknown>>(
  db: object,
  query: RenderableQuery<T> & PromiseLike<T[]>,
  fields: readonly (keyof T & string)[],
): Promise<T | undefined> {
  const cache = caches.get(db);
  if (!cache?.once) return (await query)[0];
  const { sql, params } = query.toSQL();
  const [row] = cache.once(sql, params);
  return row ? rowObject<T>(row, fields) : undefined;
}

/** A driver row (values in select order) as an object with `fields`' keys. */
function rowObject<T>(row: readonly unknown[], fields: readonly string[]): T {
  const out: Record<string, unknown> = {};
  fields.forEach((field, i) => {
    out[field] = row[i];
  });
  return out as T;
}
