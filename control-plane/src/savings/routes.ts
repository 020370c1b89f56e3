/**
 * Savings (`GET /api/v1/savings[/tables/{table_id} | /catalogs/{catalog_id}]`) and daily metrics
 * (`GET /api/v1/metrics[/tables/{table_id} | /catalogs/{catalog_id}]`): read-only, every role
 * reads; API keys need `savings:read` or `metrics:read` (`:write` grants nothing more here).
 */
import { access } from "../auth/access.ts";
import { CatalogIdParam } from "../catalogs/schemas.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import { MetricsQuery, MetricsSchema, SAVED_BYTES, SavingsSchema } from "./schemas.ts";

const SAVINGS =
  "Read from a daily rollup that the batch ending each counted job writes: committed crunch and optimize jobs (bytes and files before and after), committed partition expirations (partitions), hard deletes (files and bytes the agent deleted). Dollars, projection, goal and operational cost are computed at the current settings. " +
  SAVED_BYTES;
const METRICS =
  "A daily UTC series from the same rollup as the savings, every day of the range present (zeros where nothing happened), and the totals of the range.";
const NO_TABLE = { 404: problemResponse("No table with this id.") };
const NO_CATALOG = {
  404: problemResponse("No catalog with this id: not a catalog id, or no sync of its connection saw it."),
};
const BAD_RANGE = {
  422: problemResponse("A date that is not `YYYY-MM-DD`, `start` after `end`, or a range over 366 days."),
};

const total = defineRoute({
  method: "get",
  path: "/api/v1/savings",
  tags: ["savings"],
  summary: "Savings of every table",
  description: SAVINGS,
  access: access.read("savings"),
  responses: { 200: jsonResponse("The savings of every table.", SavingsSchema) },
});

const ofTable = defineRoute({
  method: "get",
  path: "/api/v1/savings/tables/{table_id}",
  tags: ["savings"],
  summary: "Savings of one table",
  description: SAVINGS,
  access: access.read("savings"),
  request: { params: TableIdParam },
  responses: { 200: jsonResponse("The table's savings.", SavingsSchema), ...NO_TABLE },
});

const ofCatalog = defineRoute({
  method: "get",
  path: "/api/v1/savings/catalogs/{catalog_id}",
  tags: ["savings"],
  summary: "Savings of a catalog's tables",
  description: SAVINGS,
  access: access.read("savings"),
  request: { params: CatalogIdParam },
  responses: { 200: jsonResponse("The catalog's savings.", SavingsSchema), ...NO_CATALOG },
});

const metrics = defineRoute({
  method: "get",
  path: "/api/v1/metrics",
  tags: ["metrics"],
  summary: "Daily metrics of every table",
  description: METRICS,
  access: access.read("metrics"),
  request: { query: MetricsQuery },
  responses: { 200: jsonResponse("The series.", MetricsSchema), ...BAD_RANGE },
});

const tableMetrics = defineRoute({
  method: "get",
  path: "/api/v1/metrics/tables/{table_id}",
  tags: ["metrics"],
  summary: "Daily metrics of one table",
  description: METRICS,
  access: access.read("metrics"),
  request: { params: TableIdParam, query: MetricsQuery },
  responses: { 200: jsonResponse("The series.", MetricsSchema), ...NO_TABLE, ...BAD_RANGE },
});

const catalogMetrics = defineRoute({
  method: "get",
  path: "/api/v1/metrics/catalogs/{catalog_id}",
  tags: ["metrics"],
  summary: "Daily metrics of a catalog's tables",
  description: METRICS,
  access: access.read("metrics"),
  request: { params: CatalogIdParam, query: MetricsQuery },
  responses: { 200: jsonResponse("The series.", MetricsSchema), ...NO_CATALOG, ...BAD_RANGE },
});

export const savingsRoutes = newRouter()
  .openapi(total, async (c) => c.json(await c.var.services.savings.total(), 200))
  .openapi(ofTable, async (c) =>
    c.json(await c.var.services.savings.forTable(c.req.valid("param").table_id), 200),
  )
  .openapi(ofCatalog, async (c) =>
    c.json(await c.var.services.savings.forCatalog(c.req.valid("param").catalog_id), 200),
  )
  .openapi(metrics, async (c) => c.json(await c.var.services.savings.metrics({}, c.req.valid("query")), 200))
  .openapi(tableMetrics, async (c) =>
    c.json(
      await c.var.services.savings.metrics({ tableId: c.req.valid("param").table_id }, c.req.valid("query")),
      200,
    ),
  )
  .openapi(catalogMetrics, async (c) =>
    c.json(
      await c.var.services.savings.metrics(
        { catalogId: c.req.valid("param").catalog_id },
        c.req.valid("query"),
      ),
      200,
    ),
  );
