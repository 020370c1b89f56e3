/**
 * Read-only statements kept prepared between calls, keyed by their SQL text.
 *
 * Drizzle's libSQL driver hands every call to `@libsql/client`, which prepares the statement
 * again each time: for the table list's page (one statement with three joins and a JSON build)
 * that was about 0.35 ms of a 3 ms request. Node's embedded database provides this cache on its own
 * read connection (`adapter/node-db.ts`); elsewhere (D1, a remote libSQL) statements go through
 * drizzle as before. Callers keep the drizzle query as the one definition of the statement and
 * run its `toSQL()` text here (`preparedRows`).
 */
import { fillPlaceholders, type SQLWrapper } from "drizzle-orm";

export interface StatementCache {
  /** The rows of a read-only statement, each as an array of column values in select order. */
  rows(sql: string, params: unknown[]): unknown[][];
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
      return cache.rows(sql, fillPlaceholders(params, values)).map((row) => {
        const out: Record<string, unknown> = {};
        fields.forEach((field, i) => {
          out[field] = row[i];
        });
        return out as T;
      });
    },
  };
}
