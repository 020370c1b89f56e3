/**
 * A managed prefix's actions and runs (document 1, "Object maintenance"): POST an ad-hoc action,
 * list the actions newest first, and list the runs (conversions and removals, scheduled or ad hoc)
 * with their metrics. API keys need `object-maintenance:read` or `object-maintenance:write`.
 */
import { access, principalId } from "../../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../../http/openapi.ts";
import { pageOf } from "../../http/pagination.ts";
import { defineRoute } from "../../http/route.ts";
import { newRouter } from "../../http/router.ts";
import { PrefixIdParam } from "../schemas.ts";
import {
  ActionRequestSchema,
  PrefixActionSchema,
  PrefixRunSchema,
  RUN_PAGE_MAX,
  RunListQuery,
} from "./schemas.ts";
import { prefixActionView, prefixRunView } from "./view.ts";

const tags = ["object maintenance"];
const BASE = "/api/v1/object-maintenance/prefixes/{prefix_id}";
const noPrefix = { 404: problemResponse("No prefix with this id.") };

const act = defineRoute({
  method: "post",
  path: `${BASE}/actions`,
  tags,
  summary: "Trigger an ad-hoc action on the prefix",
  description:
    "Queues the action's agent job now, with the active policy version's settings: **202** with the action. " +
    "422 naming `management_state` when the prefix is not active (enable it), or `action` when the policy has no such step. " +
    "409 while a conversion or removal of the prefix (or of its target prefix) is active, naming that job.",
  access: access.write("object-maintenance"),
  request: { params: PrefixIdParam, body: jsonBody(ActionRequestSchema) },
  responses: {
    202: jsonResponse("Queued.", PrefixActionSchema),
    ...noPrefix,
    409: problemResponse("A conversion or removal of the prefix is active."),
    422: problemResponse(
      "The prefix is not active, or its policy has no such step; `errors` names the field.",
    ),
  },
});

const listActions = defineRoute({
  method: "get",
  path: `${BASE}/actions`,
  tags,
  summary: "The prefix's ad-hoc actions, newest first",
  description: `Maximum \`limit\` is ${RUN_PAGE_MAX}.`,
  access: access.read("object-maintenance"),
  request: { params: PrefixIdParam, query: RunListQuery },
  responses: {
    200: jsonResponse("A page of actions.", pageOf(PrefixActionSchema, "PrefixActionPage")),
    ...noPrefix,
  },
});

const listRuns = defineRoute({
  method: "get",
  path: `${BASE}/runs`,
  tags,
  summary: "The prefix's conversion and maintenance jobs, newest first",
  description:
    "One list of every conversion and removal of converted inputs, scheduled or ad hoc, each with its job's status and, once it succeeded, its metrics " +
    `(bytes before and after, DRR, rows, files in and out). Maximum \`limit\` is ${RUN_PAGE_MAX}.`,
  access: access.read("object-maintenance"),
  request: { params: PrefixIdParam, query: RunListQuery },
  responses: { 200: jsonResponse("A page of runs.", pageOf(PrefixRunSchema, "PrefixRunPage")), ...noPrefix },
});

export const prefixRunRoutes = newRouter()
  .openapi(act, async (c) => {
    const { run, job } = await c.var.services.prefixRuns.act(
      c.req.valid("param").prefix_id,
      c.req.valid("json").action,
      principalId(c.var.principal),
    );
    return c.json(prefixActionView({ run, job }), 202);
  })
  .openapi(listActions, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.prefixRuns.list(
      c.req.valid("param").prefix_id,
      "action",
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(prefixActionView) }, 200);
  })
  .openapi(listRuns, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.prefixRuns.list(
      c.req.valid("param").prefix_id,
      undefined,
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(prefixRunView) }, 200);
  });
