/**
 * Catalog connections (document 1, "Catalog connections and feature flags"): test, create, list,
 * read, update, delete and sync. The browse routes are `browse-routes.ts`. API keys need
 * `connections:read` or `connections:write`.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  CONNECTION_PAGE_MAX,
  ConnectionCreateSchema,
  ConnectionIdParam,
  ConnectionListQuery,
  ConnectionSchema,
  ConnectionTestAnswerSchema,
  ConnectionTestSchema,
  ConnectionUpdateSchema,
  DeleteQuery,
  SyncJobSchema,
  SyncQuery,
  TestJobIdParam,
} from "./schemas.ts";
import { connectionView, syncJobView, testAnswerView } from "./view.ts";

const tags = ["catalog connections"];
const notFoundResponse = { 404: problemResponse("No catalog connection with this id.") };
const SECRETS_NOTE =
  "Secret fields (client_secret, token, password) are stored encrypted and never returned: `has_<field>` says whether one is stored.";

const test = defineRoute({
  method: "post",
  path: "/api/v1/catalog-connections/test",
  tags,
  summary: "Test credentials by listing the catalog's catalogs; nothing is stored",
  description:
    "Queues a `catalog_test` job for an agent allowed the connection's endpoints (`--allow-endpoints`): it signs in and lists the catalogs. " +
    "No connection is created. The credentials travel in the job's payload to the agent only: no job view shows them, and they are removed from the job when it ends " +
    "(a test no agent takes within 10 minutes is cancelled).\n\n" +
    "**The request waits for the answer** for a few seconds (5 by default):\n\n" +
    "- **200 OK**: the job ended within the wait; `ok` says whether the catalog accepted the credentials (`catalogs` lists what it showed) and `message` why not.\n" +
    "- **202 Accepted**: no answer yet (`ok` is null). **Poll GET /api/v1/catalog-connections/test/{job_id}** until `ok` is set.\n" +
    "- **503 Service Unavailable**: no connected agent may run it (none that runs catalog tests is connected, or none may reach the endpoints); the detail says what the connected agents may reach. Nothing is queued.",
  access: access.write("connections"),
  request: { body: jsonBody(ConnectionTestSchema) },
  responses: {
    200: jsonResponse("The agent answered within the wait.", ConnectionTestAnswerSchema),
    202: jsonResponse(
      "No answer yet; poll GET /api/v1/catalog-connections/test/{job_id}.",
      ConnectionTestAnswerSchema,
    ),
    503: problemResponse("No connected agent may reach the endpoints; nothing was queued."),
  },
});

const testResult = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/test/{job_id}",
  tags,
  summary: "The answer of a connection test that answered 202",
  description: "`ok` is null while the job is queued or running.",
  access: access.read("connections"),
  request: { params: TestJobIdParam },
  responses: {
    200: jsonResponse("The test as it stands.", ConnectionTestAnswerSchema),
    404: problemResponse("No connection test job with this id."),
  },
});

const create = defineRoute({
  method: "post",
  path: "/api/v1/catalog-connections",
  tags,
  summary: "Create a catalog connection",
  description: `Nothing is synced until POST /api/v1/catalog-connections/{connection_id}/sync, or the scheduler's first full sync one \`sync_interval_hours\` after creation. ${SECRETS_NOTE}`,
  access: access.write("connections"),
  request: { body: jsonBody(ConnectionCreateSchema) },
  responses: {
    201: jsonResponse("Created.", ConnectionSchema),
    409: problemResponse("A connection with this name exists."),
    422: problemResponse("A missing, malformed or foreign credential field; `errors` names each field."),
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections",
  tags,
  summary: "List catalog connections",
  description: `Ordered by name. Maximum \`limit\` is ${CONNECTION_PAGE_MAX}.`,
  access: access.read("connections"),
  request: { query: ConnectionListQuery },
  responses: {
    200: jsonResponse("A page of connections.", pageOf(ConnectionSchema, "CatalogConnectionPage")),
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/catalog-connections/{connection_id}",
  tags,
  summary: "Get a catalog connection",
  description: SECRETS_NOTE,
  access: access.read("connections"),
  request: { params: ConnectionIdParam },
  responses: { 200: jsonResponse("The connection.", ConnectionSchema), ...notFoundResponse },
});

const update = defineRoute({
  method: "put",
  path: "/api/v1/catalog-connections/{connection_id}",
  tags,
  summary: "Update a catalog connection (partial)",
  description:
    "Any subset of the fields. The type never changes (422 on `type`); a field of another type is a 422 naming it. " +
    "A secret sent is re-encrypted and replaces the stored one; a sync already queued keeps the credentials it was queued with.",
  access: access.write("connections"),
  request: { params: ConnectionIdParam, body: jsonBody(ConnectionUpdateSchema) },
  responses: {
    200: jsonResponse("The updated connection.", ConnectionSchema),
    ...notFoundResponse,
    409: problemResponse("Another connection has this name."),
    422: problemResponse(
      "A field of another type, a type change, or credentials no longer valid for the type; `errors` names each field.",
    ),
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/v1/catalog-connections/{connection_id}",
  tags,
  summary: "Delete a catalog connection and everything synced from it",
  description:
    "Irreversible, so `?confirm=true` is required: without it (or with any other value) the answer is 422 naming `confirm` and nothing changes. " +
    "Deletes the connection and all its synced tables at once; its queued or running syncs are cancelled, and one that ends anyway writes nothing. " +
    "Tables onboarded through it are kept, flagged `catalog_table_deleted` as when a sync drops their catalog table, with their schedules disabled (no job can load them any more).",
  access: access.write("connections"),
  request: { params: ConnectionIdParam, query: DeleteQuery },
  responses: {
    204: { description: "Deleted." },
    ...notFoundResponse,
    422: problemResponse("`confirm` is not `true`; nothing was deleted."),
  },
});

const sync = defineRoute({
  method: "post",
  path: "/api/v1/catalog-connections/{connection_id}/sync",
  tags,
  summary: "Sync the connection's tables in the background",
  description:
    "Answers **202 Accepted** with the queued `catalog_sync` job; the connection's `sync_status` is `running` until it ends `completed` or `failed`. " +
    "An agent allowed the connection's endpoints walks the catalogs (or the one named) and reports every table whose size is at least the " +
    "min_eligible_table_size_gb setting (0.1 GB by default, GB of 2^30 bytes; read when the sync is queued, so a change applies to the next sync), or whose size it can't tell. " +
    "The sync's end replaces what the connection holds for those catalogs: reported tables are written, tables no longer reported are marked deleted (`deleted_at`), not removed.\n\n" +
    "409 when the connection is inactive, or when a sync of it is queued or running (the detail names it; of two requests at the same moment one is queued). " +
    "The job's result keeps counts only (`summary`); the tables are read with GET .../tables.",
  access: access.write("connections"),
  request: { params: ConnectionIdParam, query: SyncQuery },
  responses: {
    202: jsonResponse("Queued.", SyncJobSchema),
    ...notFoundResponse,
    409: problemResponse("The connection is inactive, or a sync of it is active (named)."),
    422: problemResponse("`mode=incremental` on a connection that is not a workspace, or a malformed query."),
  },
});

export const catalogConnectionRoutes = newRouter()
  .openapi(test, async (c) => {
    const { job, answered } = await c.var.services.catalogJobs.test(c.req.valid("json"), {
      actor: principalId(c.var.principal),
      connected: await c.var.services.agents.connectedAbilities(),
      signal: c.req.raw.signal,
    });
    return answered ? c.json(testAnswerView(job), 200) : c.json(testAnswerView(job), 202);
  })
  .openapi(testResult, async (c) =>
    c.json(testAnswerView(await c.var.services.catalogJobs.testJob(c.req.valid("param").job_id)), 200),
  )
  .openapi(create, async (c) => {
    const row = await c.var.services.catalogConnections.create(
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(connectionView(row), 201);
  })
  .openapi(list, async (c) => {
    const { offset, limit, is_active } = c.req.valid("query");
    const active = is_active === undefined ? undefined : is_active === "true";
    const page = await c.var.services.catalogConnections.list(active, offset, limit);
    return c.json({ ...page, items: page.items.map(connectionView) }, 200);
  })
  .openapi(get, async (c) =>
    c.json(
      connectionView(await c.var.services.catalogConnections.get(c.req.valid("param").connection_id)),
      200,
    ),
  )
  .openapi(update, async (c) => {
    const row = await c.var.services.catalogConnections.update(
      c.req.valid("param").connection_id,
      c.req.valid("json"),
    );
    return c.json(connectionView(row), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.catalogConnections.delete(c.req.valid("param").connection_id);
    return c.body(null, 204);
  })
  .openapi(sync, async (c) => {
    const job = await c.var.services.catalogJobs.sync(
      c.req.valid("param").connection_id,
      c.req.valid("query"),
      principalId(c.var.principal),
    );
    return c.json(syncJobView(job), 202);
  });
