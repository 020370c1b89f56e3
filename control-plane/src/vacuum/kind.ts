/**
 * The `vacuum` job kind: the agent lists the files no snapshot needs; its finish hook records them
 * as PENDING_DELETE (`pending-deletions/record.ts`). A table's vacuums never overlap (the same file
 * would be proposed twice). Delta (tombstones, orphans) and Iceberg (snapshot expiry, orphans) tables;
 * Hive tables have no log that says which files are unreferenced (a 422 naming `format`). Of the
 * catalog-linked tables only Delta ones (Unity EXTERNAL tables, whose log is the table) are
 * vacuumed; an Iceberg table committed through Polaris or a metastore is a 409
 * (`policies/actions.ts` says the same of `expire_snapshots`).
 */
import { VACUUM_KIND, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { defineJobKind, tableScope } from "../jobs/kinds.ts";
import { recordVacuumFiles } from "../pending-deletions/record.ts";

export const vacuumKind = defineJobKind({
  kind: VACUUM_KIND,
  label: "vacuum",
  payload: VacuumPayloadSchema,
  needs: (payload) => ({ locations: [payload.uri] }),
  exclusive: { group: VACUUM_KIND, grain: "table", scopes: (payload) => [tableScope(payload.table_id)] },
  precondition: (table) => {
    if (table.format === "hive")
      return {
        status: 422,
        field: "format",
        message: `Table '${table.name}' is a Hive table; vacuum works on Delta and Iceberg tables, whose metadata says which files no snapshot needs (a Hive crunch's old folders are pending deletions already).`,
      };
    // A linked Delta table (a Unity EXTERNAL table) commits to its own log, like one registered by URI.
    if (table.catalogConnectionId && table.format !== "delta")
      return {
        status: 409,
        message: `Table '${table.name}' is a catalog-managed ${table.format} table ('${table.catalogFullName}'): its snapshots expire through its catalog, which is not supported yet; a catalog-linked Delta table can be vacuumed.`,
      };
    if (table.format !== "delta" && table.format !== "iceberg")
      return {
        status: 409,
        message: `Table '${table.name}' is a ${table.format} table; vacuum works on Delta and Iceberg tables, whose metadata says which files no snapshot needs.`,
      };
    return undefined;
  },
  finish: recordVacuumFiles,
  retry: { maxAttempts: 3 },
});
