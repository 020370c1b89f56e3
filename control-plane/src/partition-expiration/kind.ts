/**
 * The `partition_expiration` job kind: delete-only expiration of a Delta table's old date
 * partitions; its finish hook records the removed files as PENDING_DELETE
 * (`pending-deletions/record.ts`). Real runs and dry runs of a table never overlap (each real run
 * commits to the table's log); a validate writes nothing, holds no scope, and so neither waits for
 * one nor holds one back.
 */
import { PARTITION_EXPIRATION_KIND, PartitionExpirationPayloadSchema } from "@lakesmith/shared/maintenance";
import { defineJobKind, tableScope } from "../jobs/kinds.ts";
import { recordExpiredFiles } from "../pending-deletions/record.ts";
import { countExpiredPartitions } from "../savings/rollup.ts";

export const partitionExpirationKind = defineJobKind({
  kind: PARTITION_EXPIRATION_KIND,
  label: "partition expiration",
  payload: PartitionExpirationPayloadSchema,
  needs: (payload) => ({ locations: [payload.uri] }),
  exclusive: {
    group: PARTITION_EXPIRATION_KIND,
    grain: "table",
    scopes: (payload) => (payload.validate ? [] : [tableScope(payload.table_id)]),
  },
  precondition: (table) =>
    table.format === "delta"
      ? undefined
      : {
          status: 422,
          field: "format",
          message: `Table '${table.name}' is ${table.format === "iceberg" ? "an Iceberg" : "a Hive"} table; partition expiration works on Delta tables only (it commits removes to the Delta log).`,
        },
  // The expired files become pending deletions, and the partitions count in the savings rollup.
  finish: (ctx, job, end, ended) => [
    ...recordExpiredFiles(ctx, job, end, ended),
    ...countExpiredPartitions(ctx, job, end, ended),
  ],
  retry: { maxAttempts: 3 },
});
