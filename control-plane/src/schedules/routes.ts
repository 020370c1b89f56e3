/**
 * Schedules (document 1): `POST/GET/PUT/DELETE /api/v1/tables/{table_id}/schedule`, one schedule
 * per table and `job_type`. API keys need `schedules:read` or `schedules:write`.
 */
import { access } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { invalidField } from "../http/problem.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import {
  JobTypeQuery,
  ScheduleCreateSchema,
  ScheduleSchema,
  ScheduleUpdateSchema,
  scheduleToWire,
} from "./schemas.ts";

const tags = ["schedules"];
const path = "/api/v1/tables/{table_id}/schedule";
const notFoundResponse = {
  404: problemResponse("No such table, or the table has no schedule of this job type."),
};

const TIMING = `**Timing.** A daily schedule fires once per UTC date, at the first scheduler tick at or after its run_time_utc, for the partition dates [date - lookback_start, date - lookback_end]. A new or re-timed schedule first runs at the next run_time_utc at or after the change (created at 10:00 for 02:00, it first runs tomorrow). A tick that comes late fires the latest missed date, once; dates missed while the scheduler was down for longer are not replayed. A backfill schedule fires once, at the next tick, and again only if its column or dates change. A run is one job per schedule and date, however many ticks or control planes race.`;

const create = defineRoute({
  method: "post",
  path,
  tags,
  summary: "Create the table's schedule for a job type",
  description: `Only once the table's onboarding is active (409 otherwise, saying why). One schedule per table and job type (409 for a second). vacuum needs a delta or iceberg table, partition_expiration a delta table (422 on job_type otherwise). A daily schedule must fit its run_time_utc slot (409 when the slot is full; see GET /api/v1/slots/{run_time_utc}).\n\n${TIMING}`,
  access: access.write("schedules"),
  request: { params: TableIdParam, query: JobTypeQuery, body: jsonBody(ScheduleCreateSchema) },
  responses: {
    201: jsonResponse("Created.", ScheduleSchema),
    404: problemResponse("No such table."),
    409: problemResponse(
      "Onboarding is not active, the table has a schedule of this type, or the slot is full.",
    ),
  },
});

const get = defineRoute({
  method: "get",
  path,
  tags,
  summary: "Get the table's schedule for a job type",
  description: TIMING,
  access: access.read("schedules"),
  request: { params: TableIdParam, query: JobTypeQuery },
  responses: { 200: jsonResponse("The schedule.", ScheduleSchema), ...notFoundResponse },
});

const update = defineRoute({
  method: "put",
  path,
  tags,
  summary: "Update the table's schedule for a job type",
  description:
    "Any subset of the schedule's own fields; the type cannot change (delete and create instead). Disabling stops it firing; enabling it again resumes at the next run_time_utc.",
  access: access.write("schedules"),
  request: { params: TableIdParam, query: JobTypeQuery, body: jsonBody(ScheduleUpdateSchema) },
  responses: {
    200: jsonResponse("The updated schedule.", ScheduleSchema),
    ...notFoundResponse,
    409: problemResponse("The new run_time_utc slot is full."),
  },
});

const remove = defineRoute({
  method: "delete",
  path,
  tags,
  summary: "Delete the table's schedule for a job type",
  description: "Jobs it already queued are not cancelled.",
  access: access.write("schedules"),
  request: { params: TableIdParam, query: JobTypeQuery },
  responses: { 204: { description: "Deleted." }, ...notFoundResponse },
});

export const scheduleRoutes = newRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const query = c.req.valid("query");
    const explicit = new URL(c.req.url).searchParams.has("job_type");
    if (body.job_type && explicit && body.job_type !== query.job_type)
      throw invalidField("job_type", `the body says ${body.job_type} but the query says ${query.job_type}`);
    const jobType = body.job_type ?? query.job_type;
    const created = await c.var.services.schedules.create(c.req.valid("param").table_id, jobType, body);
    return c.json(scheduleToWire(created), 201);
  })
  .openapi(get, async (c) => {
    const schedule = await c.var.services.schedules.get(
      c.req.valid("param").table_id,
      c.req.valid("query").job_type,
    );
    return c.json(scheduleToWire(schedule), 200);
  })
  .openapi(update, async (c) => {
    const schedule = await c.var.services.schedules.update(
      c.req.valid("param").table_id,
      c.req.valid("query").job_type,
      c.req.valid("json"),
    );
    return c.json(scheduleToWire(schedule), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.schedules.delete(c.req.valid("param").table_id, c.req.valid("query").job_type);
    return c.body(null, 204);
  });
