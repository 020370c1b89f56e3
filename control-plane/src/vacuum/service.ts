/**
 * Vacuum (document 1, "Vacuum job"): manual triggers and the list of a table's vacuum jobs, manual
 * or scheduled. A vacuum is a row of `jobs` (kind `vacuum`); the agent parses its payload with
 * `VacuumPayloadSchema` and reports a `VacuumResult`, whose files become PENDING_DELETE records
 * (`pending-deletions/record.ts`). Vacuum itself deletes nothing.
 *
 * Delta only for now: Iceberg vacuum (snapshot expiry) is not in the agent yet, and Hive tables
 * have no log that says which files are unreferenced. A table's vacuums never overlap (the same
 * file would be proposed twice); see `TableJobs` for why exactly one of two racing triggers wins.
 */
import { VACUUM_KIND, type VacuumPayload } from "@lakesmith/shared/maintenance";
import type { Db } from "../db/index.ts";
import type { Job, JobStatus, LakeTable } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { conflict, notFound } from "../http/problem.ts";
import type { JobService } from "../jobs/service.ts";
import { type ActiveJob, jobOnTable, TableJobs } from "../jobs/table-jobs.ts";
import type { PendingDeletionService } from "../pending-deletions/service.ts";
import type { TableService } from "../tables/service.ts";
import type { VacuumTrigger } from "./schemas.ts";

export class VacuumService {
  private readonly tableJobs: TableJobs;

  constructor(
    db: Db,
    jobs: JobService,
    private readonly tables: TableService,
    private readonly deletions: PendingDeletionService,
  ) {
    this.tableJobs = new TableJobs(db, jobs, tables, [VACUUM_KIND]);
  }

  /** Queues a vacuum of a Delta table; 404 unknown table, 409 other formats or an active vacuum. */
  async trigger(tableId: string, trigger: VacuumTrigger, actor: string | null): Promise<Job> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    if (table.format === "iceberg")
      throw conflict(
        `Table '${table.name}' is an Iceberg table; Iceberg vacuum (snapshot expiry and orphan removal) is not available in the agent yet. Vacuum works on Delta tables.`,
      );
    if (table.format !== "delta")
      throw conflict(
        `Table '${table.name}' is a ${table.format} table; vacuum works on Delta tables, whose log says which files no snapshot needs.`,
      );
    const payload: VacuumPayload = {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      mode: trigger.mode,
      ...(trigger.retention_hours !== undefined ? { retention_hours: trigger.retention_hours } : {}),
      dry_run: trigger.dry_run,
      keep: await this.deletions.keepPaths(table.id),
    };
    const outcome = await this.tableJobs.queue(
      jobOnTable(table, { kind: VACUUM_KIND, payload, trigger: "manual", createdBy: actor }),
    );
    if ("job" in outcome) return outcome.job;
    throw overlapping(table, outcome.active);
  }

  listOfTable(
    tableId: string,
    status: JobStatus | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Job>> {
    return this.tableJobs.listOfTable(tableId, status, offset, limit);
  }
}

function overlapping(table: LakeTable, active: ActiveJob | undefined) {
  if (!active)
    return conflict(`Another vacuum of table '${table.name}' was triggered at the same moment; try again.`);
  return conflict(
    `Table '${table.name}' has vacuum job '${active.id}' ${active.status}; a table's vacuums never overlap. ` +
      `Wait for it (GET /api/v1/jobs/${active.id}) or cancel it (POST /api/v1/jobs/${active.id}/cancel).`,
  );
}
