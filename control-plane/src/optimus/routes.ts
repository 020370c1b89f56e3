/**
 * Optimus submission routes (document 1, "Optimus"): `/api/v1/optimus/runs` create, list, get,
 * update, delete, sync-now and retry. The spec's `{submission_id}` and `{run_id}` under
 * `/optimus/runs/` are the same submission id. API keys need `optimus:read` or `optimus:write`;
 * Viewers read, Editors write.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  RunQueuedSchema,
  SUBMISSION_PAGE_MAX,
  SubmissionCreateSchema,
  SubmissionDetailSchema,
  SubmissionIdParam,
  SubmissionListQuery,
  SubmissionSchema,
  SubmissionUpdateSchema,
} from "./schemas.ts";
import type { RunWithJob } from "./service.ts";
import { runView, submissionDetailView, submissionView } from "./view.ts";

const tags = ["optimus"];
const BASE = "/api/v1/optimus/runs";
const read = access.read("optimus");
const write = access.write("optimus");
const noSubmission = { 404: problemResponse("No submission with this id.") };
const RUN_NOTE =
  "A run is a `query_log_analysis` job (follow it with GET /api/v1/jobs/{job_id}); it stays queued until an agent that announces the kind and is allowed the query-log location takes it.";

const create = defineRoute({
  method: "post",
  path: BASE,
  tags,
  summary: "Submit query logs for Optimus",
  description:
    "The submission runs every UTC day at the first 15-minute check at or after `daily_sync_time_utc`, at most once a day, while `active`. " +
    "A malformed field, or a `query_logs_uri` that is not on s3, gs, abfs/azure or file, is a 422 naming it.",
  access: write,
  request: { body: jsonBody(SubmissionCreateSchema) },
  responses: {
    201: jsonResponse("Created (status `pending`, or `paused` when not active).", SubmissionSchema),
    422: problemResponse("A missing or malformed field; `errors` names it."),
  },
});

const list = defineRoute({
  method: "get",
  path: BASE,
  tags,
  summary: "List submissions",
  description: `Newest first, each with its effective status. Maximum \`limit\` is ${SUBMISSION_PAGE_MAX}.`,
  access: read,
  request: { query: SubmissionListQuery },
  responses: {
    200: jsonResponse("A page of submissions.", pageOf(SubmissionSchema, "OptimusSubmissionPage")),
  },
});

const get = defineRoute({
  method: "get",
  path: `${BASE}/{submission_id}`,
  tags,
  summary: "A submission with its runs and the latest run's summary",
  access: read,
  request: { params: SubmissionIdParam },
  responses: { 200: jsonResponse("The submission.", SubmissionDetailSchema), ...noSubmission },
});

const update = defineRoute({
  method: "patch",
  path: `${BASE}/{submission_id}`,
  tags,
  summary: "Update a submission (partial); pause or resume it",
  description:
    "`active: false` pauses it (the schedule never fires it; a run already queued goes on); `active: true` resumes it. Changes apply from the next run.",
  access: write,
  request: { params: SubmissionIdParam, body: jsonBody(SubmissionUpdateSchema) },
  responses: {
    200: jsonResponse("The updated submission.", SubmissionSchema),
    ...noSubmission,
    422: problemResponse("A malformed field; `errors` names it."),
  },
});

const remove = defineRoute({
  method: "delete",
  path: `${BASE}/{submission_id}`,
  tags,
  summary: "Delete a submission and its runs",
  description:
    "Its active run's job is cancelled; its runs (and what later parts keep per submission) go with it.",
  access: write,
  request: { params: SubmissionIdParam },
  responses: { 204: { description: "Deleted." }, ...noSubmission },
});

const syncNow = defineRoute({
  method: "post",
  path: `${BASE}/{submission_id}/sync-now`,
  tags,
  summary: "Run the analysis now, out of cycle",
  description: `**202** with the queued run; it does not take the day's scheduled run. **409** while a run of the submission is queued or running. ${RUN_NOTE}`,
  access: write,
  request: { params: SubmissionIdParam },
  responses: {
    202: jsonResponse("Queued.", RunQueuedSchema),
    ...noSubmission,
    409: problemResponse("A run of the submission is active (the detail names its job)."),
  },
});

const retry = defineRoute({
  method: "post",
  path: `${BASE}/{submission_id}/retry`,
  tags,
  summary: "Retry a failed submission",
  description: `Moves a \`failed\` submission to a new run (**202**, status \`running\`). **422** naming \`status\` unless the effective status is \`failed\`. ${RUN_NOTE}`,
  access: write,
  request: { params: SubmissionIdParam },
  responses: {
    202: jsonResponse("Queued.", RunQueuedSchema),
    ...noSubmission,
    409: problemResponse("A run of the submission is active."),
    422: problemResponse("The submission's status is not failed."),
  },
});

const queued = (submissionId: string, run: RunWithJob) => ({ ...runView(run), submission_id: submissionId });

export const optimusRoutes = newRouter()
  .openapi(create, async (c) => {
    const row = await c.var.services.optimus.create(c.req.valid("json"), principalId(c.var.principal));
    return c.json(submissionView(row), 201);
  })
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.optimus.list(offset, limit);
    return c.json({ ...page, items: page.items.map(submissionView) }, 200);
  })
  .openapi(get, async (c) => {
    const id = c.req.valid("param").submission_id;
    const submission = await c.var.services.optimus.get(id);
    return c.json(submissionDetailView(submission, await c.var.services.optimus.runs(id)), 200);
  })
  .openapi(update, async (c) => {
    const id = c.req.valid("param").submission_id;
    return c.json(submissionView(await c.var.services.optimus.update(id, c.req.valid("json"))), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.optimus.delete(c.req.valid("param").submission_id);
    return c.body(null, 204);
  })
  .openapi(syncNow, async (c) => {
    const id = c.req.valid("param").submission_id;
    return c.json(queued(id, await c.var.services.optimus.syncNow(id, principalId(c.var.principal))), 202);
  })
  .openapi(retry, async (c) => {
    const id = c.req.valid("param").submission_id;
    return c.json(queued(id, await c.var.services.optimus.retry(id, principalId(c.var.principal))), 202);
  });
