/**
 * Document 2's runs of a catalog table: every job of its Lakesmith table (crunch, optimize,
 * vacuum, partition expiration, onboarding, recover, ...), as document 1's job lists show them,
 * read here with document 2's filters and keyset pages; and running one again.
 *
 * - Pages: newest first by (created_at, rowid), the token the last row's pair (`jobsPage`); a
 *   page reads at most `page_size + 1` rows of the index `jobs_table_created_idx (table_id,
 *   created_at)` past the token, however deep, and sorts none (the index holds the rowid). Status
 *   and trigger filter the rows the walk meets; the total is a count over the same index.
 * - Again (rerun, retry): only an ended run. Rewrites, vacuums and expirations get a new job of the
 *   same kind and payload (`trigger: action`), its catalog reference and a vacuum's kept paths read
 *   anew, through the kind's precondition and overlap rule (409 naming the active job); an
 *   onboarding is retried through onboarding (only a failed one); other kinds have their own paths.
 */
import { ONBOARDING_KIND } from "@lakesmith/shared/jobs";
import { VACUUM_KIND } from "@lakesmith/shared/maintenance";
import { and, count, desc, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { Db } from "../db/index.ts";
import { type Job, jobs, type LakeTable } from "../db/schema.ts";
import { type KeysetPage, keyAfter, keysetPage } from "../http/pagination.ts";
import { ApiError, conflict, invalidField } from "../http/problem.ts";
import type { JobService } from "../jobs/service.ts";
import { TERMINAL_STATUSES } from "../jobs/state.ts";
import { triggerOnTable } from "../jobs/triggers.ts";
import type { OnboardingService } from "../onboarding/service.ts";
import type { PendingDeletionService } from "../pending-deletions/service.ts";
import { ACTION_JOB_KINDS, ACTION_TRIGGER } from "./kinds.ts";
import type { RunsFilter } from "./schemas.ts";
import { runStatusIs, runTriggerIs } from "./status.ts";
import { type ActionTarget, resolveTarget } from "./target.ts";

const rowid = sql<number>`${jobs}.rowid`;

/**
 * A page of `where`'s jobs, newest first, resuming after `token`: keyed (created_at, rowid), so
 * jobs created in the same millisecond keep their insertion order.
 */
export async function jobsPage(
  db: Db,
  where: SQL | undefined,
  pageSize: number,
  token: string | undefined,
): Promise<KeysetPage<Job>> {
  const after = keyAfter(token, 2)?.map(Number);
  if (after && !after.every(Number.isSafeInteger))
    throw invalidField("page_token", "not a page token of this list: pass `next_page_token` unchanged");
  const [at, row] = after ?? [];
  const resume =
    at !== undefined && row !== undefined
      ? or(lt(jobs.createdAt, new Date(at)), and(eq(jobs.createdAt, new Date(at)), lt(rowid, row)))
      : undefined;
  const [rows, [total]] = await Promise.all([
    db
      .select({ job: jobs, rowid })
      .from(jobs)
      .where(and(where, resume))
      .orderBy(desc(jobs.createdAt), desc(rowid))
      .limit(pageSize + 1),
    db.select({ n: count() }).from(jobs).where(where),
  ]);
  return keysetPage(
    rows,
    pageSize,
    total?.n ?? 0,
    (r) => [String(r.job.createdAt.getTime()), String(r.rowid)],
    (r) => r.job,
  );
}

export class RunService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobService,
    private readonly onboarding: OnboardingService,
    private readonly refs: CatalogTableRefs,
    private readonly deletions: PendingDeletionService,
  ) {}

  /** The table's runs matching `filter`, newest first; an empty page before its first action. */
  async list(catalogId: string, tableId: string, filter: RunsFilter, now: Date): Promise<KeysetPage<Job>> {
    const target = await resolveTarget(this.db, catalogId, tableId);
    const start = filter.start ? new Date(filter.start) : undefined;
    const end = filter.end ? new Date(filter.end) : undefined;
    if (start && end && start >= end) throw invalidField("end", "must be after start");
    // Before its first action the table has no Lakesmith table, so no jobs.
    const where = and(
      target.table ? eq(jobs.tableId, target.table.id) : sql`0`,
      start ? gte(jobs.createdAt, start) : undefined,
      end ? lt(jobs.createdAt, end) : undefined,
      filter.status ? runStatusIs(filter.status, now) : undefined,
      filter.trigger ? runTriggerIs(filter.trigger) : undefined,
    );
    return jobsPage(this.db, where, filter.page_size, filter.page_token);
  }

  /** One run of the table; 404 for a job of another table, or none. */
  async get(catalogId: string, tableId: string, runId: string): Promise<{ job: Job; target: ActionTarget }> {
    const target = await resolveTarget(this.db, catalogId, tableId);
    const job = await this.jobs.get(runId);
    if (!job || !target.table || job.tableId !== target.table.id)
      throw new ApiError(
        404,
        `Table '${tableId}' has no run '${runId}'; GET /api/v1/catalogs/${catalogId}/tables/${encodeURIComponent(tableId)}/runs lists its runs.`,
      );
    return { job, target };
  }

  /** A new job doing what the ended `job` did (see the header); 409 while `job` is active. */
  async again(job: Job, table: LakeTable, actor: string | null): Promise<Job> {
    if (!TERMINAL_STATUSES.includes(job.status))
      throw conflict(
        `Run '${job.id}' is ${job.status}; it can be run again once it ends (POST /api/v1/jobs/${job.id}/cancel stops it).`,
      );
    if (job.kind === ONBOARDING_KIND) {
      const state = await this.onboarding.retry(table.id, actor);
      if (!state.job) throw new Error(`onboarding of ${table.id} was retried without a job`);
      return state.job;
    }
    if (!ACTION_JOB_KINDS.includes(job.kind))
      throw conflict(
        `A ${job.kind} run is not run again here: it acts on records of its own (GET /api/v1/pending-deletions), whose routes start it again.`,
      );
    const { catalog: _old, ...rest } = job.payload;
    const catalog = await this.refs.of(table);
    const payload = {
      ...rest,
      ...(catalog ? { catalog } : {}),
      ...(job.kind === VACUUM_KIND ? { keep: await this.deletions.keepPaths(table.id) } : {}),
    };
    return triggerOnTable(this.jobs, table, {
      kind: job.kind,
      payload,
      priority: job.priority,
      trigger: ACTION_TRIGGER,
      createdBy: actor,
    });
  }
}
