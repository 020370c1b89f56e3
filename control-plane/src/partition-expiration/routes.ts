/**
 * Partition expiration (document 1): `POST/GET /api/v1/tables/{table_id}/partition-expiration` and
 * `POST .../partition-expiration/validate`. API keys need `vacuum:read` or `vacuum:write`: like a
 * vacuum, an expiration only proposes deletions (recoverable records); hard-delete needs `deletions:write`.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import {
  EXPIRATION_PAGE_MAX,
  PartitionExpirationJobSchema,
  PartitionExpirationTriggerSchema,
  PartitionExpirationValidateSchema,
  TableExpirationQuery,
} from "./schemas.ts";
import { partitionExpirationJobView } from "./view.ts";

const tags = ["partition expiration"];
const COLUMN_RULES =
  "The column defaults to the recipe's date filter column; with a recipe it must be one of the table's partition columns, and without one (onboarding not done) it must be named: 422 on partition_column otherwise. " +
  "`retention_days` defaults to the default_partition_expiration_days setting; partitions dated before today (UTC, the control plane's clock) minus `retention_days` expire. " +
  "Delta tables only: an Iceberg or Hive table is a 422 naming `format` (the table's).";

const trigger = defineRoute({
  method: "post",
  path: "/api/v1/tables/{table_id}/partition-expiration",
  tags,
  summary: "Expire a Delta table's old date partitions (delete-only)",
  description:
    "Answers **202 Accepted** with the queued job. The agent commits `remove` actions for the files of the expired partitions: readers stop seeing them, " +
    "**and nothing is deleted from storage.** Each removed file becomes a PENDING_DELETE record (GET /api/v1/pending-deletions?source_job_id={id}), " +
    "recoverable (POST /api/v1/pending-deletions/{deletion_id}/recover commits the file back) until hard-delete removes it after its `eligible_at`: " +
    "the later of the commit + the table's own retention (`delta.deletedFileRetentionDuration`, readers of older versions may still need the file) " +
    "and the job's end + the pending_deletion_grace_hours setting. A real run's stored result keeps its counts only, since the records hold the files. " +
    "A dry run commits and records nothing; its files are in the job's result (GET /api/v1/jobs/{job_id}).\n\n" +
    `${COLUMN_RULES}\n\n` +
    "**Never overlapping:** while another real or dry-run expiration of the table (manual or scheduled) is queued, offered, running or cancelling, " +
    "a trigger is a 409 naming it; of two triggers at the same moment exactly one is queued. Validates do not count.",
  access: access.write("vacuum"),
  request: { params: TableIdParam, body: jsonBody(PartitionExpirationTriggerSchema) },
  responses: {
    202: jsonResponse("Queued.", PartitionExpirationJobSchema),
    404: problemResponse("No such table."),
    409: problemResponse("Another expiration of the table is active (the detail names it)."),
  },
});

const validate = defineRoute({
  method: "post",
  path: "/api/v1/tables/{table_id}/partition-expiration/validate",
  tags,
  summary: "Preflight a partition expiration policy, with no writes",
  description:
    "Queues a job whose payload has `validate: true` (and `dry_run: true`): the agent reads the table and answers `can_run` " +
    "(false with a `reason` when the policy can't run on this table, for example a column that is not a date partition), the `cutoff_date`, " +
    "the `partitions` and `files` that would expire and their `bytes`. It commits nothing and records no pending deletion.\n\n" +
    "**The request waits for the answer** for a few seconds (5 by default), holding nothing in the database meanwhile:\n\n" +
    "- **200 OK**: the job ended within the wait. With status `succeeded`, `summary` is the answer; with `failed` or `cancelled`, `error` says why. " +
    "The files that would expire are in the job's `result` (GET /api/v1/jobs/{job_id}).\n" +
    "- **202 Accepted**: the job did not end within the wait (it is queued behind other work, or still reading a large log). " +
    "**Poll GET /api/v1/jobs/{job_id}** until its status is succeeded, then read its `result` " +
    "(the list GET .../partition-expiration shows the same answer as `summary`, without the files).\n" +
    "- **503 Service Unavailable**: no connected agent may run it: none that runs partition expiration is connected (and not draining) " +
    "with an allow list covering the table's location. The detail says what the connected agents allow; nothing is queued. " +
    "Connect such an agent and send the request again.\n\n" +
    `${COLUMN_RULES} A validate neither waits for an active expiration nor holds one back. \`dry_run\` is accepted and has no effect.`,
  access: access.write("vacuum"),
  request: { params: TableIdParam, body: jsonBody(PartitionExpirationValidateSchema) },
  responses: {
    200: jsonResponse(
      "The job ended within the wait: `summary` is the answer (status succeeded), or `error` says why it failed.",
      PartitionExpirationJobSchema,
    ),
    202: jsonResponse(
      "Queued or running after the wait; poll GET /api/v1/jobs/{job_id}.",
      PartitionExpirationJobSchema,
    ),
    404: problemResponse("No such table."),
    503: problemResponse(
      "No connected agent may read the table's location (none runs partition expiration, or none is allowed it); nothing was queued.",
    ),
  },
});

const listOfTable = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}/partition-expiration",
  tags,
  summary: "Partition expiration jobs of a table",
  description:
    `Newest first: real runs, dry runs and validates (\`validate\`, \`dry_run\`), manual and scheduled. Maximum \`limit\` is ${EXPIRATION_PAGE_MAX}. ` +
    "Jobs outlive their table: 404 only when the table does not exist and never had an expiration job.",
  access: access.read("vacuum"),
  request: { params: TableIdParam, query: TableExpirationQuery },
  responses: {
    200: jsonResponse(
      "A page of partition expiration jobs.",
      pageOf(PartitionExpirationJobSchema, "PartitionExpirationJobPage"),
    ),
    404: problemResponse("No such table and no partition expiration jobs under this id."),
  },
});

export const partitionExpirationRoutes = newRouter()
  .openapi(trigger, async (c) => {
    const job = await c.var.services.partitionExpiration.trigger(
      c.req.valid("param").table_id,
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(partitionExpirationJobView(job), 202);
  })
  .openapi(validate, async (c) => {
    const { job, answered } = await c.var.services.partitionExpiration.validate(
      c.req.valid("param").table_id,
      c.req.valid("json"),
      {
        actor: principalId(c.var.principal),
        connected: await c.var.services.agents.connectedAbilities(),
        signal: c.req.raw.signal,
      },
    );
    return answered
      ? c.json(partitionExpirationJobView(job), 200)
      : c.json(partitionExpirationJobView(job), 202);
  })
  .openapi(listOfTable, async (c) => {
    const { offset, limit, status } = c.req.valid("query");
    const page = await c.var.services.partitionExpiration.listOfTable(
      c.req.valid("param").table_id,
      status,
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(partitionExpirationJobView) }, 200);
  });
