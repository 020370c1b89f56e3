/**
 * `GET /api/v1/config` (everyone), `PUT` (document 1) and `POST` (document 2): the same partial
 * update, Admin only (API keys: `config:write`). Every response masks secret settings, for Admins too.
 */

import type { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, preserializedJson, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { ConfigSchema, ConfigUpdateSchema, SETTING_DEFINITIONS } from "./definitions.ts";
import { maskedValues, type StoredConfig } from "./service.ts";

const tags = ["config"];
const updateDescription =
  "Partial update: send any subset of fields. Values outside their range, unknown fields, and refresh-token TTLs not above the access-token TTL give 422 naming the field. Secret settings (`setting_definitions.<field>.secret`) may be sent back masked as GET returned them; their field descriptions say how masks are read. Changes apply immediately.";

const get = defineRoute({
  method: "get",
  path: "/api/v1/config",
  tags,
  summary: "Customer configuration and platform settings",
  access: access.read("config"),
  responses: { 200: jsonResponse("Current values, with each setting's default and range.", ConfigSchema) },
});
const updateRoute = (method: "put" | "post") =>
  defineRoute({
    method,
    path: "/api/v1/config",
    tags,
    summary: method === "put" ? "Update configuration (document 1)" : "Update configuration (document 2)",
    description: updateDescription,
    access: access.admin("config:write"),
    request: { body: jsonBody(ConfigUpdateSchema) },
    responses: {
      200: jsonResponse("Updated configuration.", ConfigSchema),
      422: problemResponse("Invalid field."),
    },
  });

/** Serialized once per stored version: the GET is on every console page's hot path. */
const serialized = new WeakMap<StoredConfig, string>();
function toJson(config: StoredConfig): string {
  let text = serialized.get(config);
  if (text === undefined) {
    text = JSON.stringify(toWire(config));
    serialized.set(config, text);
  }
  return text;
}

function toWire(config: StoredConfig): z.infer<typeof ConfigSchema> {
  return {
    ...maskedValues(config.values),
    updated_at: config.updatedAt?.toISOString() ?? null,
    setting_definitions: SETTING_DEFINITIONS,
  };
}

export const configRoutes = newRouter()
  .openapi(get, async (c) =>
    preserializedJson<z.infer<typeof ConfigSchema>>(c, toJson(await c.var.services.config.get())),
  )
  .openapi(updateRoute("put"), async (c) =>
    c.json(
      toWire(await c.var.services.config.update(c.req.valid("json"), principalId(c.var.principal))),
      200,
    ),
  )
  .openapi(updateRoute("post"), async (c) =>
    c.json(
      toWire(await c.var.services.config.update(c.req.valid("json"), principalId(c.var.principal))),
      200,
    ),
  );
