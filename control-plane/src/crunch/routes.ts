/**
 * Crunch (document 1): `POST/GET /api/v1/tables/{table_id}/crunch`, `GET /api/v1/crunch`,
 * `GET /api/v1/crunch/{crunch_id}/metrics` and `POST /api/v1/crunch/{crunch_id}/cancel` (the jobs'
 * cancel, for crunch and optimize jobs only). API keys need `crunch:read` or `crunch:write`.
 */
import { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import { MAX_FAN_OUT } from "./fan-out.ts";
import {
  CRUNCH_PAGE_MAX,
  CrunchJobSchema,
  type CrunchJobWire,
  CrunchMetricsSchema,
  CrunchQuery,
  CrunchTriggerResponseSchema,
  CrunchTriggerSchema,
  SkipRecipeCheckQuery,
  TableCrunchQuery,
} from "./schemas.ts";
import { crunchJobView, crunchMetricsView } from "./view.ts";

const tags = ["crunch"];
const CrunchIdParam = z.object({
  crunch_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "crunch_id", in: "path" }, example: "job_4k9x2m7q0c1v8b3n5z6t" }),
});
const CrunchPage = pageOf(CrunchJobSchema, "CrunchJobPage");
const LISTS = `Newest first. Includes scheduled runs (trigger \`schedule\`) and manual ones (trigger \`manual\`). Maximum \`limit\` is ${CRUNCH_PAGE_MAX}.`;

const trigger = defineRoute({
  method: "post",
  path: "/api/v1/tables/{table_id}/crunch",
  tags,
  summary: "Trigger a crunch of a table, bypassing its schedule",
  description:
    "Answers **202 Accepted** with the queued jobs: agents pick them up; follow each with GET /api/v1/crunch/{crunch_id}/metrics.\n\n" +
    "**Fan-out:** a range on a table partitioned by its date column (the backfill column, else the recipe's date filter column) is split into one job per day, " +
    "or 24 per-hour jobs per day when the table is also partitioned by hour and its average daily partition size (measured by its earlier crunches) is above the hourly_fanout_min_partition_size_gb setting; " +
    `at most ${MAX_FAN_OUT} jobs (a longer range is one job, and hours fall back to days). Each job works on and commits only its partition, so any allowed agents take them at the same time. ` +
    "The answer's fields describe the first job and `jobs` lists all of them; a whole-table crunch, an unpartitioned table or a range on a data column is one job, as before.\n\n" +
    "Lookback mode crunches the partition dates [today - lookback_start, today - lookback_end] (UTC dates of the control plane's clock). " +
    "Backfill mode crunches [backfill_start_date, backfill_end_date] on the recipe's date filter column, sorted by cluster_columns (default: the recipe's). " +
    'Whole-table mode (`{"whole_table": true}`, an addition to the two modes of the spec) crunches every file of the table whatever its date, ' +
    "files without one included, sorted by cluster_columns (default: the recipe's). The three modes are exclusive: fields of two of them, or of none, are a 422 naming each field. " +
    "A range that selects no file succeeds with zeros, and its metrics' `notes` say that no file fell in the range and which range.\n\n" +
    "The table's onboarding must be active with a recipe (409 otherwise) unless skip_recipe_check=true. " +
    "**Not idempotent, never overlapping:** while one of the table's crunch or optimize jobs (manual or scheduled) is queued, offered, running or cancelling " +
    "on a partition this trigger covers (a whole-table or unpartitioned crunch covers every partition), the trigger is a 409 that names it and queues nothing; " +
    "jobs on other partitions are no conflict. Of two overlapping triggers at the same moment exactly one is queued. " +
    "Once that job ends, the same trigger queues a new crunch.\n\n" +
    "The job records the table's target file size, the recipe and the mutation interval setting (a crunch of a table written to within that many minutes runs as optimize).",
  access: access.write("crunch"),
  request: { params: TableIdParam, query: SkipRecipeCheckQuery, body: jsonBody(CrunchTriggerSchema) },
  responses: {
    202: jsonResponse("Queued: the first job's fields, and `jobs`.", CrunchTriggerResponseSchema),
    404: problemResponse("No such table."),
    409: problemResponse(
      "Onboarding has not produced the table's recipe (and skip_recipe_check is false), or another crunch of the table is active (the detail names it).",
    ),
  },
});

const listOfTable = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}/crunch",
  tags,
  summary: "Crunch and optimize jobs of a table",
  description: `${LISTS} Jobs outlive their table: 404 only when the table does not exist and never had a crunch job.`,
  access: access.read("crunch"),
  request: { params: TableIdParam, query: TableCrunchQuery },
  responses: {
    200: jsonResponse("A page of crunch jobs.", CrunchPage),
    404: problemResponse("No such table and no crunch jobs under this id."),
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/v1/crunch",
  tags,
  summary: "Crunch and optimize jobs of every table",
  description: LISTS,
  access: access.read("crunch"),
  request: { query: CrunchQuery },
  responses: { 200: jsonResponse("A page of crunch jobs.", CrunchPage) },
});

const metrics = defineRoute({
  method: "get",
  path: "/api/v1/crunch/{crunch_id}/metrics",
  tags,
  summary: "A crunch job with its metrics",
  description:
    "DRR, bytes and files before and after, rows in and out, partitions crunched and skipped (with per-partition detail), the rewrite settings chosen and why, the duration and the row-count validation. " +
    "Until the agent reports a result `metrics` is null, `metrics_note` says why, and `progress` carries the agent's latest progress report.",
  access: access.read("crunch"),
  request: { params: CrunchIdParam },
  responses: {
    200: jsonResponse("The job and its metrics.", CrunchMetricsSchema),
    404: problemResponse("No crunch or optimize job with this id."),
  },
});

const cancel = defineRoute({
  method: "post",
  path: "/api/v1/crunch/{crunch_id}/cancel",
  tags,
  summary: "Cancel a crunch or optimize job",
  description:
    "A queued (or offered, not yet started) job ends `cancelled` at once. A running job becomes `cancelling`: its agent " +
    "is told to stop without committing, and the job ends `cancelled` when the agent confirms or its lease lapses. " +
    "A crunch that had already committed when the cancel arrived ends `succeeded`. Same semantics as POST /api/v1/jobs/{job_id}/cancel.",
  access: access.write("crunch"),
  request: { params: CrunchIdParam },
  responses: {
    202: jsonResponse("The job, cancelled or cancelling.", CrunchJobSchema),
    404: problemResponse("No crunch or optimize job with this id."),
    409: problemResponse("The job already ended; the detail names its status."),
  },
});

export const crunchRoutes = newRouter()
  .openapi(trigger, async (c) => {
    const queued = await c.var.services.crunch.triggerAll(
      c.req.valid("param").table_id,
      c.req.valid("json"),
      {
        skipRecipeCheck: c.req.valid("query").skip_recipe_check === "true",
        actor: principalId(c.var.principal),
      },
    );
    const views = queued.map(crunchJobView);
    return c.json({ ...(views[0] as CrunchJobWire), jobs: views }, 202);
  })
  .openapi(listOfTable, async (c) => {
    const { offset, limit, status, job_type } = c.req.valid("query");
    const page = await c.var.services.crunch.listOfTable(
      c.req.valid("param").table_id,
      { status, jobType: job_type },
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(crunchJobView) }, 200);
  })
  .openapi(list, async (c) => {
    const { offset, limit, status, job_type, table_id } = c.req.valid("query");
    const page = await c.var.services.crunch.list(
      { tableId: table_id, status, jobType: job_type },
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(crunchJobView) }, 200);
  })
  .openapi(metrics, async (c) =>
    c.json(crunchMetricsView(await c.var.services.crunch.get(c.req.valid("param").crunch_id)), 200),
  )
  .openapi(cancel, async (c) => {
    const { services } = c.var;
    const job = await services.crunch.get(c.req.valid("param").crunch_id);
    return c.json(crunchJobView(await services.cancel.cancel(job.id)), 202);
  });
