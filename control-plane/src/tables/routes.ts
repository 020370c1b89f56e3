/**
 * Tables (document 1): `GET/POST /api/v1/tables`, `GET/PUT/DELETE /api/v1/tables/{table_id}` and
 * `GET /api/v1/tables/{table_id}/inventory-history`. API keys need `tables:read` or `tables:write`.
 */
import { z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import { access, principalId } from "../auth/access.ts";
import { ONBOARDING_STATUSES } from "../db/schema.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  InventoryHistorySchema,
  inventoryToWire,
  TableCreateSchema,
  TableSchema,
  TableUpdateSchema,
} from "./schemas.ts";

export const TABLE_PAGE_MAX = 1000;

export const TableIdParam = z.object({
  table_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "table_id", in: "path" }, example: "tbl_4k9x2m7q0c1v8b3n5z6t" }),
});
const notFoundResponse = { 404: problemResponse("No table with this id.") };
const tags = ["tables"];

const list = defineRoute({
  method: "get",
  path: "/api/v1/tables",
  tags,
  summary: "List tables with their schedules",
  description: `Ordered by name. \`total\` counts every table that matches the filters. Maximum \`limit\` is ${TABLE_PAGE_MAX}.`,
  access: access.read("tables"),
  request: {
    query: pageQuery(100, TABLE_PAGE_MAX).extend({
      status: z
        .enum(ONBOARDING_STATUSES)
        .optional()
        .openapi({ description: "Only tables with this onboarding status." }),
      name: z
        .string()
        .max(255)
        .optional()
        .openapi({ description: "Exact table name (to resolve a name to its id)." }),
    }),
  },
  responses: { 200: jsonResponse("A page of tables.", pageOf(TableSchema, "TablePage")) },
});

const create = defineRoute({
  method: "post",
  path: "/api/v1/tables",
  tags,
  summary: "Register a table and start its onboarding",
  description:
    "The table starts with onboarding_status `pending` and an onboarding job is queued; poll GET /api/v1/onboarding/{table_id}/status. Schedules can be added once onboarding is active.",
  access: access.write("tables"),
  request: { body: jsonBody(TableCreateSchema) },
  responses: {
    201: jsonResponse("Created; onboarding is queued.", TableSchema),
    409: problemResponse(
      "A table with this name exists; resolve its id with GET /api/v1/tables?name=<name>.",
    ),
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}",
  tags,
  summary: "Get a table with its schedules",
  access: access.read("tables"),
  request: { params: TableIdParam },
  responses: { 200: jsonResponse("The table.", TableSchema), ...notFoundResponse },
});

const update = defineRoute({
  method: "put",
  path: "/api/v1/tables/{table_id}",
  tags,
  summary: "Update priority, target file size or inventory report URI",
  description:
    "Any subset of the fields; fields left out keep their value. A change of inventory_report_uri is appended to the inventory history.",
  access: access.write("tables"),
  request: { params: TableIdParam, body: jsonBody(TableUpdateSchema) },
  responses: { 200: jsonResponse("The updated table.", TableSchema), ...notFoundResponse },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/v1/tables/{table_id}",
  tags,
  summary: "Delete a table and its schedules",
  description:
    "Jobs of the table that have not started are cancelled; running jobs finish. Job history and inventory history are kept.",
  access: access.write("tables"),
  request: { params: TableIdParam },
  responses: { 204: { description: "Deleted." }, ...notFoundResponse },
});

const history = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}/inventory-history",
  tags,
  summary: "Changes of the table's inventory report URI, newest first",
  description:
    "Append-only; still readable after the table is deleted. 404 only when the table does not exist and never had a change recorded.",
  access: access.read("tables"),
  request: { params: TableIdParam, query: pageQuery(50, TABLE_PAGE_MAX) },
  responses: {
    200: jsonResponse("A page of changes.", pageOf(InventoryHistorySchema, "InventoryHistoryPage")),
    404: problemResponse("No such table and no history under this id."),
  },
});

/** Sends JSON text the database built (`view.ts`), typed as the route's response. */
function jsonText<T, S extends 200 | 201>(c: Context, text: string, status: S) {
  return c.body(text, status, { "content-type": "application/json" }) as unknown as Response &
    TypedResponse<T, S, "json">;
}

type Table = z.infer<typeof TableSchema>;

export const tableRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit, status, name } = c.req.valid("query");
    const page = await c.var.services.tables.page({ status, name }, offset, limit);
    const text = `{"items":${page.itemsJson},"total":${page.total},"offset":${offset},"limit":${limit}}`;
    return jsonText<{ items: Table[]; total: number; offset: number; limit: number }, 200>(c, text, 200);
  })
  .openapi(create, async (c) => {
    const { tables } = c.var.services;
    const created = await tables.create(c.req.valid("json"), principalId(c.var.principal));
    return jsonText<Table, 201>(c, await tables.json(created.id), 201);
  })
  .openapi(get, async (c) =>
    jsonText<Table, 200>(c, await c.var.services.tables.json(c.req.valid("param").table_id), 200),
  )
  .openapi(update, async (c) => {
    const { tables } = c.var.services;
    const updated = await tables.update(
      c.req.valid("param").table_id,
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return jsonText<Table, 200>(c, await tables.json(updated.id), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.tables.delete(c.req.valid("param").table_id);
    return c.body(null, 204);
  })
  .openapi(history, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.tables.inventoryHistory(c.req.valid("param").table_id, offset, limit);
    return c.json({ ...page, items: page.items.map(inventoryToWire) }, 200);
  });
