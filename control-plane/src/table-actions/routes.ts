/**
 * Document 2's actions and runs of a catalog table: `GET/POST .../tables/{table_id}/actions`,
 * `GET/POST .../actions/{action_id}`, `GET .../runs`, `GET/POST .../runs/{run_id}`. Actions and runs
 * are views of document 1's jobs (`action_id` and `run_id` are job ids). Viewer reads, Editor
 * triggers; API keys need `catalogs:read` or `catalogs:write`, as for the rest of `/api/v1/catalogs`.
 */
import type { Context } from "hono";
import { access, principalId } from "../auth/access.ts";
import { TableIdParam } from "../catalogs/schemas.ts";
import type { Job } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { keysetPageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { jobView } from "../jobs/view.ts";
import {
  ACTIONS_PAGE,
  ActionDetailSchema,
  ActionListSchema,
  ActionParams,
  ActionRequestSchema,
  ActionsQuery,
  RUNS_PAGE,
  RunDetailSchema,
  RunParams,
  RunSchema,
  RunsQuery,
} from "./schemas.ts";
import { actionView, runView } from "./view.ts";

const tags = ["catalogs"];
const BASE = "/api/v1/catalogs/{catalog_id}/tables/{table_id}";
const NO_TABLE = "No live catalog table with this catalog_id and table_id.";
const ACTION_JOBS =
  "compress and improve_layout run as a `crunch` job (improve_layout with its `layout`), compact as `optimize`, expire_snapshots as `vacuum`, expire_partitions as `partition_expiration`, each on the table's Lakesmith table with trigger `action`.";
const HOLD =
  "A table not onboarded yet is onboarded by its first action (a Lakesmith table linked to it, as POST /api/v1/tables with catalog_connection_id and catalog_table); the action's job then waits, SCHEDULED with `waiting_for_onboarding: true`, until onboarding succeeds, and is cancelled with the reason if onboarding fails.";

const list = defineRoute({
  method: "get",
  path: `${BASE}/actions`,
  tags,
  summary: "The actions a table supports, and the actions triggered on it",
  description: `\`supported\`: each action the table can take (by its format, partitioning and the catalog it commits through), with its parameters and their defaults for this table; \`unsupported\`: the others with the reason. \`items\`: the actions triggered on the table, newest first, keyset-paged (page_size default ${ACTIONS_PAGE.default}, maximum ${ACTIONS_PAGE.max}).`,
  access: access.read("catalogs"),
  request: { params: TableIdParam, query: ActionsQuery },
  responses: {
    200: jsonResponse("Supported actions and a page of triggered ones.", ActionListSchema),
    404: problemResponse(NO_TABLE),
  },
});

const trigger = defineRoute({
  method: "post",
  path: `${BASE}/actions`,
  tags,
  summary: "Trigger an action now or at a time",
  description: `${ACTION_JOBS} \`schedule.at\` later than now: not offered before then. ${HOLD} An action the table can't take is a 422 naming \`action\` with the reason; one that would overlap the same kind's active job on the table is a 409 naming that job.`,
  access: access.write("catalogs"),
  request: { params: TableIdParam, body: jsonBody(ActionRequestSchema) },
  responses: {
    202: jsonResponse("The action, queued.", ActionDetailSchema),
    404: problemResponse(NO_TABLE),
    409: problemResponse(
      "An overlapping job of the table is active (the detail names it), or its onboarding failed.",
    ),
    422: problemResponse("Invalid field, or an action the table can't take (`action`, with the reason)."),
  },
});

const get = defineRoute({
  method: "get",
  path: `${BASE}/actions/{action_id}`,
  tags,
  summary: "One action with its job and result",
  access: access.read("catalogs"),
  request: { params: ActionParams },
  responses: {
    200: jsonResponse("The action.", ActionDetailSchema),
    404: problemResponse("No such table, or no such action of it."),
  },
});

const retry = defineRoute({
  method: "post",
  path: `${BASE}/actions/{action_id}`,
  tags,
  summary: "Retry a failed or cancelled action",
  description:
    "A new action (a new job, `action_id` its id) of the same job kind and parameters, now; its catalog reference and a vacuum's kept paths are read anew.",
  access: access.write("catalogs"),
  request: { params: ActionParams },
  responses: {
    202: jsonResponse("The new action.", ActionDetailSchema),
    404: problemResponse("No such table, or no such action of it."),
    409: problemResponse("The action has not failed or been cancelled, or an overlapping job is active."),
  },
});

const runs = defineRoute({
  method: "get",
  path: `${BASE}/runs`,
  tags,
  summary: "A table's runs: every job on its Lakesmith table",
  description: `Every job of the table's Lakesmith table, policy or schedule runs and actions alike (crunch, optimize, vacuum, partition_expiration, onboarding, recover, hard_delete, ...), newest first, keyset-paged (page_size default ${RUNS_PAGE.default}, maximum ${RUNS_PAGE.max}; more is a 422). \`start\` and \`end\` bound the creation time (start inclusive, end exclusive). Empty until the table is onboarded.`,
  access: access.read("catalogs"),
  request: { params: TableIdParam, query: RunsQuery },
  responses: {
    200: jsonResponse("A page of runs.", keysetPageOf(RunSchema, "TableRunPage")),
    404: problemResponse(NO_TABLE),
  },
});

const run = defineRoute({
  method: "get",
  path: `${BASE}/runs/{run_id}`,
  tags,
  summary: "One run with its job",
  access: access.read("catalogs"),
  request: { params: RunParams },
  responses: {
    200: jsonResponse("The run.", RunDetailSchema),
    404: problemResponse("No such table, or no such run of it."),
  },
});

const rerun = defineRoute({
  method: "post",
  path: `${BASE}/runs/{run_id}`,
  tags,
  summary: "Rerun a finished run, or retry a failed one",
  description:
    "A crunch, optimize, vacuum or partition_expiration run: a new job of the same kind and parameters, trigger `action`, now (its catalog reference and a vacuum's kept paths read anew). An onboarding run: onboarding is retried (only a failed one). Other kinds are run again through their own routes (409).",
  access: access.write("catalogs"),
  request: { params: RunParams },
  responses: {
    202: jsonResponse("The new run.", RunDetailSchema),
    404: problemResponse("No such table, or no such run of it."),
    409: problemResponse(
      "The run is still active, an overlapping job is active, or its kind is not rerun here.",
    ),
  },
});

/** The job's view with why it waits, as document 1's job routes show it. */
async function detail(c: Context<AppEnv>, job: Job) {
  const { agents, clock, jobs } = c.var.services;
  return jobView(job, await agents.connectedAbilities(), clock.now(), jobs.kinds);
}

export const tableActionRoutes = newRouter()
  .openapi(list, async (c) => {
    const { catalog_id, table_id } = c.req.valid("param");
    const { supported, unsupported, page } = await c.var.services.tableActions.list(
      catalog_id,
      table_id,
      c.req.valid("query"),
    );
    const now = c.var.services.clock.now();
    return c.json({ supported, unsupported, ...page, items: page.items.map((j) => actionView(j, now)) }, 200);
  })
  .openapi(trigger, async (c) => {
    const { catalog_id, table_id } = c.req.valid("param");
    const job = await c.var.services.tableActions.trigger(
      catalog_id,
      table_id,
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json({ ...actionView(job, c.var.services.clock.now()), job: await detail(c, job) }, 202);
  })
  .openapi(get, async (c) => {
    const { catalog_id, table_id, action_id } = c.req.valid("param");
    const { job } = await c.var.services.tableActions.get(catalog_id, table_id, action_id);
    return c.json({ ...actionView(job, c.var.services.clock.now()), job: await detail(c, job) }, 200);
  })
  .openapi(retry, async (c) => {
    const { catalog_id, table_id, action_id } = c.req.valid("param");
    const job = await c.var.services.tableActions.retry(
      catalog_id,
      table_id,
      action_id,
      principalId(c.var.principal),
    );
    return c.json({ ...actionView(job, c.var.services.clock.now()), job: await detail(c, job) }, 202);
  })
  .openapi(runs, async (c) => {
    const { catalog_id, table_id } = c.req.valid("param");
    const now = c.var.services.clock.now();
    const page = await c.var.services.tableRuns.list(catalog_id, table_id, c.req.valid("query"), now);
    return c.json({ ...page, items: page.items.map((j) => runView(j, now)) }, 200);
  })
  .openapi(run, async (c) => {
    const { catalog_id, table_id, run_id } = c.req.valid("param");
    const { job } = await c.var.services.tableRuns.get(catalog_id, table_id, run_id);
    return c.json({ ...runView(job, c.var.services.clock.now()), job: await detail(c, job) }, 200);
  })
  .openapi(rerun, async (c) => {
    const { catalog_id, table_id, run_id } = c.req.valid("param");
    const { job, target } = await c.var.services.tableRuns.get(catalog_id, table_id, run_id);
    if (!target.table) throw new Error("a run was found for a table without its Lakesmith table");
    const again = await c.var.services.tableRuns.again(job, target.table, principalId(c.var.principal));
    return c.json({ ...runView(again, c.var.services.clock.now()), job: await detail(c, again) }, 202);
  });
