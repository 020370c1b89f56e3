/**
 * The one database interface the control plane is written against: drizzle's async SQLite dialect
 * plus `batch`, which both libSQL and D1 implement. Which driver backs it is decided in the entry
 * files (`node.ts`, `worker.ts`) only.
 */
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type * as schema from "./schema.ts";

export type Schema = typeof schema;

export type Db = BaseSQLiteDatabase<"async", unknown, Schema> & {
  batch: LibSQLDatabase<Schema>["batch"];
};

export * as tables from "./schema.ts";
