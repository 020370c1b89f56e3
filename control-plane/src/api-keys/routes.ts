/** API keys: Admin only (scope `admin` for keys). The key is returned once, at creation. */
import { z } from "@hono/zod-openapi";
import { ALL_SCOPES, access, principalId, type Scope } from "../auth/access.ts";
import type { ApiKey } from "../db/schema.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageOfAll, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";

const ScopeSchema = z.enum(ALL_SCOPES as [Scope, ...Scope[]]).openapi({
  description:
    "`<resource>:read` or `<resource>:write` for tables, schedules, crunch, vacuum, deletions, catalogs, connections, policies, optimus, object-maintenance, users, config, agents, savings, metrics (read-only: their `:write` grants nothing more); or `admin` for everything. `:write` includes `:read`.",
});

const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the key, to tell keys apart." }),
    scopes: z.array(z.string()),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable().openapi({ description: "Updated at most once a minute." }),
    created_at: z.string(),
  })
  .openapi("ApiKey");

const ApiKeyCreateSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(ScopeSchema).min(1),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: "ISO 8601; omitted means never." }),
  })
  .openapi("ApiKeyCreate");

const ApiKeyCreatedSchema = z
  .object({
    id: z.string(),
    key: z.string().openapi({ description: "The secret; shown only in this response." }),
  })
  .extend({ api_key: ApiKeySchema })
  .openapi("ApiKeyCreated");

const tags = ["api-keys"];
const create = defineRoute({
  method: "post",
  path: "/api/v1/api-keys",
  tags,
  summary: "Create an API key",
  access: access.admin(),
  request: { body: jsonBody(ApiKeyCreateSchema) },
  responses: { 201: jsonResponse("Created; store `key` now.", ApiKeyCreatedSchema) },
});
const list = defineRoute({
  method: "get",
  path: "/api/v1/api-keys",
  tags,
  summary: "List API keys (never their secrets)",
  access: access.admin(),
  request: { query: pageQuery(100, 1000) },
  responses: { 200: jsonResponse("Keys, newest first.", pageOf(ApiKeySchema, "ApiKeyList")) },
});
const remove = defineRoute({
  method: "delete",
  path: "/api/v1/api-keys/{id}",
  tags,
  summary: "Delete (revoke) an API key",
  access: access.admin(),
  request: { params: z.object({ id: z.string().min(1).max(64) }) },
  responses: {
    204: { description: "Deleted; the key stops working at once." },
    404: problemResponse("No such key."),
  },
});

function toWire(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
  };
}

export const apiKeyRoutes = newRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const { record, key } = await c.var.services.apiKeys.create({
      name: body.name,
      scopes: body.scopes,
      expiresAt: body.expires_at ? new Date(body.expires_at) : undefined,
      createdBy: principalId(c.var.principal),
    });
    return c.json({ id: record.id, key, api_key: toWire(record) }, 201);
  })
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    return c.json(pageOfAll((await c.var.services.apiKeys.list()).map(toWire), offset, limit), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.apiKeys.delete(c.req.valid("param").id);
    return c.body(null, 204);
  });
