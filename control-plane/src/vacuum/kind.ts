/**
 * The `vacuum` job kind: the agent lists the files no snapshot needs; its finish hook records them
 * as PENDING_DELETE (`pending-deletions/record.ts`). A table's vacuums never overlap (the same file
 * would be proposed twice). Delta only for now: Iceberg vacuum is not in the agent yet, and Hive
 * tables have no log that says which files are unreferenced.
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
    if (table.format === "iceberg")
      return {
        status: 409,
        message: `Table '${table.name}' is an Iceberg table; Iceberg vacuum (snapshot expiry and orphan removal) is not available in the agent yet. Vacuum works on Delta tables.`,
      };
    if (table.format !== "delta")
      return {
        status: 409,
        message: `Table '${table.name}' is a ${table.format} table; vacuum works on Delta tables, whose log says which files no snapshot needs.`,
      };
    return undefined;
  },
  finish: recordVacuumFiles,
  retry: { maxAttempts: 3 },
});
