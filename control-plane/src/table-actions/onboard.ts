/**
 * Onboards a catalog table as a Lakesmith table, as `POST /api/v1/tables` with
 * `catalog_connection_id` and `catalog_table` does (same service, same checks), for its first action.
 *
 * - The table is named after the synced `full_name` (characters a table name can't hold become
 *   `_`); a name another table holds gets the connection id appended.
 * - Two first actions racing both try: the loser's name is taken, and it finds the winner's
 *   table by its link.
 * - A synced table the connection can't link (a Unity MANAGED table, a Polaris non-Iceberg one) is
 *   a 422 naming `table_id`, with the reason.
 */
import type { Db } from "../db/index.ts";
import type { LakeTable } from "../db/schema.ts";
import { ApiError, invalidField } from "../http/problem.ts";
import { TableCreateSchema } from "../tables/schemas.ts";
import type { TableService } from "../tables/service.ts";
import { type ActionTarget, linkedTable } from "./target.ts";

const MAX_NAME = 255;

/** The Lakesmith table name for a synced `full_name`. */
export function tableNameOf(fullName: string, suffix = ""): string {
  const name = fullName.replace(/[^A-Za-z0-9_.$-]/g, "_").replace(/^[.$-]/, "_");
  return name.slice(0, MAX_NAME - suffix.length) + suffix;
}

export async function onboardCatalogTable(
  db: Db,
  tables: TableService,
  target: ActionTarget,
  actor: string | null,
): Promise<LakeTable> {
  const { connectionId } = target.ref;
  const fullName = target.synced.fullName;
  for (const suffix of ["", `-${connectionId}`]) {
    const body = TableCreateSchema.parse({
      name: tableNameOf(fullName, suffix),
      catalog_connection_id: connectionId,
      catalog_table: fullName,
    });
    try {
      return await tables.create(body, actor);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 422)
        throw invalidField("table_id", `'${fullName}' can't be onboarded to run actions: ${err.message}`);
      if (err.status !== 409) throw err;
      const winner = await linkedTable(db, connectionId, fullName);
      if (winner) return winner;
    }
  }
  throw new ApiError(
    409,
    `Tables named '${tableNameOf(fullName)}' and '${tableNameOf(fullName, `-${connectionId}`)}' exist already and link other tables; onboard '${fullName}' with POST /api/v1/tables under another name, then trigger the action.`,
  );
}
