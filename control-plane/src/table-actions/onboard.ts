/**
 * Onboards a catalog table as a Lakesmith table, as `POST /api/v1/tables` with
 * `catalog_connection_id` and `catalog_table` does (same service, same checks), for its first action.
 *
 * - The table is named as the policy engine names the tables it onboards (`lakeTableName`:
 *   `<connection name>.<full name>`), so either finds the other's by name; a name another table
 *   holds gets the connection id appended.
 * - Two first actions racing both try: the loser's name is taken, and it finds the winner's
 *   table by its link.
 * - A synced table the connection can't link (a Unity MANAGED table, a Polaris non-Iceberg one) is
 *   a 422 naming `table_id`, with the reason.
 */
import type { Db } from "../db/index.ts";
import type { LakeTable } from "../db/schema.ts";
import { ApiError, invalidField } from "../http/problem.ts";
import { lakeTableName } from "../policies/engine.ts";
import { TableCreateSchema } from "../tables/schemas.ts";
import type { TableService } from "../tables/service.ts";
import { type ActionTarget, linkedTable } from "./target.ts";

export async function onboardCatalogTable(
  db: Db,
  tables: TableService,
  target: ActionTarget,
  actor: string | null,
): Promise<LakeTable> {
  const { connectionId } = target.ref;
  const fullName = target.synced.fullName;
  const name = lakeTableName(target.connectionName, fullName);
  const names = [name, `${name.slice(0, 254 - connectionId.length)}-${connectionId}`];
  for (const candidate of names) {
    const body = TableCreateSchema.parse({
      name: candidate,
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
    `Tables named '${names.join("' and '")}' exist already and link other tables; onboard '${fullName}' with POST /api/v1/tables under another name, then trigger the action.`,
  );
}
