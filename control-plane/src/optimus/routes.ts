/**
 * Optimus routes (document 1, "Optimus"): `/api/v1/optimus/runs` create, list, get, update, delete,
 * sync-now and retry; the latest run's recommendations and tables, a table's metrics; apply a
 * recommendation, and the extensions dismiss and revert (`/dismiss`, `/revert`, spelled like
 * `/apply`, `/sync-now` and `/retry`). The spec's `{submission_id}` and `{run_id}` under
 * `/optimus/runs/` are the same submission id. API keys need `optimus:read` or `optimus:write`;
 * Viewers read, Editors write.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import type { Services } from "../services.ts";
import { RecommendationActions } from "./apply.ts";
import { OptimusRecommendations } from "./recommendations.ts";
import {
  RECOMMENDATION_PAGE_MAX,
  RecommendationAppliedSchema,
  RecommendationApplySchema,
  RecommendationIdParam,
  RecommendationListQuery,
  RecommendationPageSchema,
  RecommendationRevertedSchema,
  RecommendationSchema,
  RunQueuedSchema,
  SUBMISSION_PAGE_MAX,
  SubmissionCreateSchema,
  SubmissionDetailSchema,
  SubmissionIdParam,
  SubmissionListQuery,
  SubmissionSchema,
  SubmissionUpdateSchema,
  TableListSchema,
  TableMetricsParams,
  TableMetricsQuery,
  TableMetricsSchema,
} from "./schemas.ts";
import type { RunWithJob } from "./service.ts";
import {
  appliedView,
  recommendationView,
  revertedView,
  runView,
  submissionDetailView,
  submissionView,
  tableMetricsView,
  tableSummaryView,
} from "./view.ts";

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
    "Creates the submission and, when `active`, triggers its first run at once (trigger `created`). " +
    "Then it runs every UTC day at the first 15-minute check at or after `daily_sync_time_utc`, at most once a day, while `active`. " +
    "A malformed field, or a `query_logs_uri` that is not on s3, gs, abfs/azure or file, is a 422 naming it.",
  access: write,
  request: { body: jsonBody(SubmissionCreateSchema) },
  responses: {
    201: jsonResponse(
      "Created (status `running`: its first run is queued; `paused` when not active).",
      SubmissionSchema,
    ),
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

const REC_BASE = "/api/v1/optimus/recommendations";
const noRecommendation = { 404: problemResponse("No recommendation with this id.") };
const LATEST =
  "Of the submission's latest run whose analysis succeeded (none before one: an empty list, `run_id` null).";

const recommendations = defineRoute({
  method: "get",
  path: `${BASE}/{submission_id}/recommendations`,
  tags,
  summary: "The latest run's recommendations",
  description: `${LATEST} The largest \`bytes_saved_per_day\` first. Maximum \`limit\` is ${RECOMMENDATION_PAGE_MAX}.`,
  access: read,
  request: { params: SubmissionIdParam, query: RecommendationListQuery },
  responses: { 200: jsonResponse("A page of recommendations.", RecommendationPageSchema), ...noSubmission },
});

const tables = defineRoute({
  method: "get",
  path: `${BASE}/{submission_id}/tables`,
  tags,
  summary: "The tables with at least one recommendation in the latest run",
  description: `${LATEST} By \`table_fqn\`, each with its workload in the run.`,
  access: read,
  request: { params: SubmissionIdParam },
  responses: { 200: jsonResponse("The tables.", TableListSchema), ...noSubmission },
});

const metrics = defineRoute({
  method: "get",
  path: `${BASE}/{submission_id}/tables/{table_fqn}/metrics`,
  tags,
  summary: "A table's per-day metrics with applied-recommendation markers",
  description:
    "One entry per UTC day of the last `days` days, today included, oldest first; a day no run measured has every figure null. " +
    "Each measured day: the logged queries and bytes, the skipping measured against the files' statistics, and the prediction in force then. " +
    "Markers: the table's recommendations applied while the window lasted, with when they were applied and reverted. " +
    "**404** for a `table_fqn` the submission has no recommendation or measured day of. **422** naming `days` outside 1-365.",
  access: read,
  request: { params: TableMetricsParams, query: TableMetricsQuery },
  responses: {
    200: jsonResponse("The series.", TableMetricsSchema),
    404: problemResponse("No such submission, or no data of this table in it."),
  },
});

const apply = defineRoute({
  method: "post",
  path: `${REC_BASE}/{recommendation_id}/apply`,
  tags,
  summary: "Apply a recommendation to the table's own policy",
  description:
    "Writes `improve_layout: {layout}` into the table's own table-level policy (keeping that action's schedule); the next rewrite of the table uses the layout. " +
    "A table that only inherits a catalog or prefix policy gets its own, created with the inherited policy's actions the table can take and its settings (the most specific policy is the whole effective policy), so it keeps running what it ran; the catalog or prefix policy is never changed. " +
    "**409** unless the recommendation is `open` (naming its status), when the table is not managed (no catalog table, or no policy applies: the answer says how to manage it), or when its own policy is disabled. **422** naming `layout` when the table's format can't take a layout.",
  access: write,
  request: { params: RecommendationIdParam, body: jsonBody(RecommendationApplySchema) },
  responses: {
    200: jsonResponse("Applied.", RecommendationAppliedSchema),
    ...noRecommendation,
    409: problemResponse("Not open, not managed, or the table's own policy is disabled."),
    422: problemResponse("The table can't take `layout`, or a malformed body."),
  },
});

const dismiss = defineRoute({
  method: "post",
  path: `${REC_BASE}/{recommendation_id}/dismiss`,
  tags,
  summary: "Dismiss a recommendation (extension)",
  description:
    "An `open` recommendation becomes `dismissed`; nothing else changes. **409** naming its status otherwise.",
  access: write,
  request: { params: RecommendationIdParam },
  responses: {
    200: jsonResponse("Dismissed.", RecommendationSchema),
    ...noRecommendation,
    409: problemResponse("Not open."),
  },
});

const revert = defineRoute({
  method: "post",
  path: `${REC_BASE}/{recommendation_id}/revert`,
  tags,
  summary: "Revert an applied recommendation (extension)",
  description:
    "An `applied` recommendation becomes `reverted`, and the previous layout comes back from the next rewrite: a table policy the apply created and nobody changed since is deleted (the inherited policy applies again); otherwise the previous `improve_layout` is put back, or removed when there was none. " +
    "When the policy no longer holds the applied layout (deleted or changed since) it is left alone (`policy_change: none`). **409** naming its status unless `applied`.",
  access: write,
  request: { params: RecommendationIdParam },
  responses: {
    200: jsonResponse("Reverted.", RecommendationRevertedSchema),
    ...noRecommendation,
    409: problemResponse("Not applied."),
  },
});

const recommendationsOf = (s: Services) => new OptimusRecommendations(s.db, s.clock);
const actionsOf = (s: Services) =>
  new RecommendationActions(s.db, s.clock, recommendationsOf(s), s.policies, s.tableActions);

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
  })
  .openapi(recommendations, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const id = c.req.valid("param").submission_id;
    const page = await recommendationsOf(c.var.services).list(id, offset, limit);
    const { runId, items, ...rest } = page;
    return c.json({ ...rest, run_id: runId, items: items.map(recommendationView) }, 200);
  })
  .openapi(tables, async (c) => {
    const id = c.req.valid("param").submission_id;
    const { runId, items } = await recommendationsOf(c.var.services).tables(id);
    return c.json({ submission_id: id, run_id: runId, items: items.map(tableSummaryView) }, 200);
  })
  .openapi(metrics, async (c) => {
    const { submission_id, table_fqn } = c.req.valid("param");
    const series = await recommendationsOf(c.var.services).metrics(
      submission_id,
      table_fqn,
      c.req.valid("query").days,
    );
    return c.json(tableMetricsView(submission_id, series), 200);
  })
  .openapi(apply, async (c) => {
    const id = c.req.valid("param").recommendation_id;
    const applied = await actionsOf(c.var.services).apply(
      id,
      c.req.valid("json").run_now,
      principalId(c.var.principal),
    );
    return c.json(appliedView(applied), 200);
  })
  .openapi(dismiss, async (c) => {
    const id = c.req.valid("param").recommendation_id;
    return c.json(
      recommendationView(await actionsOf(c.var.services).dismiss(id, principalId(c.var.principal))),
      200,
    );
  })
  .openapi(revert, async (c) => {
    const id = c.req.valid("param").recommendation_id;
    return c.json(
      revertedView(await actionsOf(c.var.services).revert(id, principalId(c.var.principal))),
      200,
    );
  });
