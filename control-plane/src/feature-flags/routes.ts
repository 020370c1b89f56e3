/** Feature flags: anyone reads; Admin sets (API keys: `config:write`). */
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import { jsonBody, jsonResponse } from "../http/openapi.ts";
import { pageOf, pageOfAll, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";

const FlagSchema = z
  .object({ key: z.string(), enabled: z.boolean(), updated_at: z.string().nullable() })
  .openapi("FeatureFlag");
const KeyParam = z.object({
  key: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/, "1-100 letters, digits, '.', '_', ':' or '-'")
    .openapi({ param: { name: "key", in: "path" }, example: "object_maintenance" }),
});
const tags = ["feature-flags"];

const list = defineRoute({
  method: "get",
  path: "/api/v1/feature-flags",
  tags,
  summary: "Flags that were ever set",
  access: access.read("config"),
  request: { query: pageQuery(100, 1000) },
  responses: { 200: jsonResponse("Flags by key.", pageOf(FlagSchema, "FeatureFlagList")) },
});
const get = defineRoute({
  method: "get",
  path: "/api/v1/feature-flags/{key}",
  tags,
  summary: "One flag; a flag never set is reported as disabled",
  access: access.read("config"),
  request: { params: KeyParam },
  responses: { 200: jsonResponse("The flag.", FlagSchema) },
});
const set = defineRoute({
  method: "put",
  path: "/api/v1/feature-flags/{key}",
  tags,
  summary: "Enable or disable a flag",
  access: access.admin("config:write"),
  request: {
    params: KeyParam,
    body: jsonBody(z.strictObject({ enabled: z.boolean() }).openapi("FeatureFlagSet")),
  },
  responses: { 200: jsonResponse("The flag.", FlagSchema) },
});

export const featureFlagRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    return c.json(pageOfAll(await c.var.services.featureFlags.list(), offset, limit), 200);
  })
  .openapi(get, async (c) => c.json(await c.var.services.featureFlags.get(c.req.valid("param").key), 200))
  .openapi(set, async (c) =>
    c.json(await c.var.services.featureFlags.set(c.req.valid("param").key, c.req.valid("json").enabled), 200),
  );
