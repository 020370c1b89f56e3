/**
 * Wire shapes of document 2's catalog browse: catalogs, their namespace trees and their tables, as
 * the latest syncs of every catalog connection left them (`catalog_tables`, live rows only).
 */
import { z } from "@hono/zod-openapi";
import { CATALOG_TYPES } from "@lakesmith/shared/catalogs";
import { keysetQuery } from "../http/pagination.ts";

export const PAGE_SIZE_DEFAULT = 100;
export const PAGE_SIZE_MAX = 1000;

export const CATALOG_ID_DESCRIPTION =
  "`cat_` + base64url(`<connection_id>:<catalog name>`) without padding: one id per catalog of each connection (two connections can both have a catalog `main`), stable across syncs, URL-safe. Treat it as opaque.";
export const TABLE_ID_DESCRIPTION =
  "`<catalog_id>.<schema>.<name>`: the table's `full_name` with its leading catalog name replaced by `catalog_id`, so unique across connections. URL-encode it in a path when a part holds `/` or `%`.";
export const TYPE_DESCRIPTION =
  "The table's format as the catalog reports it, in lower case: `delta`, `iceberg`, `hive`, `parquet`, `csv`, ...; null when the catalog does not say. (`table_type` keeps the catalog's MANAGED, EXTERNAL, VIEW, ...)";

const text = (max: number) => z.string().min(1).max(max);

export const CatalogIdParam = z.object({
  catalog_id: z
    .string()
    .min(1)
    .max(1024)
    .openapi({
      param: { name: "catalog_id", in: "path" },
      description: CATALOG_ID_DESCRIPTION,
      example: "cat_Y29uXzRrOXgybTdxMGMxdjhiM241ejZ0Om1haW4",
    }),
});

export const TableIdParam = CatalogIdParam.extend({
  table_id: z
    .string()
    .min(1)
    .max(2048)
    .openapi({
      param: { name: "table_id", in: "path" },
      description: TABLE_ID_DESCRIPTION,
      example: "cat_Y29uXzRrOXgybTdxMGMxdjhiM241ejZ0Om1haW4.sales.orders",
    }),
});

const NAMESPACE_PREFIX =
  "A namespace path, levels joined by `.` (`sales.eu`), matched by whole levels and exactly (case counts): `sales` covers `sales` and `sales.eu`, not `salesforce`.";

export const CatalogsQuery = keysetQuery(PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX);

export const NamespacesQuery = keysetQuery(PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX).extend({
  prefix: text(1024)
    .optional()
    .openapi({
      description: `Only the namespaces strictly beneath this one, at any depth. ${NAMESPACE_PREFIX} Absent: the whole tree.`,
    }),
});
export type NamespacesFilter = z.infer<typeof NamespacesQuery>;

export const TablesQuery = keysetQuery(PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX).extend({
  q: text(255).optional().openapi({
    description:
      "Wildcard pattern over the table's name (the last part of full_name, not its namespace), matched whole: `*` any run of characters, `?` one character, anything else literally (`%` and `_` too); ASCII letters match either case. `ord*` finds `orders` and `Order_items`.",
  }),
  prefix: text(1024)
    .optional()
    .openapi({
      description: `Only tables in this namespace or beneath it. ${NAMESPACE_PREFIX}`,
    }),
  type: text(64)
    .optional()
    .openapi({ description: `Only tables of this \`type\`, either case. ${TYPE_DESCRIPTION}` }),
});
export type TablesFilter = z.infer<typeof TablesQuery>;

export const CatalogSchema = z
  .object({
    catalog_id: z.string().openapi({ description: CATALOG_ID_DESCRIPTION }),
    name: z.string().openapi({ description: "The catalog's name in its connection." }),
    connection_id: z.string(),
    connection_name: z.string(),
    connection_type: z.enum(CATALOG_TYPES),
    connection_is_active: z.boolean().openapi({
      description: "An inactive connection is not synced on schedule; its catalogs are still listed.",
    }),
    tables_count: z.number().int().openapi({ description: "Live synced tables." }),
    size_bytes: z.number().int().openapi({
      description: "Total size of the live tables whose size the agent could tell; 0 when none could.",
    }),
  })
  .openapi("Catalog");

export const NamespaceSchema = z
  .object({
    namespace: z.string().openapi({ description: "Its path, levels joined by `.`; pass as `prefix`." }),
    levels: z.array(z.string()),
    parent: z.string().nullable().openapi({ description: "The parent's path; null at the top level." }),
    depth: z.number().int().openapi({ description: "1 at the top level." }),
    children_count: z.number().int().openapi({ description: "Namespaces directly beneath it." }),
    tables_count: z.number().int().openapi({ description: "Live tables directly in it." }),
    total_tables_count: z.number().int().openapi({ description: "Live tables in it or beneath it." }),
  })
  .openapi("Namespace");

export const BrowsedTableSchema = z
  .object({
    table_id: z.string().openapi({ description: TABLE_ID_DESCRIPTION }),
    catalog_id: z.string(),
    full_name: z.string().openapi({ description: "`<catalog>.<schema>.<table>` as the catalog names it." }),
    namespace: z.string().openapi({ description: "The namespace path (the catalog's schema)." }),
    name: z.string(),
    type: z.string().nullable().openapi({ description: TYPE_DESCRIPTION }),
    table_type: z.string().nullable(),
    location: z.string().nullable(),
    size_bytes: z.number().int().nullable().openapi({ description: "Null when the agent could not tell." }),
    has_partitions: z.boolean().nullable(),
    updated_at: z.string().nullable().openapi({ description: "When the catalog last changed the table." }),
    synced_at: z.string().openapi({ description: "When a sync last reported the table." }),
  })
  .openapi("BrowsedTable");

export const BrowsedTableDetailSchema = BrowsedTableSchema.extend({
  connection_id: z.string(),
  catalog: z.string(),
  format: z.string().nullable().openapi({ description: "The format as the catalog spells it." }),
  metadata: z.record(z.string(), z.unknown()).openapi({
    description:
      "The catalog's own record of the table as the latest sync read it (and the metadata read for its size).",
  }),
}).openapi("BrowsedTableDetail");
