/**
 * Document 2's managed tables: `GET /api/v1/managedtables` and `GET /api/v1/managedtables/{table_id}`.
 * Viewer reads; API keys need `managed-tables:read`.
 */
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { keysetPageOf, keysetQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableOpportunitiesSchema } from "../opportunities/schemas.ts";
import { PolicySchema } from "../policies/routes.ts";
import { ScheduleSchema } from "../policies/schemas.ts";
import { SavingsSchema } from "../savings/schemas.ts";
import { MANAGED_STATES } from "./service.ts";

const tags = ["managed tables"];

export const ManagedTableSchema = z
  .object({
    table_id: z.string(),
    catalog_id: z.string(),
    full_name: z.string(),
    namespace: z.string(),
    name: z.string(),
    state: z.enum(MANAGED_STATES).openapi({
      description:
        "`active`: its effective policy runs on schedule. `waiting`: it does not qualify yet (`min_qualifying_table_size_gb`, `min_existence_days`), or its onboarding has not finished or failed, or it can't be onboarded; `waiting_reason` says which. `paused`: the global (`policy_engine_paused`) or its catalog's emergency stop holds new runs. `disabled`: only disabled policies apply; it stays managed and runs nothing.",
    }),
    waiting_reason: z.string().nullable(),
    paused: z
      .object({ global: z.boolean(), catalog: z.boolean(), catalog_paused_at: z.string().nullable() })
      .nullable()
      .openapi({ description: "Which emergency stops hold the table; null when none." }),
    effective_policy_id: z.string().nullable(),
    lake_table_id: z.string().nullable().openapi({
      description: "The Lakesmith table (GET /api/v1/tables/{id}) its jobs run on; null until onboarded.",
    }),
    next_run_at: z.string().nullable().openapi({ description: "When the engine next looks at the table." }),
    managed_since: z.string(),
  })
  .openapi("ManagedTable");

const Sourced = z.object({
  value: z.unknown(),
  source: z.enum(["policy", "configuration", "table", "default"]).openapi({
    description:
      "`policy`: the effective policy sets it; `configuration`: a setting (for example `default_partition_expiration_days`); `table`: the table's own value (its target file size, its retention); `default`: the platform's.",
  }),
});

const AppliedActionSchema = z
  .object({
    action: z.string(),
    schedule: ScheduleSchema,
    schedule_source: z.enum(["action", "policy", "default"]),
    parameters: z.record(z.string(), Sourced),
    skipped: z.string().optional().openapi({ description: "Why this table skips the action." }),
  })
  .openapi("AppliedAction");

const ManagedTableDetailSchema = ManagedTableSchema.extend({
  type: z.string().nullable().openapi({
    description:
      "The table's format as its catalog reports it, in lower case (`delta`, `iceberg`, `parquet`, ...), as in GET /api/v1/catalogs/{catalog_id}/tables; null when the catalog does not say.",
  }),
  size_bytes: z.number().nullable(),
  location: z.string().nullable(),
  effective_policy: PolicySchema.extend({ actions_applied: z.array(AppliedActionSchema) })
    .nullable()
    .openapi({
      description:
        "The effective policy, and each of its actions as this table takes it, value by value with its source.",
    }),
  opportunities: TableOpportunitiesSchema.nullable().openapi({
    description:
      "What a crunch would gain (potential DRR from a bounded sample rewrite, with when and how it was measured), small files, missing ordering: measured by an agent (`opportunity_scan`), again whenever the engine finds the measurement older than 7 days or behind a version a job committed since. Null until the table is onboarded.",
  }),
  savings: SavingsSchema.nullable().openapi({
    description:
      "What Lakesmith's rewrites of this table saved (GET /api/v1/savings/tables/{lake_table_id}). Null until onboarded.",
  }),
  lake_table: z
    .object({
      id: z.string(),
      name: z.string(),
      onboarding_status: z.string(),
      onboarding_error: z.string().nullable(),
    })
    .nullable(),
}).openapi("ManagedTableDetail");

const list = defineRoute({
  method: "get",
  path: "/api/v1/managedtables",
  tags,
  summary: "Managed tables: the synced tables at least one policy applies to",
  description:
    "Ordered by full name, then connection. A table is managed while a policy applies to it, enabled or not, and unmanaged when its last policy is deleted. Keyset paging: pass `next_page_token` as `page_token`.",
  access: access.read("managed-tables"),
  request: {
    query: keysetQuery(100, 1000).extend({
      q: z.string().min(1).max(255).optional().openapi({
        description: "Wildcard over the table's name (`*` any run, `?` one character), matched whole.",
      }),
    }),
  },
  responses: {
    200: jsonResponse("A page of managed tables.", keysetPageOf(ManagedTableSchema, "ManagedTablePage")),
  },
});

const detail = defineRoute({
  method: "get",
  path: "/api/v1/managedtables/{table_id}",
  tags,
  summary: "One managed table with its effective policy",
  access: access.read("managed-tables"),
  request: {
    params: z.object({
      table_id: z
        .string()
        .min(1)
        .max(2048)
        .openapi({ param: { name: "table_id", in: "path" } }),
    }),
  },
  responses: {
    200: jsonResponse("The managed table.", ManagedTableDetailSchema),
    404: problemResponse("No managed table with this id."),
  },
});

export const managedTableRoutes = newRouter()
  .openapi(list, async (c) => c.json(await c.var.services.managedTables.list(c.req.valid("query")), 200))
  .openapi(detail, async (c) =>
    c.json(await c.var.services.managedTables.get(c.req.valid("param").table_id), 200),
  );
