/**
 * Document 2's catalog browse: `GET /api/v1/catalogs`, `.../{catalog_id}/namespaces`,
 * `.../{catalog_id}/tables` and `.../tables/{table_id}`, read-only over what catalog syncs wrote.
 * Viewer reads; API keys need `catalogs:read`.
 */
import { access } from "../auth/access.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { keysetPageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  BrowsedTableDetailSchema,
  BrowsedTableSchema,
  CatalogIdParam,
  CatalogSchema,
  CatalogsQuery,
  NamespaceSchema,
  NamespacesQuery,
  TableIdParam,
  TablesQuery,
} from "./schemas.ts";

const tags = ["catalogs"];
const LIVE =
  "Only what the connections' latest syncs left live: tables a sync marked deleted are left out, and a catalog is listed while it has a live table (GET /api/v1/catalog-connections/{connection_id}/tables?include_deleted=true shows the rest).";
const PAGING =
  "Keyset paging: pass the answer's `next_page_token` as `page_token` for the next page; a page never skips or repeats an item when syncs change the list between calls.";
const NO_CATALOG = "No catalog with this id, or it has no live synced table.";

const catalogs = defineRoute({
  method: "get",
  path: "/api/v1/catalogs",
  tags,
  summary: "Every catalog of every catalog connection",
  description: `One item per (connection, catalog name), so two connections' \`main\` catalogs are two items with different \`catalog_id\`s. Connections active or not. Ordered by catalog name, then connection id. ${LIVE} ${PAGING}`,
  access: access.read("catalogs"),
  request: { query: CatalogsQuery },
  responses: { 200: jsonResponse("A page of catalogs.", keysetPageOf(CatalogSchema, "CatalogPage")) },
});

const namespaces = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/namespaces",
  tags,
  summary: "A catalog's namespace tree, any depth",
  description: `The tree as a depth-first list (parents before their children, siblings by name, level by level); each namespace names its \`parent\` and counts its children and tables. Namespaces are the synced tables' schemas, levels joined by \`.\`; one that holds no table directly appears when one beneath it does. ${LIVE} ${PAGING}`,
  access: access.read("catalogs"),
  request: { params: CatalogIdParam, query: NamespacesQuery },
  responses: {
    200: jsonResponse("A page of namespaces.", keysetPageOf(NamespaceSchema, "NamespacePage")),
    404: problemResponse(NO_CATALOG),
  },
});

const tables = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/tables",
  tags,
  summary: "A catalog's tables: wildcard, namespace and type filters, paged",
  description: `Filters combine (all must hold). Ordered by \`full_name\`. ${LIVE} ${PAGING}`,
  access: access.read("catalogs"),
  request: { params: CatalogIdParam, query: TablesQuery },
  responses: {
    200: jsonResponse("A page of tables.", keysetPageOf(BrowsedTableSchema, "BrowsedTablePage")),
    404: problemResponse(NO_CATALOG),
  },
});

const table = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/tables/{table_id}",
  tags,
  summary: "One table of a catalog with its metadata",
  description:
    "`metadata` is the catalog's own record of the table as the latest sync read it. A table a sync marked deleted is a 404 here.",
  access: access.read("catalogs"),
  request: { params: TableIdParam },
  responses: {
    200: jsonResponse("The table.", BrowsedTableDetailSchema),
    404: problemResponse(`${NO_CATALOG} Or the catalog has no live table with this id.`),
  },
});

export const catalogRoutes = newRouter()
  .openapi(catalogs, async (c) => {
    const { page_size, page_token } = c.req.valid("query");
    return c.json(await c.var.services.catalogDirectory.catalogs(page_size, page_token), 200);
  })
  .openapi(namespaces, async (c) =>
    c.json(
      await c.var.services.catalogDirectory.namespaces(c.req.valid("param").catalog_id, c.req.valid("query")),
      200,
    ),
  )
  .openapi(tables, async (c) =>
    c.json(
      await c.var.services.catalogDirectory.tables(c.req.valid("param").catalog_id, c.req.valid("query")),
      200,
    ),
  )
  .openapi(table, async (c) => {
    const { catalog_id, table_id } = c.req.valid("param");
    return c.json(await c.var.services.catalogDirectory.table(catalog_id, table_id), 200);
  });
