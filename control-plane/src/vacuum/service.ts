/**
 * Vacuum (document 1, "Vacuum job"): manual triggers and the list of a table's vacuum jobs, manual
 * or scheduled. A vacuum is a row of `jobs` (kind `vacuum`); the agent parses its payload with
 * `VacuumPayloadSchema` and reports a `VacuumResult`, whose files become PENDING_DELETE records
 * (`pending-deletions/record.ts`). Vacuum itself deletes nothing.
 *
 * The kind, its precondition (Delta only for now) and its overlap rule (a table's vacuums never
 * overlap) are declared in `kind.ts`.
 */
import { VACUUM_KIND, type VacuumPayload } from "@lakesmith/shared/maintenance";
import type { Job, JobStatus } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { notFound } from "../http/problem.ts";
import type { Queueing } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { listOfTable, triggerOnTable } from "../jobs/triggers.ts";
import type { PendingDeletionService } from "../pending-deletions/service.ts";
import type { TableService } from "../tables/service.ts";
import type { VacuumTrigger } from "./schemas.ts";

export class VacuumService {
  constructor(
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly deletions: PendingDeletionService,
  ) {}

  /**
   * Queues a vacuum of a Delta or Iceberg table; 404 unknown table, 409 other formats or an active
   * vacuum. `how.queueing` overrides the manual trigger's `trigger: "manual"`, now;
   * `how.keepTableRetention` keeps the table's own retention where it is longer than the one asked
   * (a table action that does not say `shorten_retention`).
   */
  async trigger(
    tableId: string,
    trigger: VacuumTrigger,
    actor: string | null,
    how: { queueing?: Queueing; keepTableRetention?: boolean } = {},
  ): Promise<Job> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    const payload: VacuumPayload = {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      mode: trigger.mode,
      ...(trigger.retention_hours !== undefined ? { retention_hours: trigger.retention_hours } : {}),
      keep_table_retention: how.keepTableRetention ?? false,
      dry_run: trigger.dry_run,
      keep: await this.deletions.keepPaths(table.id),
    };
    return triggerOnTable(this.jobs, table, {
      kind: VACUUM_KIND,
      payload,
      trigger: "manual",
      createdBy: actor,
      ...how.queueing,
    });
  }

  listOfTable(
    tableId: string,
    status: JobStatus | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Job>> {
    return listOfTable(this.jobs, async (id) => (await this.tables.find(id)) !== undefined, [VACUUM_KIND], {
      tableId,
      status,
      offset,
      limit,
    });
  }
}
