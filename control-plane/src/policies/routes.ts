/**
 * Document 2's policy routes, and the extensions users need that it lacks (list, read, replace,
 * enable, disable and delete of a catalog's policies under `/catalogs/{catalog_id}/policies`; the
 * per-catalog emergency stop). Viewer reads; Editor writes (API keys `policies:read|write`); the
 * emergency stop is Admin's.
 */
import { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { CatalogIdParam, TableIdParam } from "../catalogs/schemas.ts";
import { POLICY_SCOPES } from "../db/schema.ts";
import { defineCustomMethod, mountCustomMethod } from "../http/custom-method.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { keysetPageOf, keysetQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { PolicyActionsSchema, PolicyBodySchema, ScheduleSchema } from "./schemas.ts";

const tags = ["policies"];
const EXTENSION = "Extension to document 2.";
const SCOPE_RULE =
  "One policy per scope: a POST on a scope that has a policy replaces it (200, same `policy_id`, `version` + 1); a new one answers 201. The tables the policy covers become managed at once (`GET /api/v1/managedtables`); each table's effective policy is its own, else the longest matching prefix's, else the catalog's, enabled ones only. Tables a later sync adds under a catalog or prefix policy are picked up by the engine's next tick.";

export const PolicySchema = z
  .object({
    policy_id: z.string(),
    catalog_id: z.string(),
    scope: z.enum(POLICY_SCOPES).openapi({
      description:
        "`catalog` (the catalog's default), `prefix` (a namespace prefix's default) or `table` (explicit).",
    }),
    prefix: z
      .string()
      .nullable()
      .openapi({ description: "The namespace prefix of a prefix policy; null otherwise." }),
    table_id: z.string().nullable().openapi({ description: "The table of a table policy; null otherwise." }),
    name: z.string().nullable(),
    enabled: z.boolean(),
    actions: PolicyActionsSchema,
    schedule: ScheduleSchema.nullable(),
    target_file_size_mb: z.number().int().nullable(),
    lookback_days: z.number().int(),
    version: z.number().int().openapi({ description: "Goes up with every change." }),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  })
  .openapi("Policy");

const TablePolicySchema = PolicySchema.extend({
  effective: z.boolean().openapi({ description: "Whether this is the table's effective policy." }),
}).openapi("TablePolicy");

const PolicyIdParam = CatalogIdParam.extend({
  policy_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "policy_id", in: "path" } }),
});
const ManagedTableParam = z.object({
  table_id: z
    .string()
    .min(1)
    .max(2048)
    .openapi({ param: { name: "table_id", in: "path" } }),
});
const ManagedPolicyParam = ManagedTableParam.extend({
  policy_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "policy_id", in: "path" } }),
});
const PrefixQuery = z.object({
  prefix: z.string().min(1).max(1024).optional().openapi({
    description:
      "A namespace prefix, levels joined by `.`, matched by whole levels: `sales` covers `sales` and `sales.eu`, not `salesforce`. Absent: the catalog's default policy.",
  }),
});
const ListQuery = keysetQuery(100, 1000).extend({
  scope: z.enum(POLICY_SCOPES).optional().openapi({ description: "Only policies of this scope." }),
});
const StopSchema = z
  .object({
    paused: z.boolean(),
    paused_at: z.string().nullable(),
  })
  .openapi("CatalogPolicyStop");

const created = (what: string) => ({
  200: jsonResponse(`The ${what} replaced the scope's policy.`, PolicySchema),
  201: jsonResponse(`The ${what} created.`, PolicySchema),
});

const putCatalog = defineRoute({
  method: "post",
  path: "/api/v1/catalogs/{catalog_id}/policies",
  tags,
  summary: "Create or replace the catalog's default policy, or a namespace prefix's",
  description: `Without \`prefix\`: the catalog's default policy; with it, the prefix's. A catalog or prefix policy may name actions some of its tables can't take: those tables skip them and say why (managed table detail, preview). ${SCOPE_RULE}`,
  access: access.write("policies"),
  request: { params: CatalogIdParam, query: PrefixQuery, body: jsonBody(PolicyBodySchema) },
  responses: { ...created("policy"), 404: problemResponse("No such catalog.") },
});

const putTable = defineRoute({
  method: "post",
  path: "/api/v1/catalogs/{catalog_id}/tables/{table_id}/policies",
  tags,
  summary: "Create or replace a table's explicit policy",
  description: `An action the table can't take (document 2: the set varies for Hive, Iceberg and Delta, partitioned or not; see GET .../actions) is a 422 naming \`actions.<action>\`. ${SCOPE_RULE}`,
  access: access.write("policies"),
  request: { params: TableIdParam, body: jsonBody(PolicyBodySchema) },
  responses: { ...created("policy"), 404: problemResponse("No such catalog or live table.") },
});

const list = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/policies",
  tags,
  summary: "The catalog's policies",
  description: `${EXTENSION} The catalog's default first, then prefix policies, then table policies, each by prefix or table name. Keyset paging as the catalog lists.`,
  access: access.read("policies"),
  request: { params: CatalogIdParam, query: ListQuery },
  responses: {
    200: jsonResponse("A page of policies.", keysetPageOf(PolicySchema, "PolicyPage")),
    404: problemResponse("No such catalog."),
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}",
  tags,
  summary: "One policy of the catalog",
  description: EXTENSION,
  access: access.read("policies"),
  request: { params: PolicyIdParam },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const replace = defineRoute({
  method: "put",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}",
  tags,
  summary: "Replace a policy's body",
  description: `${EXTENSION} Its scope stays; \`version\` goes up; the tables it covers follow at once.`,
  access: access.write("policies"),
  request: { params: PolicyIdParam, body: jsonBody(PolicyBodySchema) },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}",
  tags,
  summary: "Delete a policy of any scope",
  description: `${EXTENSION} Tables it was the last policy of become unmanaged; their Lakesmith tables, jobs and history stay.`,
  access: access.write("policies"),
  request: { params: PolicyIdParam },
  responses: { 204: { description: "Deleted." }, 404: problemResponse("No such policy in this catalog.") },
});

const enableInCatalog = defineCustomMethod({
  method: "post",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}:enable",
  tags,
  summary: "Enable a policy",
  description: `${EXTENSION} It becomes effective again for the tables it is the most specific enabled policy of.`,
  access: access.write("policies"),
  request: { params: PolicyIdParam },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const disableInCatalog = defineCustomMethod({
  method: "post",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}:disable",
  tags,
  summary: "Disable a policy",
  description: `${EXTENSION} Its tables stay managed; those with no other enabled policy run nothing.`,
  access: access.write("policies"),
  request: { params: PolicyIdParam },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const stop = defineRoute({
  method: "put",
  path: "/api/v1/catalogs/{catalog_id}/policy-stop",
  tags,
  summary: "The catalog's emergency stop",
  description:
    "`paused: true` halts new policy runs on every table of the catalog (jobs already running finish; ad-hoc actions still run); every affected managed table shows it. `false` resumes: each table runs again at its next scheduled time. The global stop is the `policy_engine_paused` setting (PUT /api/v1/config).",
  access: access.admin("policies:write"),
  request: { params: CatalogIdParam, body: jsonBody(z.object({ paused: z.boolean() }).strict()) },
  responses: {
    200: jsonResponse("The catalog's stop.", StopSchema),
    404: problemResponse("No such catalog."),
  },
});

const tablePolicies = defineRoute({
  method: "get",
  path: "/api/v1/managedtables/{table_id}/policies",
  tags,
  summary: "The policies that apply to a managed table",
  description:
    "Most specific first: the table's own, then prefix policies from the longest prefix, then the catalog's; `effective` marks the first enabled one.",
  access: access.read("policies"),
  request: { params: ManagedTableParam },
  responses: {
    200: jsonResponse(
      "The policies.",
      z.object({ items: z.array(TablePolicySchema) }).openapi("TablePolicies"),
    ),
    404: problemResponse("No managed table with this id."),
  },
});

const tablePolicy = defineRoute({
  method: "get",
  path: "/api/v1/managedtables/{table_id}/policies/{policy_id}",
  tags,
  summary: "One policy that applies to a managed table",
  access: access.read("policies"),
  request: { params: ManagedPolicyParam },
  responses: {
    200: jsonResponse("The policy.", TablePolicySchema),
    404: problemResponse("No managed table with this id, or the policy does not apply to it."),
  },
});

const deleteTablePolicy = defineRoute({
  method: "delete",
  path: "/api/v1/managedtables/{table_id}/policies/{policy_id}",
  tags,
  summary: "Delete a managed table's own policy",
  description:
    "Only the table's own (table-scope) policy: a catalog or prefix policy affects every table it covers, so deleting one here is a 409 that names its catalog path (DELETE /api/v1/catalogs/{catalog_id}/policies/{policy_id}). Deleting the table's last policy makes it unmanaged.",
  access: access.write("policies"),
  request: { params: ManagedPolicyParam },
  responses: {
    204: { description: "Deleted." },
    404: problemResponse("No managed table with this id, or the policy does not apply to it."),
    409: problemResponse("A catalog or prefix policy: delete it through the catalog path."),
  },
});

const enableForTable = defineCustomMethod({
  method: "post",
  path: "/api/v1/managedtables/{table_id}/policies/{policy_id}:enable",
  tags,
  summary: "Enable a policy that applies to a managed table",
  description: "A catalog or prefix policy is enabled for every table it covers.",
  access: access.write("policies"),
  request: { params: ManagedPolicyParam },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such table or policy."),
  },
});

const disableForTable = defineCustomMethod({
  method: "post",
  path: "/api/v1/managedtables/{table_id}/policies/{policy_id}:disable",
  tags,
  summary: "Disable a policy that applies to a managed table",
  description:
    "A catalog or prefix policy is disabled for every table it covers. Tables stay managed; one with no enabled policy left runs nothing.",
  access: access.write("policies"),
  request: { params: ManagedPolicyParam },
  responses: {
    200: jsonResponse("The policy.", PolicySchema),
    404: problemResponse("No such table or policy."),
  },
});

const DeleteSchema = z.object({
  action: z.string(),
  job_id: z.string().nullable().openapi({ description: "The dry run's job (GET /api/v1/jobs/{id})." }),
  status: z.string().openapi({
    description:
      "The dry run's job status (`queued`, `running`, `succeeded`, `failed`, ...), or `not_onboarded` (the table has no Lakesmith table yet: the engine onboards it once the policy applies), `over_limit` (past the preview's 100 dry runs), `not_requested` (GET before POST for this version).",
  }),
  result: z.record(z.string(), z.unknown()).nullable().openapi({
    description:
      "The dry run's result once it succeeded: for expire_snapshots the vacuum's `files` and `expired_snapshots`, for expire_partitions the partition expiration's partitions and files: exactly what the run would delete.",
  }),
});
const PreviewSchema = z
  .object({
    policy_id: z.string(),
    catalog_id: z.string(),
    version: z
      .number()
      .int()
      .openapi({ description: "The policy version previewed; a change previews afresh." }),
    enabled: z.boolean(),
    tables_count: z.number().int(),
    truncated: z.boolean().openapi({
      description: "True when more than 1,000 tables would be managed: the first 1,000 by name are listed.",
    }),
    tables: z.array(
      z.object({
        table_id: z.string(),
        full_name: z.string(),
        lake_table_id: z.string().nullable(),
        currently_effective_policy_id: z.string().nullable(),
        actions: z.array(z.object({ action: z.string(), skipped: z.string().optional() })),
        deletes: z.array(DeleteSchema),
      }),
    ),
  })
  .openapi("PolicyPreview");

const PREVIEW =
  "The tables the policy manages as their effective policy once enabled (those no more specific enabled policy covers), the actions each takes or skips with the reason, and for each destructive action (expire_snapshots, expire_partitions) what it would delete: measured by a dry run of the very job the engine would queue, run by an agent (at most 100 dry runs a preview; a table not onboarded yet says so). Dry runs are keyed by the policy's version: asking again answers the same ones, and a changed policy is previewed afresh.";

const previewStart = defineCustomMethod({
  method: "post",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}:preview",
  tags,
  summary: "Preview a policy: queue its dry runs",
  description: `${EXTENSION} ${PREVIEW} Create the policy disabled, preview it, then enable it.`,
  access: access.write("policies"),
  request: { params: PolicyIdParam },
  responses: {
    202: jsonResponse("The preview, dry runs queued.", PreviewSchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const previewRead = defineRoute({
  method: "get",
  path: "/api/v1/catalogs/{catalog_id}/policies/{policy_id}/preview",
  tags,
  summary: "A policy's preview and its dry runs' results",
  description: `${EXTENSION} ${PREVIEW}`,
  access: access.read("policies"),
  request: { params: PolicyIdParam },
  responses: {
    200: jsonResponse("The preview.", PreviewSchema),
    404: problemResponse("No such policy in this catalog."),
  },
});

const actor = (c: { var: { principal: Parameters<typeof principalId>[0] } }) => principalId(c.var.principal);

export const policyRoutes = newRouter()
  .openapi(putCatalog, async (c) => {
    const { prefix } = c.req.valid("query");
    const target =
      prefix === undefined ? { scope: "catalog" as const } : { scope: "prefix" as const, prefix };
    const result = await c.var.services.policies.put(
      c.req.valid("param").catalog_id,
      target,
      c.req.valid("json"),
      actor(c),
    );
    return result.created ? c.json(result.policy, 201) : c.json(result.policy, 200);
  })
  .openapi(putTable, async (c) => {
    const { catalog_id, table_id } = c.req.valid("param");
    const result = await c.var.services.policies.put(
      catalog_id,
      { scope: "table", tableId: table_id },
      c.req.valid("json"),
      actor(c),
    );
    return result.created ? c.json(result.policy, 201) : c.json(result.policy, 200);
  })
  .openapi(list, async (c) =>
    c.json(await c.var.services.policies.list(c.req.valid("param").catalog_id, c.req.valid("query")), 200),
  )
  .openapi(get, async (c) => {
    const { catalog_id, policy_id } = c.req.valid("param");
    return c.json(await c.var.services.policies.get(catalog_id, policy_id), 200);
  })
  .openapi(replace, async (c) => {
    const { catalog_id, policy_id } = c.req.valid("param");
    return c.json(await c.var.services.policies.replace(catalog_id, policy_id, c.req.valid("json")), 200);
  })
  .openapi(remove, async (c) => {
    const { catalog_id, policy_id } = c.req.valid("param");
    await c.var.services.policies.delete(catalog_id, policy_id);
    return c.body(null, 204);
  })
  .openapi(stop, async (c) => {
    const { paused } = c.req.valid("json");
    const state = await c.var.services.policies.setPaused(c.req.valid("param").catalog_id, paused, actor(c));
    return c.json({ paused: state.paused_at !== null, paused_at: state.paused_at }, 200);
  })
  .openapi(previewRead, async (c) => {
    const { catalog_id, policy_id } = c.req.valid("param");
    return c.json(await c.var.services.policyPreview.read(catalog_id, policy_id), 200);
  })
  .openapi(tablePolicies, async (c) =>
    c.json({ items: await c.var.services.policies.forTable(c.req.valid("param").table_id) }, 200),
  )
  .openapi(tablePolicy, async (c) => {
    const { table_id, policy_id } = c.req.valid("param");
    return c.json(await c.var.services.policies.getForTable(table_id, policy_id), 200);
  })
  .openapi(deleteTablePolicy, async (c) => {
    const { table_id, policy_id } = c.req.valid("param");
    await c.var.services.policies.deleteForTable(table_id, policy_id);
    return c.body(null, 204);
  });

mountCustomMethod(policyRoutes, enableInCatalog, async (c, p) =>
  c.json(await c.var.services.policies.setEnabled(p.catalog_id, p.policy_id, true), 200),
);
mountCustomMethod(policyRoutes, disableInCatalog, async (c, p) =>
  c.json(await c.var.services.policies.setEnabled(p.catalog_id, p.policy_id, false), 200),
);
mountCustomMethod(policyRoutes, enableForTable, async (c, p) =>
  c.json(await c.var.services.policies.setEnabledForTable(p.table_id, p.policy_id, true), 200),
);
mountCustomMethod(policyRoutes, disableForTable, async (c, p) =>
  c.json(await c.var.services.policies.setEnabledForTable(p.table_id, p.policy_id, false), 200),
);
mountCustomMethod(policyRoutes, previewStart, async (c, p) =>
  c.json(await c.var.services.policyPreview.start(p.catalog_id, p.policy_id), 202),
);
