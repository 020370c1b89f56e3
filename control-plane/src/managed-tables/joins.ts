/**
 * How a managed table's row meets the rows about it, written once for every read that joins them
 * (the list and detail, the engine's due read, the preview).
 */
import { and, eq } from "drizzle-orm";
import { catalogTables, managedTables, policyCatalogs } from "../db/schema.ts";

/** Its synced table (`catalog_tables`, by primary key). */
export const syncedTableOf = and(
  eq(catalogTables.connectionId, managedTables.connectionId),
  eq(catalogTables.fullName, managedTables.fullName),
);

/** Its catalog's resolution state and emergency stop (`policy_catalogs`, by primary key). */
export const catalogStopOf = and(
  eq(policyCatalogs.connectionId, managedTables.connectionId),
  eq(policyCatalogs.catalog, managedTables.catalog),
);
