/**
 * Browsing what syncs wrote (document 1, "Catalog connections"): a connection's catalogs, a
 * catalog's schemas, its tables (filtered, sorted, paged) and one table's detail. API keys need
 * `connections:read`.
 */
import { access } from "../auth/access.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  CATALOG_TABLE_PAGE_MAX,
  CatalogNameParam,
  CatalogSummarySchema,
  CatalogTableDetailSchema,
  CatalogTableSchema,
  CatalogTablesQuery,
  ConnectionIdParam,
  FullNameParam,
  SchemaSummarySchema,
} from "./schemas.ts";
import { catalogTableDetailView, catalogTableView } from "./view.ts";

const tags = ["catalog connections"];
const LIVE_ONLY = "Counts and lists cover tables not marked deleted.";

const catalogs = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/{connection_id}/catalogs",
  tags,
  summary: "Catalogs of a connection, from its synced tables",
  description: `Ordered by name; a catalog none of whose tables was synced (all below the minimum size, say) is not listed. ${LIVE_ONLY} Maximum \`limit\` is ${CATALOG_TABLE_PAGE_MAX}.`,
  access: access.read("connections"),
  request: { params: ConnectionIdParam, query: pageQuery(100, CATALOG_TABLE_PAGE_MAX) },
  responses: {
    200: jsonResponse("A page of catalogs.", pageOf(CatalogSummarySchema, "SyncedCatalogPage")),
    404: problemResponse("No catalog connection with this id."),
  },
});

const schemas = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/{connection_id}/catalogs/{catalog_name}/schemas",
  tags,
  summary: "Schemas of a synced catalog",
  description: `Ordered by name. ${LIVE_ONLY} Maximum \`limit\` is ${CATALOG_TABLE_PAGE_MAX}.`,
  access: access.read("connections"),
  request: { params: CatalogNameParam, query: pageQuery(100, CATALOG_TABLE_PAGE_MAX) },
  responses: {
    200: jsonResponse("A page of schemas.", pageOf(SchemaSummarySchema, "SyncedSchemaPage")),
    404: problemResponse("No such connection, or the catalog has no synced table in it."),
  },
});

const tables = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/{connection_id}/tables",
  tags,
  summary: "Synced tables of a connection: filtered, sorted, paged",
  description:
    "Filters combine (all must hold). Tables marked deleted are left out unless `include_deleted=true`. " +
    `Sorted by \`sort_by\` (default full_name) in \`sort_order\` (default asc), then by full_name. Maximum \`limit\` is ${CATALOG_TABLE_PAGE_MAX}.`,
  access: access.read("connections"),
  request: { params: ConnectionIdParam, query: CatalogTablesQuery },
  responses: {
    200: jsonResponse("A page of tables.", pageOf(CatalogTableSchema, "CatalogTablePage")),
    404: problemResponse("No catalog connection with this id."),
  },
});

const table = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/{connection_id}/tables/{full_name}",
  tags,
  summary: "One synced table with the catalog's own record of it",
  description: "Also a table marked deleted (its `deleted_at` is set). URL-encode the name if it holds `/`.",
  access: access.read("connections"),
  request: { params: FullNameParam },
  responses: {
    200: jsonResponse("The table.", CatalogTableDetailSchema),
    404: problemResponse("No such connection, or no table of this name was ever synced from it."),
  },
});

export const catalogBrowseRoutes = newRouter()
  .openapi(catalogs, async (c) => {
    const { offset, limit } = c.req.valid("query");
    return c.json(
      await c.var.services.catalogBrowser.catalogs(c.req.valid("param").connection_id, offset, limit),
      200,
    );
  })
  .openapi(schemas, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const { connection_id, catalog_name } = c.req.valid("param");
    return c.json(
      await c.var.services.catalogBrowser.schemas(connection_id, catalog_name, offset, limit),
      200,
    );
  })
  .openapi(tables, async (c) => {
    const page = await c.var.services.catalogBrowser.tables(
      c.req.valid("param").connection_id,
      c.req.valid("query"),
    );
    return c.json({ ...page, items: page.items.map(catalogTableView) }, 200);
  })
  .openapi(table, async (c) => {
    const { connection_id, full_name } = c.req.valid("param");
    return c.json(
      catalogTableDetailView(await c.var.services.catalogBrowser.table(connection_id, full_name)),
      200,
    );
  });
