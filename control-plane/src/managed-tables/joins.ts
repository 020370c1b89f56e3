/**
 * How a managed table's row meets the rows about it, written once for every read that joins them
 * (the list and detail, the engine's due read, the preview, the opportunity checks).
 */
import { and, eq } from "drizzle-orm";
import {
  catalogConnections,
  catalogTables,
  lakeTables,
  managedTables,
  policies,
  policyCatalogs,
} from "../db/schema.ts";

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

/** Its catalog connection. */
export const connectionOf = eq(catalogConnections.id, managedTables.connectionId);

/** The Lakesmith table the engine onboarded for it. */
export const lakeTableOf = eq(lakeTables.id, managedTables.lakeTableId);

/** Its effective policy. */
export const effectivePolicyOf = eq(policies.id, managedTables.policyId);
