/**
 * Vacuum (document 1): `POST/GET /api/v1/tables/{table_id}/vacuum` (API keys: `vacuum:read` or
 * `vacuum:write`) and `POST /api/v1/vacuum/hard-delete` (`deletions:write`: it is the one call that
 * deletes files for good, so a key that may propose deletions does not also delete).
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import type { HardDeleteRun } from "../pending-deletions/hard-delete.ts";
import { pendingDeletionView } from "../pending-deletions/view.ts";
import { TableIdParam } from "../tables/routes.ts";
import {
  HARD_DELETE_DEFAULT_LIMIT,
  HARD_DELETE_MAX_LIMIT,
  HardDeleteQuery,
  HardDeleteResponseSchema,
  type HardDeleteResponseWire,
  TableVacuumQuery,
  VACUUM_PAGE_MAX,
  VacuumJobSchema,
  VacuumTriggerSchema,
} from "./schemas.ts";
import { vacuumJobView } from "./view.ts";

const tags = ["vacuum"];

const trigger = defineRoute({
  method: "post",
  path: "/api/v1/tables/{table_id}/vacuum",
  tags,
  summary: "Trigger a vacuum of a table",
  description:
    "Answers **202 Accepted** with the queued job; an agent lists the files no snapshot of the table needs any more and reports them. " +
    "**Vacuum deletes nothing:** every file of a real run becomes a PENDING_DELETE record (GET /api/v1/pending-deletions?source_job_id={id}), " +
    "recoverable until POST /api/v1/vacuum/hard-delete removes it after its `eligible_at` (the vacuum's end + the `pending_deletion_grace_hours` setting, 24 by default). " +
    "A dry run records nothing; its proposed files are in the job's result (GET /api/v1/jobs/{job_id}). " +
    "A real run's stored result keeps its counts only, since the records hold the files.\n\n" +
    "The agent never proposes a path of the table's RECOVERED vacuum records (the payload's `keep` list), and a file that is pending already is not recorded twice.\n\n" +
    "Delta and Iceberg tables (a Hive table is a 422 naming `format`). On Delta: tombstones older than the retention, and in full mode orphans. " +
    "On Iceberg: snapshot expiry, then the files only expired snapshots referenced, and in full mode orphans (files no metadata references, older than 72 hours). " +
    "The retention is `retention_hours`, else the table's own (Delta `delta.deletedFileRetentionDuration`, 7 days by default; Iceberg `history.expire.max-snapshot-age-ms`, 5 days by default, " +
    "with `history.expire.min-snapshots-to-keep` and each branch's and tag's own retention); a value below the table's is recorded as `retention_shortened`. " +
    "An Iceberg vacuum that is not a dry run commits the expiry (a new metadata version without the expired snapshots; never a branch or tag head) before it reports the files. " +
    "**Never overlapping:** while one of the table's vacuum jobs (manual or scheduled) is queued, offered, running or cancelling, another trigger is a 409 naming it; " +
    "of two triggers at the same moment exactly one is queued.",
  access: access.write("vacuum"),
  request: { params: TableIdParam, body: jsonBody(VacuumTriggerSchema) },
  responses: {
    202: jsonResponse("Queued.", VacuumJobSchema),
    404: problemResponse("No such table."),
    409: problemResponse(
      "Another vacuum of the table is active (the detail names it), or the table is catalog-managed.",
    ),
    422: problemResponse("The table is a Hive table (`format`)."),
  },
});

const listOfTable = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}/vacuum",
  tags,
  summary: "Vacuum jobs of a table",
  description:
    `Newest first; manual runs (trigger \`manual\`) and scheduled ones (trigger \`schedule\`). Maximum \`limit\` is ${VACUUM_PAGE_MAX}. ` +
    "Jobs outlive their table: 404 only when the table does not exist and never had a vacuum job.",
  access: access.read("vacuum"),
  request: { params: TableIdParam, query: TableVacuumQuery },
  responses: {
    200: jsonResponse("A page of vacuum jobs.", pageOf(VacuumJobSchema, "VacuumJobPage")),
    404: problemResponse("No such table and no vacuum jobs under this id."),
  },
});

const hardDelete = defineRoute({
  method: "post",
  path: "/api/v1/vacuum/hard-delete",
  tags,
  summary: "Hard-delete the files of eligible PENDING_DELETE records",
  description:
    `Picks up to \`limit\` (default ${HARD_DELETE_DEFAULT_LIMIT}, maximum ${HARD_DELETE_MAX_LIMIT}) PENDING_DELETE records whose \`eligible_at\` has passed, oldest eligible first, ` +
    "of every table and managed prefix, of `table_id` or of `prefix_id`. Records of a table (or prefix) that was deleted are never picked (they stay as they are). " +
    "RECOVERED, RECOVERING, DELETING, DELETED and RETAINED records are never picked.\n\n" +
    "**dry_run=true** answers **200** with exactly the records a real call would claim at this moment, and changes nothing.\n\n" +
    "A real call claims the records (status DELETING) and queues one `hard_delete` job per table and one `prefix_hard_delete` job per managed prefix (its converted inputs): **202** with the jobs, the claimed records and their counts per table and per prefix. " +
    "The control plane never touches storage: an agent deletes each file after checking it against the table's current snapshot. " +
    "When the job ends, each record becomes DELETED (deleted, or already absent: `note`), RETAINED (the table references the file again; it is kept for good) " +
    "or PENDING_DELETE again (its delete failed: `note`); if the job fails or is cancelled, all its records go back to PENDING_DELETE with the error as `note`. " +
    "Follow the jobs with GET /api/v1/jobs/{job_id} and the records with GET /api/v1/pending-deletions.\n\n" +
    "Nothing eligible: **200** with zero records and no jobs. A record claimed by a recover (or another hard-delete) at the same moment stays with that one.",
  access: access.write("deletions"),
  request: { query: HardDeleteQuery },
  responses: {
    200: jsonResponse("A dry run's records, or nothing was eligible.", HardDeleteResponseSchema),
    202: jsonResponse("Records claimed and hard_delete jobs queued.", HardDeleteResponseSchema),
    404: problemResponse("table_id names no table, or prefix_id no prefix."),
  },
});

function hardDeleteView(run: HardDeleteRun): HardDeleteResponseWire {
  const byTable = new Map<string, { table_id: string; files: number; bytes: number }>();
  const byPrefix = new Map<string, { prefix_id: string; files: number; bytes: number }>();
  for (const r of run.records) {
    const entry = r.tableId
      ? (byTable.get(r.tableId) ?? { table_id: r.tableId, files: 0, bytes: 0 })
      : (byPrefix.get(r.prefixId ?? "") ?? { prefix_id: r.prefixId ?? "", files: 0, bytes: 0 });
    entry.files++;
    entry.bytes += r.sizeBytes;
    if ("table_id" in entry) byTable.set(entry.table_id, entry);
    else byPrefix.set(entry.prefix_id, entry);
  }
  const prefixOf = (job: HardDeleteRun["jobs"][number]) =>
    job.tableId ? null : (((job.payload as { prefix_id?: string }).prefix_id ?? null) as string | null);
  return {
    dry_run: run.dryRun,
    records: run.records.length,
    bytes: run.records.reduce((sum, r) => sum + r.sizeBytes, 0),
    files_by_table: [...byTable.values()],
    files_by_prefix: [...byPrefix.values()],
    jobs: run.jobs.map((job) => ({
      id: job.id,
      table_id: job.tableId,
      prefix_id: prefixOf(job),
      status: job.status,
      files: (job.tableId ? byTable.get(job.tableId) : byPrefix.get(prefixOf(job) ?? ""))?.files ?? 0,
      created_at: job.createdAt.toISOString(),
    })),
    items: run.records.map(pendingDeletionView),
  };
}

export const vacuumRoutes = newRouter()
  .openapi(trigger, async (c) => {
    const job = await c.var.services.vacuum.trigger(
      c.req.valid("param").table_id,
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(vacuumJobView(job), 202);
  })
  .openapi(listOfTable, async (c) => {
    const { offset, limit, status } = c.req.valid("query");
    const page = await c.var.services.vacuum.listOfTable(
      c.req.valid("param").table_id,
      status,
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(vacuumJobView) }, 200);
  })
  .openapi(hardDelete, async (c) => {
    const { dry_run, table_id, prefix_id, limit } = c.req.valid("query");
    const run = await c.var.services.hardDelete.run({
      dryRun: dry_run === "true",
      tableId: table_id,
      prefixId: prefix_id,
      limit,
      actor: principalId(c.var.principal),
    });
    const view = hardDeleteView(run);
    return run.dryRun || run.jobs.length === 0 ? c.json(view, 200) : c.json(view, 202);
  });
