/**
 * `/openapi.json`, `/docs` (Swagger UI) and `/redoc` (Redoc), Admin only. The pages embed the
 * OpenAPI document inline, so a browser needs no second authenticated fetch; the library bundles
 * under `/docs/assets/` are public, since they hold nothing but vendor code.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import type { AppEnv } from "../http/env.ts";
import { notFound } from "../http/problem.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { DOCS_ASSET_NAMES, type DocsAssetName } from "./assets.ts";

const htmlResponse = { 200: { description: "HTML page.", content: { "text/html": { schema: z.string() } } } };

const openapiJson = defineRoute({
  method: "get",
  path: "/openapi.json",
  tags: ["docs"],
  summary: "The OpenAPI 3.1 document of this API",
  access: access.admin(),
  responses: {
    200: { description: "OpenAPI document.", content: { "application/json": { schema: z.any() } } },
  },
});
const swaggerPage = defineRoute({
  method: "get",
  path: "/docs",
  tags: ["docs"],
  summary: "Interactive API reference (Swagger UI)",
  access: access.admin(),
  responses: htmlResponse,
});
const redocPage = defineRoute({
  method: "get",
  path: "/redoc",
  tags: ["docs"],
  summary: "API reference (Redoc)",
  access: access.admin(),
  responses: htmlResponse,
});
const asset = defineRoute({
  method: "get",
  path: "/docs/assets/{name}",
  tags: ["docs"],
  summary: "Vendor bundles of the docs pages",
  access: access.public,
  request: { params: z.object({ name: z.string() }) },
  responses: { 200: { description: "JavaScript or CSS file." } },
});

const CONTENT_TYPES: Record<DocsAssetName, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
  "redoc.standalone.js": "text/javascript; charset=utf-8",
};

/** Mounts the docs routes; `document` builds the OpenAPI document of the whole app. */
export function docsRoutes(document: () => unknown) {
  let cached: string | undefined;
  const json = () => {
    cached ??= JSON.stringify(document()).replace(/</g, "\\u003c");
    return cached;
  };
  const router = newRouter();
  router.openapi(openapiJson, (c) => c.json(JSON.parse(json()), 200));
  router.openapi(swaggerPage, (c) => c.html(swaggerHtml(json()), 200));
  router.openapi(redocPage, (c) => c.html(redocHtml(json()), 200));
  router.openapi(asset, async (c) => {
    const name = c.req.valid("param").name as DocsAssetName;
    if (!DOCS_ASSET_NAMES.includes(name)) throw notFound("Docs asset", name);
    const body = await c.var.services.docsAssets?.get(name);
    if (body == null) throw notFound("Docs asset", name);
    return c.body(body, 200, {
      "content-type": CONTENT_TYPES[name],
      "cache-control": "public, max-age=86400",
    });
  });
  return router as OpenAPIHono<AppEnv>;
}

function swaggerHtml(spec: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lakesmith API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ spec: ${spec}, dom_id: "#swagger-ui", persistAuthorization: false });</script>
</body></html>`;
}

function redocHtml(spec: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lakesmith API</title></head>
<body><div id="redoc"></div>
<script src="/docs/assets/redoc.standalone.js"></script>
<script>Redoc.init(${spec}, {}, document.getElementById("redoc"));</script>
</body></html>`;
}
