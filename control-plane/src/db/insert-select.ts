/**
 * `INSERT INTO <table> (<every column>) SELECT <one expression per column> <rest>`: set-based
 * inserts (one statement for any number of rows, for example from `json_each`) that still go
 * through drizzle's query builder, so a D1 batch binds their parameters (it can't for raw
 * statements). The expressions are keyed by column, so a column added to the table fails to
 * compile here until every caller says what goes into it.
 *
 * @example
 * insertSelect(db, pendingDeletions, { id: sql`...`, ... }, sql`from json_each(${json}) f where true`)
 */
import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./index.ts";

export type ColumnExpressions<T extends SQLiteTable> = { [K in keyof T["_"]["columns"]]: SQL };

export function insertSelect<T extends SQLiteTable>(
  db: Db,
  table: T,
  columns: ColumnExpressions<T>,
  /** FROM and WHERE. Give a WHERE (`where true` at least) when adding ON CONFLICT: SQLite needs it to parse. */
  rest: SQL,
) {
  // drizzle names the columns in declaration order, the order of getTableColumns.
  const expressions = Object.keys(getTableColumns(table)).map(
    (key) => (columns as Record<string, SQL>)[key] as SQL,
  );
  return db.insert(table).select(sql`select ${sql.join(expressions, sql`, `)} ${rest}`);
}
