/**
 * Jobs of a group of kinds on a table that must not overlap (crunch and optimize; vacuum; partition
 * expiration): queue one unless another of the group is active, and list them per table.
 *
 * Two triggers that race both pass the first check; the insert is therefore batched with a
 * statement that withdraws the new job again when another active job of the group exists on the
 * table. A batch is one transaction and SQLite runs write transactions one after the other, so
 * the second batch always sees the first one's job, and exactly one stays.
 */
import { newId } from "@lakesmith/shared";
import { uriScheme } from "@lakesmith/shared/jobs";
import { and, eq, exists, inArray, ne, type SQL } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type Job, type JobStatus, jobs, type Priority } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError } from "../http/problem.ts";
import type { TableService } from "../tables/service.ts";
import type { JobService, NewJob } from "./service.ts";

/** Statuses in which a job may still write. */
export const ACTIVE_STATUSES: JobStatus[] = ["queued", "offered", "running", "cancelling"];

/**
 * A new job on `table`: the table's id, its priority unless the job names one, and the URI scheme
 * the agent must reach (agents announce the schemes their allow list permits).
 */
export function jobOnTable(
  table: { id: string; priority: Priority; uri: string },
  job: Omit<NewJob, "tableId" | "requires">,
): NewJob & { tableId: string } {
  return {
    ...job,
    priority: job.priority ?? table.priority,
    tableId: table.id,
    requires: [uriScheme(table.uri)],
  };
}

export interface ActiveJob {
  id: string;
  status: JobStatus;
}

export class TableJobs {
  /**
   * @param kinds the group: a job of any of them blocks the others; the first names the group in
   *   messages.
   * @param counts which jobs of the group take part in the overlap rule (all when absent), as a
   *   condition on `jobs` rows.
   */
  constructor(
    private readonly db: Db,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    readonly kinds: readonly [string, ...string[]],
    private readonly counts?: SQL,
  ) {}

  /** An active job of the group on the table, if any. */
  async activeOf(tableId: string): Promise<ActiveJob | undefined> {
    const [active] = await this.activeQuery(tableId).limit(1);
    return active;
  }

  /**
   * Queues the job (of a kind of the group) unless an active job of the group is on its table.
   * `exclusive: false` queues it regardless (a job that writes nothing). Returns the job, or the
   * active job that won (undefined when the winner ended again before it could be named).
   */
  async queue(
    input: NewJob & { tableId: string },
    exclusive = true,
  ): Promise<{ job: Job } | { active: ActiveJob | undefined }> {
    if (exclusive) {
      const active = await this.activeOf(input.tableId);
      if (active) return { active };
    }
    const id = newId("job");
    if (!this.kinds.includes(input.kind)) throw new Error(`kind '${input.kind}' is not one of ${this.kinds}`);
    const insert = this.jobs.insertStatement(input, id);
    if (!exclusive) {
      const [job] = await insert;
      if (!job) throw new Error("job insert returned no row");
      this.jobs.notifyWork();
      return { job };
    }
    const withdraw = this.db
      .delete(jobs)
      .where(and(eq(jobs.id, id), exists(this.activeQuery(input.tableId, id))))
      .returning({ id: jobs.id });
    const [[created], withdrawn] = await this.db.batch([insert, withdraw]);
    if (withdrawn.length > 0 || !created) return { active: await this.activeOf(input.tableId) };
    this.jobs.notifyWork();
    return { job: created };
  }

  /**
   * The table's jobs of the group, newest first. 404 only when the table does not exist and never
   * had one: job history outlives a deleted table.
   */
  async listOfTable(
    tableId: string,
    status: JobStatus | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Job>> {
    const page = await this.jobs.list(
      { kinds: this.kinds, tableId, ...(status ? { status } : {}) },
      offset,
      limit,
    );
    if (page.total > 0 || (await this.tables.find(tableId))) return page;
    if ((await this.jobs.list({ kinds: this.kinds, tableId }, 0, 1)).total > 0) return page;
    throw new ApiError(404, `Table '${tableId}' does not exist and has no ${this.kinds[0]} jobs.`);
  }

  private activeQuery(tableId: string, except?: string) {
    return this.db
      .select({ id: jobs.id, status: jobs.status })
      .from(jobs)
      .where(
        and(
          eq(jobs.tableId, tableId),
          this.kinds.length === 1 ? eq(jobs.kind, this.kinds[0]) : inArray(jobs.kind, [...this.kinds]),
          inArray(jobs.status, ACTIVE_STATUSES),
          except !== undefined ? ne(jobs.id, except) : undefined,
          this.counts,
        ),
      );
  }
}
