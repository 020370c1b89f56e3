/**
 * Optimus submissions (document 1, "Optimus"; the API's `/optimus/runs`) and their runs.
 *
 * - A run is a `query_log_analysis` job (`kind.ts`) plus an `optimus_runs` row tying it to its
 *   submission, inserted in one batch, the row guarded by the job's existence.
 * - Create triggers the first run of an active submission (trigger `created`, as sync-now queues one),
 *   in one batch with the submission; an inactive one queues nothing, and a PATCH never queues a run.
 *   The created run takes the day's slot: its window is the one the schedule would read that day.
 * - Sync-now and retry queue a run unless one of the submission's runs is active (409 naming it; the
 *   kind's exclusivity decides, so two requests at once make one run). Retry is a 422 unless the
 *   effective status (`status.ts`) is `failed`.
 * - The schedule (`scheduled.ts`) queues one run per submission and UTC day (dedupe key
 *   `optimus:<id>:<day>` and a unique slot index); such a run waits behind an active one.
 * - A run's payload names the tables its scans are mapped to (`table-refs.ts`), as they are when queued.
 * - Delete cancels the active run's job, then deletes the submission and everything keyed by it
 *   (`cascade.ts`) in one batch.
 */
import { type Clock, newId } from "@lakesmith/shared";
import {
  lookbackWindow,
  type OptimusTableRef,
  QUERY_LOG_ANALYSIS_KIND,
  type QueryLogAnalysisPayload,
  utcDay,
} from "@lakesmith/shared/optimus";
import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import {
  type Job,
  jobs as jobRows,
  type OptimusRun,
  type OptimusRunTrigger,
  type OptimusSubmission,
  optimusRuns,
  optimusSubmissions,
} from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/problem.ts";
import type { CancelService } from "../jobs/cancel.ts";
import { jobExists } from "../jobs/enqueue.ts";
import type { BatchItem } from "../jobs/kinds.ts";
import type { JobService } from "../jobs/service.ts";
import { ACTIVE_STATUSES } from "../jobs/state.ts";
import { cascadeDeletes } from "./cascade.ts";
import type { SubmissionCreate, SubmissionUpdate } from "./schemas.ts";
import { effectiveStatus, type SubmissionStatus } from "./status.ts";
import { optimusTableRefs } from "./table-refs.ts";

/** Runs shown in a submission's detail, newest first. */
export const DETAIL_RUNS = 20;

export interface SubmissionWithStatus {
  submission: OptimusSubmission;
  status: SubmissionStatus;
}

export interface RunWithJob {
  run: OptimusRun;
  job: Job;
}

// Qualified by hand: drizzle writes a column of the outer table unqualified, which the subquery would read as its own.
const latestJobStatus = sql<
  string | null
>`(select j.status from ${optimusRuns} r join ${jobRows} j on j.id = r.job_id
  where r.submission_id = ${sql.raw(`"optimus_submissions"."id"`)} order by r.created_at desc, r.rowid desc limit 1)`;

/** Runs asked in the same millisecond keep the order they were inserted in. */
const insertOrder = sql.raw(`"optimus_runs"."rowid"`);

export class OptimusService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly cancel: CancelService,
  ) {}

  async create(body: SubmissionCreate, actor: string | null): Promise<SubmissionWithStatus> {
    const now = this.clock.now();
    const submission: OptimusSubmission = {
      id: newId("opt"),
      name: body.name,
      engine: body.engine,
      lookbackDays: body.lookback_days,
      dailySyncTimeUtc: body.daily_sync_time_utc,
      queryLogsUri: body.query_logs_uri,
      active: body.active,
      lastRunStatus: null,
      lastRunError: null,
      lastRunFinishedAt: null,
      createdBy: actor,
      createdAt: now,
      updatedAt: now,
    };
    const insert = this.db.insert(optimusSubmissions).values(submission);
    // The spec's create "creates and triggers a run": an active submission is created with its first
    // run, in one batch (both or neither).
    if (submission.active) await this.manualRun(submission, "created", actor, [insert]);
    else await insert;
    return this.get(submission.id);
  }

  async update(id: string, patch: SubmissionUpdate): Promise<SubmissionWithStatus> {
    await this.get(id);
    const set = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.engine !== undefined ? { engine: patch.engine } : {}),
      ...(patch.lookback_days !== undefined ? { lookbackDays: patch.lookback_days } : {}),
      ...(patch.daily_sync_time_utc !== undefined ? { dailySyncTimeUtc: patch.daily_sync_time_utc } : {}),
      ...(patch.query_logs_uri !== undefined ? { queryLogsUri: patch.query_logs_uri } : {}),
      ...(patch.active !== undefined ? { active: patch.active } : {}),
    };
    await this.db
      .update(optimusSubmissions)
      .set({ ...set, updatedAt: this.clock.now() })
      .where(eq(optimusSubmissions.id, id));
    return this.get(id);
  }

  async list(offset: number, limit: number): Promise<Page<SubmissionWithStatus>> {
    const [rows, [total]] = await Promise.all([
      this.db
        .select({ submission: optimusSubmissions, latest: latestJobStatus })
        .from(optimusSubmissions)
        .orderBy(desc(optimusSubmissions.createdAt), desc(optimusSubmissions.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(optimusSubmissions),
    ]);
    return { items: rows.map(withStatus), total: total?.n ?? 0, offset, limit };
  }

  async get(id: string): Promise<SubmissionWithStatus> {
    const [row] = await this.db
      .select({ submission: optimusSubmissions, latest: latestJobStatus })
      .from(optimusSubmissions)
      .where(eq(optimusSubmissions.id, id));
    if (!row) throw notFound("Optimus submission", id);
    return withStatus(row);
  }

  /** The submission's latest runs with their jobs, newest first. */
  async runs(id: string, limit = DETAIL_RUNS): Promise<RunWithJob[]> {
    return this.db
      .select({ run: optimusRuns, job: jobRows })
      .from(optimusRuns)
      .innerJoin(jobRows, eq(jobRows.id, optimusRuns.jobId))
      .where(eq(optimusRuns.submissionId, id))
      .orderBy(desc(optimusRuns.createdAt), desc(insertOrder))
      .limit(limit);
  }

  async delete(id: string): Promise<void> {
    await this.get(id);
    const active = await this.db
      .select({ id: jobRows.id })
      .from(optimusRuns)
      .innerJoin(jobRows, eq(jobRows.id, optimusRuns.jobId))
      .where(and(eq(optimusRuns.submissionId, id), inArray(jobRows.status, ACTIVE_STATUSES)));
    for (const job of active) {
      try {
        await this.cancel.cancel(job.id, "its Optimus submission was deleted", { recordReason: true });
      } catch (err) {
        // Ended meanwhile: nothing to stop.
        if (!(err instanceof ApiError)) throw err;
      }
    }
    await this.db.batch([
      this.db.delete(optimusSubmissions).where(eq(optimusSubmissions.id, id)),
      ...cascadeDeletes(this.db, id),
    ]);
  }

  /** `POST .../sync-now`: a run out of cycle; 409 while one is active. */
  async syncNow(id: string, actor: string | null): Promise<RunWithJob> {
    return this.manualRun((await this.get(id)).submission, "sync_now", actor);
  }

  /** `POST .../retry`: a new run of a failed submission; 422 naming the status otherwise. */
  async retry(id: string, actor: string | null): Promise<RunWithJob> {
    const { submission, status } = await this.get(id);
    if (status !== "failed")
      throw invalidField(
        "status",
        `submission '${id}' is ${status}; only a failed submission can be retried`,
      );
    return this.manualRun(submission, "retry", actor);
  }

  /**
   * Queues the scheduled run of `day` (the schedule's); false when that day's run exists already.
   * It waits behind an active run of the submission rather than being refused.
   */
  async queueScheduled(submission: OptimusSubmission, day: string): Promise<boolean> {
    const jobId = newId("job");
    const window = lookbackWindow(this.clock.now(), submission.lookbackDays);
    const [inserted] = await this.db.batch([
      this.jobs.insertStatement(
        {
          kind: QUERY_LOG_ANALYSIS_KIND,
          payload: payload(submission, window, await optimusTableRefs(this.db)),
          trigger: "schedule",
          dedupeKey: `optimus:${submission.id}:${day}`,
        },
        jobId,
      ),
      this.runRow(submission, window, jobId, "schedule", null, day),
    ]);
    const created = (inserted as unknown[]).length > 0;
    if (created) this.jobs.notifyWork();
    return created;
  }

  /** Queues a run now; `before`: statements of the same batch, before the job (`create`'s insert). */
  private async manualRun(
    submission: OptimusSubmission,
    trigger: OptimusRunTrigger,
    actor: string | null,
    before: BatchItem[] = [],
  ): Promise<RunWithJob> {
    const now = this.clock.now();
    const window = lookbackWindow(now, submission.lookbackDays);
    const today = utcDay(now);
    const queued = await this.jobs.enqueueExclusive(
      {
        kind: QUERY_LOG_ANALYSIS_KIND,
        payload: payload(submission, window, await optimusTableRefs(this.db)),
        trigger: "manual",
        createdBy: actor,
      },
      // A created run reads the same window the day's scheduled run would (days before today): it
      // stands in for it, so the schedule does not read that window again today.
      (jobId) => [
        this.runRow(submission, window, jobId, trigger, actor, trigger === "created" ? today : null),
      ],
      before,
    );
    if (!("job" in queued))
      throw conflict(
        `A run of submission '${submission.id}' is ${queued.active?.status ?? "active"}${queued.active ? ` (job ${queued.active.id})` : ""}; wait for it to end.`,
      );
    const [run] = await this.db.select().from(optimusRuns).where(eq(optimusRuns.jobId, queued.job.id));
    if (!run) throw new Error(`run of job ${queued.job.id} was not recorded`);
    return { run, job: queued.job };
  }

  /** The run row of a new job, guarded by the job's existence and the submission's. */
  private runRow(
    submission: OptimusSubmission,
    window: Window,
    jobId: string,
    trigger: OptimusRunTrigger,
    actor: string | null,
    slotDay: string | null,
  ) {
    return insertSelect(
      this.db,
      optimusRuns,
      {
        jobId: sql`${jobId}`,
        submissionId: sql`${submission.id}`,
        trigger: sql`${trigger}`,
        slotDay: sql`${slotDay}`,
        windowStart: sql`${window.start}`,
        windowEnd: sql`${window.end}`,
        requestedBy: sql`${actor}`,
        createdAt: sql`${this.clock.now().getTime()}`,
      },
      sql`where ${jobExists(jobId)} and exists (select 1 from ${optimusSubmissions} where ${optimusSubmissions.id} = ${submission.id})`,
    ).onConflictDoNothing();
  }
}

type Window = ReturnType<typeof lookbackWindow>;

/** A run's payload: the submission's logs and window, and the tables scans are mapped to (`table-refs.ts`). */
function payload(
  submission: OptimusSubmission,
  window: Window,
  tables: OptimusTableRef[],
): QueryLogAnalysisPayload {
  return {
    submission_id: submission.id,
    engine: submission.engine,
    query_logs_uri: submission.queryLogsUri,
    window_start: window.start,
    window_end: window.end,
    tables,
  };
}

function withStatus(row: { submission: OptimusSubmission; latest: string | null }): SubmissionWithStatus {
  return {
    submission: row.submission,
    status: effectiveStatus(row.submission.active, row.latest as Job["status"] | null),
  };
}
