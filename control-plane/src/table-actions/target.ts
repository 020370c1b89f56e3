/**
 * The table an action or run names: document 2's `catalog_id` and `table_id` (`catalogs/ids.ts`)
 * resolved to the live synced table, its connection's type, and the Lakesmith table linked to it
 * (`tables.catalog_connection_id` + `catalog_full_name`, index `tables_catalog_idx`), if any.
 *
 * - Several Lakesmith tables may link one synced table (`POST /api/v1/tables` allows it); the
 *   oldest is the one actions run on and runs are read from.
 * - The facts `policies/actions.ts` decides by are the ones policies read (`policies/service.ts`):
 *   the synced record's, partitioning refined by an onboarded table's recipe.
 */
import type { CatalogType } from "@lakesmith/shared/catalogs";
import { and, asc, eq, isNull } from "drizzle-orm";
import { type CatalogRef, fullNameOf, parseCatalogId } from "../catalogs/ids.ts";
import type { Db } from "../db/index.ts";
import {
  type CatalogTable,
  catalogConnections,
  catalogTables,
  type LakeTable,
  lakeTables,
} from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import type { ActionFacts } from "../policies/actions.ts";
import { factsOf as policyFacts } from "../policies/service.ts";

export interface ActionTarget {
  catalogId: string;
  tableId: string;
  ref: CatalogRef;
  synced: CatalogTable;
  connectionType: CatalogType;
  connectionName: string;
  /** The Lakesmith table the actions run on; undefined until the first action onboards one. */
  table: LakeTable | undefined;
}

/** Resolves a catalog table; 404 naming what is missing and where to list what exists. */
export async function resolveTarget(db: Db, catalogId: string, tableId: string): Promise<ActionTarget> {
  const ref = parseCatalogId(catalogId);
  const fullName = ref ? fullNameOf(ref, tableId) : undefined;
  const [row] =
    ref && fullName
      ? await db
          .select({
            synced: catalogTables,
            connectionType: catalogConnections.type,
            connectionName: catalogConnections.name,
          })
          .from(catalogTables)
          .innerJoin(catalogConnections, eq(catalogConnections.id, catalogTables.connectionId))
          .where(
            and(
              eq(catalogTables.connectionId, ref.connectionId),
              eq(catalogTables.fullName, fullName),
              eq(catalogTables.catalog, ref.catalog),
              isNull(catalogTables.deletedAt),
            ),
          )
      : [];
  if (!ref || !row)
    throw new ApiError(
      404,
      `Catalog '${catalogId}' has no live table '${tableId}'; GET /api/v1/catalogs lists the catalogs and GET /api/v1/catalogs/{catalog_id}/tables their tables and table_id.`,
    );
  const table = await linkedTable(db, ref.connectionId, row.synced.fullName);
  return { catalogId, tableId, ref, ...row, table };
}

/** The oldest Lakesmith table linked to the synced table, if any. */
export async function linkedTable(
  db: Db,
  connectionId: string,
  fullName: string,
): Promise<LakeTable | undefined> {
  const [table] = await db
    .select()
    .from(lakeTables)
    .where(and(eq(lakeTables.catalogConnectionId, connectionId), eq(lakeTables.catalogFullName, fullName)))
    .orderBy(asc(lakeTables.createdAt), asc(lakeTables.id))
    .limit(1);
  return table;
}

/** What decides the target's actions (`policies/actions.ts`), as policies read them. */
export function factsOf(target: ActionTarget): ActionFacts {
  return policyFacts(target.synced, target.connectionType, target.table?.recipe ?? null);
}
