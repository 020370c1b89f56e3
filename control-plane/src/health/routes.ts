/**
 * `GET /api/v1/health`: component status for any authenticated caller (503 when a component is
 * down). `GET /healthz`: the one open liveness probe; it says nothing but ok.
 */
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import { jsonResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";

const ComponentSchema = z.object({
  status: z.enum(["ok", "unavailable"]),
  latency_ms: z.number(),
  detail: z.string().optional(),
});
const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    time: z.string(),
    components: z.object({ database: ComponentSchema }),
  })
  .openapi("Health");

const health = defineRoute({
  method: "get",
  path: "/api/v1/health",
  tags: ["health"],
  summary: "Health of the API and its components",
  access: access.authenticated,
  responses: {
    200: jsonResponse("Operational.", HealthSchema),
    503: jsonResponse("A component is unavailable.", HealthSchema),
  },
});
const liveness = defineRoute({
  method: "get",
  path: "/healthz",
  tags: ["health"],
  summary: "Liveness probe",
  access: access.public,
  responses: { 200: { description: "ok", content: { "text/plain": { schema: z.literal("ok") } } } },
});

export const healthRoutes = newRouter()
  .openapi(health, async (c) => {
    const { health: service, clock, version } = c.var.services;
    const database = await service.database();
    const ok = database.status === "ok";
    const body = {
      status: ok ? "ok" : "degraded",
      version,
      time: clock.now().toISOString(),
      components: { database },
    } as const;
    return ok ? c.json(body, 200) : c.json(body, 503);
  })
  .openapi(liveness, (c) => c.text("ok", 200));
