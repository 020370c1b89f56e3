/**
 * Jobs of every kind: list, read, cancel, and enqueue diagnostic jobs (`noop`, `sleep`) to check
 * that agents are working. Kind-specific routes (crunch, vacuum, ...) are views of the same jobs;
 * `POST /api/v1/crunch/{crunch_id}/cancel` (crunch module) uses the same `CancelService`.
 */
import { z } from "@hono/zod-openapi";
import { LocationError, parseLocation } from "@lakesmith/shared/locations";
import { access, principalId } from "../auth/access.ts";
import { JOB_STATUSES } from "../db/schema.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { invalidField, notFound } from "../http/problem.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { DIAGNOSTIC_KINDS, DiagnosticPayloadSchema } from "./diagnostic.ts";
import { JobSchema, jobView } from "./view.ts";

const tags = ["jobs"];
const JobIdParam = z.object({
  job_id: z.string().openapi({ param: { name: "job_id", in: "path" }, example: "job_4k9x2m7q0c1v8b3n5z6t" }),
});

const DiagnosticJobSchema = z
  .strictObject({
    kind: z
      .enum(DIAGNOSTIC_KINDS)
      .openapi({ description: "`noop` ends at once; `sleep` waits `payload.ms`." }),
    payload: DiagnosticPayloadSchema.default({}),
    priority: z.enum(["P1", "P2"]).default("P2"),
    max_attempts: z.number().int().min(1).max(10).default(3),
  })
  .openapi("DiagnosticJobCreate");

const cancelResponses = {
  202: jsonResponse(
    "The job is cancelled (it had not started) or cancelling (its agent was told to stop).",
    JobSchema,
  ),
  404: problemResponse("No such job."),
  409: problemResponse("The job already ended; the detail names its status."),
};

const list = defineRoute({
  method: "get",
  path: "/api/v1/jobs",
  tags,
  summary: "Jobs of every kind, newest first",
  access: access.read("agents"),
  request: {
    query: pageQuery(100, 1000).extend({
      kind: z.string().max(64).optional(),
      status: z.enum(JOB_STATUSES).optional(),
      table_id: z.string().max(64).optional(),
    }),
  },
  responses: { 200: jsonResponse("A page of jobs.", pageOf(JobSchema, "JobPage")) },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/jobs/{job_id}",
  tags,
  summary: "One job, with why it waits when it is queued",
  access: access.read("agents"),
  request: { params: JobIdParam },
  responses: { 200: jsonResponse("The job.", JobSchema), 404: problemResponse("No such job.") },
});

const create = defineRoute({
  method: "post",
  path: "/api/v1/jobs",
  tags,
  summary: "Enqueue a diagnostic job (noop or sleep)",
  description:
    "Checks the path from the control plane to the agents: the job is offered to an agent that announced its kind.",
  access: access.admin("agents:write"),
  request: { body: jsonBody(DiagnosticJobSchema) },
  responses: {
    201: jsonResponse("The queued job.", JobSchema),
    422: problemResponse("Invalid field; `payload.uri` that is not a storage location names the reason."),
  },
});

const cancel = defineRoute({
  method: "post",
  path: "/api/v1/jobs/{job_id}/cancel",
  tags,
  summary: "Cancel a job of any kind",
  description:
    "A queued (or offered, not yet started) job ends `cancelled` at once. A running job becomes `cancelling`: " +
    "its agent is told to stop without committing, and the job ends `cancelled` when the agent confirms or its lease lapses.",
  access: access.write("agents"),
  request: { params: JobIdParam },
  responses: cancelResponses,
});

export const jobRoutes = newRouter()
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const page = await c.var.services.jobs.list(
      {
        ...(q.kind ? { kinds: [q.kind] } : {}),
        ...(q.status ? { status: q.status } : {}),
        ...(q.table_id ? { tableId: q.table_id } : {}),
      },
      q.offset,
      q.limit,
    );
    const abilities = await c.var.services.agents.connectedAbilities();
    const { clock, jobs } = c.var.services;
    const now = clock.now();
    return c.json({ ...page, items: page.items.map((j) => jobView(j, abilities, now, jobs.kinds)) }, 200);
  })
  .openapi(get, async (c) => {
    const { job_id } = c.req.valid("param");
    const job = await c.var.services.jobs.get(job_id);
    if (!job) throw notFound("job", job_id);
    const abilities = await c.var.services.agents.connectedAbilities();
    return c.json(jobView(job, abilities, c.var.services.clock.now(), c.var.services.jobs.kinds), 200);
  })
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    if (body.payload.uri !== undefined) {
      try {
        parseLocation(body.payload.uri);
      } catch (err) {
        if (!(err instanceof LocationError)) throw err;
        throw invalidField("payload.uri", `'${body.payload.uri}' ${err.message}`);
      }
    }
    const { job } = await c.var.services.jobs.enqueue({
      kind: body.kind,
      payload: body.payload,
      priority: body.priority,
      maxAttempts: body.max_attempts,
      createdBy: principalId(c.var.principal),
    });
    const abilities = await c.var.services.agents.connectedAbilities();
    return c.json(jobView(job, abilities, c.var.services.clock.now(), c.var.services.jobs.kinds), 201);
  })
  .openapi(cancel, async (c) => {
    const job = await c.var.services.cancel.cancel(c.req.valid("param").job_id);
    return c.json(jobView(job, [], c.var.services.clock.now(), c.var.services.jobs.kinds), 202);
  });
