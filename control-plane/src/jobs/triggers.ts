/**
 * Manual triggers of jobs on a table, for every kind alike: the kind's precondition (the table's
 * own state), then its overlap rule (a 409 that names the active job), then the queue; a set of
 * jobs (a fanned-out crunch) is queued all or none. Lists of a
 * table's jobs of some kinds live here too.
 */
import type { Job, JobStatus, LakeTable } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, conflict, invalidField } from "../http/problem.ts";
import { type ActiveJob, jobOnTable, type NewJob } from "./enqueue.ts";
import { enqueueExclusiveSet } from "./enqueue-set.ts";
import type { JobService } from "./service.ts";

/** Throws the kind's refusal of a job on `table`: 409, or 422 naming the field. */
export function checkPrecondition(jobs: JobService, kind: string, table: LakeTable): void {
  const refusal = jobs.kinds.of(kind).precondition?.(table);
  if (!refusal) return;
  if (refusal.status === 422) throw invalidField(refusal.field, refusal.message);
  throw conflict(refusal.message);
}

/**
 * Queues a job on `table` unless its kind's precondition or overlap rule refuses it; of two racing
 * triggers exactly one is queued (`enqueueExclusive`).
 */
export async function triggerOnTable(
  jobs: JobService,
  table: LakeTable,
  job: Omit<NewJob, "tableId">,
): Promise<Job> {
  checkPrecondition(jobs, job.kind, table);
  const outcome = await jobs.enqueueExclusive(jobOnTable(table, job));
  if ("job" in outcome) return outcome.job;
  throw overlapping(jobs, table, job.kind, outcome.active);
}

/**
 * Queues a set of jobs of one kind on `table` (a fanned-out crunch: one per partition), all or none,
 * under the same precondition and overlap rule as `triggerOnTable`; one job goes through it.
 */
export async function triggerSetOnTable(
  jobs: JobService,
  table: LakeTable,
  set: readonly [Omit<NewJob, "tableId">, ...Omit<NewJob, "tableId">[]],
): Promise<Job[]> {
  if (set.length === 1) return [await triggerOnTable(jobs, table, set[0])];
  const kind = set[0].kind;
  checkPrecondition(jobs, kind, table);
  const outcome = await enqueueExclusiveSet(
    jobs.engine,
    set.map((job) => jobOnTable(table, job)),
  );
  if ("jobs" in outcome) return outcome.jobs;
  throw overlapping(jobs, table, kind, outcome.active);
}

function overlapping(jobs: JobService, table: LakeTable, kind: string, active: ActiveJob | undefined) {
  const label = jobs.kinds.of(kind).label;
  if (!active)
    return conflict(`Another ${label} of table '${table.name}' was triggered at the same moment; try again.`);
  const theirs = jobs.kinds.get(active.kind)?.label ?? active.kind;
  return conflict(
    `Table '${table.name}' has ${theirs} job '${active.id}' ${active.status}; a ${label} never overlaps it (on the same table, or for a partition job the same partition). ` +
      `Wait for it (GET /api/v1/jobs/${active.id}) or cancel it (POST /api/v1/jobs/${active.id}/cancel).`,
  );
}

/**
 * A table's jobs of `kinds`, newest first. 404 only when the table does not exist and never had
 * one: job history outlives a deleted table.
 */
export async function listOfTable(
  jobs: JobService,
  tableExists: (id: string) => Promise<boolean>,
  kinds: readonly [string, ...string[]],
  query: { tableId: string; status: JobStatus | undefined; offset: number; limit: number },
): Promise<Page<Job>> {
  const { tableId, status, offset, limit } = query;
  const page = await jobs.list({ kinds, tableId, ...(status ? { status } : {}) }, offset, limit);
  if (page.total > 0 || (await tableExists(tableId))) return page;
  if ((await jobs.list({ kinds, tableId }, 0, 1)).total > 0) return page;
  throw new ApiError(
    404,
    `Table '${tableId}' does not exist and has no ${jobs.kinds.of(kinds[0]).label} jobs.`,
  );
}
