/**
 * The tables a run of a submission maps the engine's scans to (`QueryLogAnalysisPayload.tables`):
 * every Lakesmith table whose catalog table is not marked deleted, as `OptimusTableRef`s.
 *
 * - `table_fqn`: a catalog-linked table's catalog full name (`catalog_full_name`), else its
 *   Lakesmith name.
 * - `names`: the other spellings an engine may print, each once and never the fqn again: the
 *   synced table's `schema.table` (else the fqn's last two parts), and the Lakesmith name.
 * - `uris`: the table's `uri` (a catalog's `s3a://` already stored as `s3://`).
 * - At most `OPTIMUS_MAX_TABLES`, in name order: the tables beyond (names later in order) are left
 *   out of the run, so their scans count as unmatched (`QueryLogAnalysisResult.unmatched`), and
 *   the control plane logs how many were left out.
 */
import { OPTIMUS_MAX_TABLES, type OptimusTableRef } from "@lakesmith/shared/optimus";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { catalogTables, lakeTables } from "../db/schema.ts";

/** A table as the refs are built from it. */
export interface TableRefRow {
  id: string;
  name: string;
  uri: string;
  catalogFullName: string | null;
  /** The synced table's namespace and name, where the table is linked and its synced row exists. */
  syncedSchema: string | null;
  syncedName: string | null;
}

/** The run's tables, read from the database (one ordered read, capped). */
export async function optimusTableRefs(db: Db, max = OPTIMUS_MAX_TABLES): Promise<OptimusTableRef[]> {
  const rows = await db
    .select({
      id: lakeTables.id,
      name: lakeTables.name,
      uri: lakeTables.uri,
      catalogFullName: lakeTables.catalogFullName,
      syncedSchema: catalogTables.schema,
      syncedName: catalogTables.name,
    })
    .from(lakeTables)
    .leftJoin(
      catalogTables,
      and(
        eq(catalogTables.connectionId, lakeTables.catalogConnectionId),
        eq(catalogTables.fullName, lakeTables.catalogFullName),
      ),
    )
    .where(isNull(lakeTables.catalogTableDeletedAt))
    .orderBy(asc(lakeTables.name))
    .limit(max + 1);
  if (rows.length > max)
    console.warn(
      `[lakesmith] optimus: more than ${max} tables; those after '${rows[max - 1]?.name}' (by name) are not mapped in this run`,
    );
  return rows.slice(0, max).map(tableRef);
}

/**
 * One table's ref.
 *
 * @example tableRef({ id: "tbl_1", name: "orders", uri: "s3://b/orders", catalogFullName: "cat.sales.orders", syncedSchema: "sales", syncedName: "orders" })
 * // { table_fqn: "cat.sales.orders", table_id: "tbl_1", names: ["sales.orders", "orders"], uris: ["s3://b/orders"] }
 */
export function tableRef(row: TableRefRow): OptimusTableRef {
  const fqn = row.catalogFullName ?? row.name;
  const schemaTable =
    row.syncedSchema !== null && row.syncedName !== null
      ? `${row.syncedSchema}.${row.syncedName}`
      : lastTwo(fqn);
  const names = [...new Set([schemaTable, row.name].filter((n): n is string => !!n && n !== fqn))];
  return { table_fqn: fqn, table_id: row.id, names, uris: [row.uri] };
}

/** `schema.table` of a name of three or more parts; null otherwise (the name says no more). */
function lastTwo(name: string): string | null {
  const parts = name.split(".");
  return parts.length > 2 ? parts.slice(-2).join(".") : null;
}
