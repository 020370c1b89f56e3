/** Wire shapes of tables and their inventory history (document 1, "Table"). */
import { z } from "@hono/zod-openapi";
import {
  type inventoryHistory,
  ONBOARDING_STATUSES,
  PRIORITIES,
  SCHEDULE_JOB_TYPES,
  TABLE_FORMATS,
} from "../db/schema.ts";
import { ScheduleSchema } from "../schedules/schemas.ts";

/**
 * `<scheme>://<bucket>/<path>`: a lower-case scheme, a bucket (or account/container) and a
 * non-empty path. `file:///<path>` (no bucket) is the one exception, for local tables.
 */
export const TABLE_URI_PATTERN = /^(?:[a-z][a-z0-9]*:\/\/[^/\s?#]+|file:\/)\/[^\s?#]*[^\s?#/][^\s?#]*$/;

const UriSchema = z
  .string()
  .max(2048)
  .regex(TABLE_URI_PATTERN, "must have the shape <scheme>://<bucket>/<path>, e.g. s3://lake/sales/orders")
  .openapi({ example: "s3://lake/sales/orders" });

export const TABLE_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.$-]{0,254}$/;

const NameSchema = z
  .string()
  .regex(
    TABLE_NAME_PATTERN,
    "1-255 characters: letters, digits, '_', '.', '$' or '-', not starting with '.', '$' or '-'",
  )
  .openapi({ example: "sales.orders", description: "Unique among tables; a duplicate gives 409." });

const PrioritySchema = z.enum(PRIORITIES).openapi({
  description: "P1 jobs are handed to agents before P2 jobs.",
});
const TargetFileSizeSchema = z
  .number()
  .int()
  .min(1)
  .max(10_240)
  .openapi({ description: "Target file size of crunch output, in MB (1 to 10,240).", example: 512 });
const InventoryUriSchema = UriSchema.nullable().openapi({
  description:
    "Object-store inventory report of the table's bucket; every change is kept in the inventory history.",
  example: "s3://lake-inventory/sales/orders/manifest.json",
});

export const RecipeSchema = z
  .object({
    partition_columns: z.array(z.string()),
    partition_pattern: z.string().nullable(),
    date_filter_column: z.string().nullable(),
    cluster_columns: z.array(z.string()),
    enumerated_columns: z.array(z.string()),
  })
  .openapi("OnboardingRecipe", { description: "What onboarding discovered about the table." });

const PARQUET_V2 =
  "Whether crunch may write Parquet v2 data pages and encodings (DELTA_BINARY_PACKED and the like): often smaller files, but only for tables whose every reader accepts them (for example Spark 3, Trino, DuckDB; not older Hive or Impala). Crunch then tries v2 on its sample and keeps it only where it measures better. Default false.";

export const TableSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    uri: z.string(),
    format: z.enum(TABLE_FORMATS),
    priority: z.enum(PRIORITIES),
    target_file_size_mb: z.number().int(),
    parquet_v2: z.boolean().openapi({ description: PARQUET_V2 }),
    inventory_report_uri: z.string().nullable(),
    catalog_connection_id: z.string().nullable().openapi({
      description:
        "The catalog connection the table was onboarded through; null for a table registered by its URI.",
    }),
    catalog_table: z.string().nullable().openapi({
      description: "The synced table (`full_name`) it is linked to; null for a table registered by its URI.",
    }),
    catalog_table_deleted: z.boolean().openapi({
      description:
        "True once a catalog sync no longer reported the linked table: its schedules were disabled and its jobs are refused (409); nothing was deleted. False for plain tables.",
    }),
    onboarding_status: z.enum(ONBOARDING_STATUSES).openapi({
      description:
        "pending (inspection queued or running), active (schedules may be created), failed (see onboarding_error; POST /api/v1/onboarding/{table_id}/retry), retry (inspection queued again).",
    }),
    onboarding_error: z
      .string()
      .nullable()
      .openapi({ description: "Why onboarding failed; null otherwise." }),
    onboarding_job_id: z.string().nullable().openapi({ description: "The latest onboarding job." }),
    recipe: RecipeSchema.nullable().openapi({
      description: "What onboarding found; null until it is active.",
    }),
    onboarded_at: z.string().nullable(),
    schedule: z
      .object(
        Object.fromEntries(SCHEDULE_JOB_TYPES.map((t) => [t, ScheduleSchema.nullable()])) as {
          [K in (typeof SCHEDULE_JOB_TYPES)[number]]: z.ZodNullable<typeof ScheduleSchema>;
        },
      )
      .openapi({
        description: "The table's schedules, one per job type (null where the table has none).",
      }),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  })
  .openapi("Table");

export const TableCreateSchema = z
  .strictObject({
    name: NameSchema,
    uri: UriSchema.optional().openapi({
      description:
        "Where the table's data lives. Required unless the table is onboarded through a catalog connection; then, if given, it must equal the synced table's location.",
    }),
    format: z.enum(TABLE_FORMATS).optional().openapi({
      description:
        "delta (default), iceberg or hive. Vacuum needs delta or iceberg; partition expiration needs delta. A table onboarded through a catalog connection takes the synced table's: iceberg for a Polaris table or an Iceberg table in a Hive Metastore, hive for the metastore's Parquet tables, delta for a workspace's external Delta table (another value is a 422). A hive table needs a catalog connection: its partitions are read from the metastore.",
    }),
    catalog_connection_id: z.string().min(1).max(64).optional().openapi({
      description:
        "Onboard a table a catalog connection synced, with `catalog_table`, instead of `uri` and `format`: the table takes the synced table's location as its uri and its format (see `format`), and every job that reads it (onboarding, crunch, optimize, and for Hive tables recover) loads and commits it through the catalog, so it goes only to agents allowed the catalog's endpoints too. Polaris connections link Iceberg tables; hive_metastore connections Parquet (format hive) and Iceberg tables; workspace (Unity) connections EXTERNAL Delta tables (format delta, their jobs commit to the Delta log as for a table registered by URI; a MANAGED table is a 422, its storage being reachable only with credentials Unity vends). Another table is a 422 naming catalog_table with the reason. A Hive table is crunched a partition at a time into a new folder under the table's `_lakesmith/` folder, and the partition moved there in the metastore under its lock; the old folder's files become pending deletions (action_type crunch, reason superseded), and recovering one moves the partition back. Whether a Hive table can be crunched (Parquet, not transactional or bucketed) its onboarding says, with the reason. Vacuum of a linked Iceberg table is refused (409: its snapshots expire through its catalog, not supported yet; a Hive table: 422; a workspace's Delta table is vacuumed like one registered by URI), partition expiration too (422, Iceberg or Hive). When a sync no longer reports the table, its schedules are disabled and it shows `catalog_table_deleted: true`.",
      example: "con_4k9x2m7q0c1v8b3n5z6t",
    }),
    catalog_table: z.string().min(1).max(1024).optional().openapi({
      description:
        "The synced table's `full_name` (`<catalog>.<schema>.<table>`), with `catalog_connection_id`.",
      example: "lake.tpch.sf001.lineitem",
    }),
    priority: PrioritySchema.default("P2"),
    target_file_size_mb: TargetFileSizeSchema.default(512),
    parquet_v2: z.boolean().default(false).openapi({ description: PARQUET_V2 }),
    inventory_report_uri: InventoryUriSchema.optional(),
  })
  .openapi("TableCreate");
export type TableCreate = z.infer<typeof TableCreateSchema>;

export const TableUpdateSchema = z
  .strictObject({
    priority: PrioritySchema.optional(),
    target_file_size_mb: TargetFileSizeSchema.optional(),
    parquet_v2: z.boolean().optional().openapi({ description: PARQUET_V2 }),
    inventory_report_uri: InventoryUriSchema.optional().openapi({
      description: "A new inventory report URI, or null to clear it; each change is recorded.",
    }),
  })
  .refine((body) => Object.keys(body).length > 0, { message: "nothing to update: give at least one field" })
  .openapi("TableUpdate");
export type TableUpdate = z.infer<typeof TableUpdateSchema>;

export const InventoryHistorySchema = z
  .object({
    id: z.string(),
    table_id: z.string(),
    table_name: z.string().openapi({ description: "The table's name when the change was made." }),
    previous_uri: z.string().nullable(),
    inventory_report_uri: z.string().nullable(),
    changed_by: z
      .string()
      .nullable()
      .openapi({ description: "The user or API key id that made the change." }),
    changed_at: z.string(),
  })
  .openapi("InventoryHistoryRecord");

export function inventoryToWire(row: typeof inventoryHistory.$inferSelect) {
  return {
    id: row.id,
    table_id: row.tableId,
    table_name: row.tableName,
    previous_uri: row.previousUri,
    inventory_report_uri: row.inventoryReportUri,
    changed_by: row.changedBy,
    changed_at: row.changedAt.toISOString(),
  };
}
