/** Slots (document 1): `GET /api/v1/slots/{run_time_utc}`. API keys need `schedules:read`. */
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import { SCHEDULE_JOB_TYPES } from "../db/schema.ts";
import { jsonResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { RunTimeSchema } from "../schedules/schemas.ts";

const SlotSchema = z
  .object({
    run_time_utc: z.string().openapi({ example: "02:30" }),
    capacity: z.number().int().openapi({
      description: "Enabled daily schedules the slot holds (platform setting `schedules_per_slot`).",
    }),
    scheduled: z.number().int().openapi({ description: "Enabled daily schedules that run at this HH:MM." }),
    remaining: z.number().int().openapi({ description: "capacity - scheduled, never below 0." }),
    by_job_type: z
      .object(
        Object.fromEntries(SCHEDULE_JOB_TYPES.map((t) => [t, z.number().int()])) as Record<
          (typeof SCHEDULE_JOB_TYPES)[number],
          z.ZodNumber
        >,
      )
      .openapi({ description: "`scheduled`, split by job type." }),
  })
  .openapi("Slot");

const get = defineRoute({
  method: "get",
  path: "/api/v1/slots/{run_time_utc}",
  tags: ["schedules"],
  summary: "How many schedules run at a time of day, and the capacity left there",
  description:
    "A slot is one minute of the UTC day. Only enabled daily schedules count (backfills have no run time). Creating or moving a daily schedule into a full slot is refused with 409.",
  access: access.read("schedules"),
  request: {
    params: z.object({
      run_time_utc: RunTimeSchema.openapi({ param: { name: "run_time_utc", in: "path" } }),
    }),
  },
  responses: { 200: jsonResponse("Usage and capacity of the slot.", SlotSchema) },
});

export const slotRoutes = newRouter().openapi(get, async (c) =>
  c.json(await c.var.services.slots.usage(c.req.valid("param").run_time_utc), 200),
);
