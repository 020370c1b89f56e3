/**
 * Cancel, as a service: the routes of every kind (`/jobs/{id}/cancel`, `/crunch/{id}/cancel`) and
 * table deletion call it, never the hub themselves.
 *
 * - A queued or offered job ends `cancelled` at once, and its kind's finish hook runs.
 * - A running job moves to `cancelling` and the agent holding it is told to stop (`Hub.cancel`); it
 *   ends `cancelled` when the agent confirms or its lease lapses (`reap.ts`). A cancelled crunch
 *   never commits: the agent stops before its commit.
 * - Cancelling a job that already ended is a 409 naming its status; an unknown id is a 404.
 */
import { and, eq, inArray } from "drizzle-orm";
import { type Job, jobs } from "../db/schema.ts";
import { conflict, notFound } from "../http/problem.ts";
import { runFinishHooks } from "./complete.ts";
import { type Engine, getJob } from "./engine.ts";
import { from } from "./state.ts";

export interface CancelOutcome {
  job: Job;
  changed: boolean;
  /** The agent to tell, when the job was running. */
  notify?: { agentId: string; fence: number };
}

/**
 * Moves the job towards `cancelled`; undefined for an unknown id. `why`, when given, is recorded as
 * the error of a job that had not started.
 */
export async function cancelJob(
  engine: Engine,
  jobId: string,
  why?: string,
): Promise<CancelOutcome | undefined> {
  const { db, clock } = engine;
  const now = clock.now();
  const [ended] = await db
    .update(jobs)
    .set({
      status: "cancelled",
      error: why ? `cancelled before it started: ${why}` : "cancelled before it started",
      leaseOwner: null,
      leaseExpiresAt: null,
      progress: null,
      finishedAt: now,
      updatedAt: now,
    })
    .where(and(eq(jobs.id, jobId), inArray(jobs.status, from("cancelUnstarted"))))
    .returning();
  if (ended) {
    await runFinishHooks(engine, [ended]);
    return { job: ended, changed: true };
  }
  const [cancelling] = await db
    .update(jobs)
    .set({ status: "cancelling", updatedAt: now })
    .where(and(eq(jobs.id, jobId), inArray(jobs.status, from("cancelRunning"))))
    .returning();
  if (cancelling?.leaseOwner)
    return {
      job: cancelling,
      changed: true,
      notify: { agentId: cancelling.leaseOwner, fence: cancelling.fence },
    };
  const job = await getJob(engine, jobId);
  return job ? { job, changed: false } : undefined;
}

/** Whoever holds agent sockets (the hub): tells an agent to stop a job. */
export interface JobStopper {
  cancel(agentId: string, jobId: string, fence: number, reason: string): void;
}

export class CancelService {
  constructor(
    private readonly engine: Engine,
    private readonly hub: JobStopper,
  ) {}

  /**
   * Cancels a job and tells its agent to stop; 404 for an unknown id, 409 when it already ended.
   * With `recordReason`, a job that had not started keeps `reason` in its error.
   */
  async cancel(
    jobId: string,
    reason = "cancel requested",
    options: { recordReason?: boolean } = {},
  ): Promise<Job> {
    const outcome = await cancelJob(this.engine, jobId, options.recordReason ? reason : undefined);
    if (!outcome) throw notFound("job", jobId);
    if (outcome.notify) this.hub.cancel(outcome.notify.agentId, jobId, outcome.notify.fence, reason);
    if (!outcome.changed)
      throw conflict(
        `Job '${jobId}' is already ${outcome.job.status}; only queued or running jobs can be cancelled.`,
      );
    return outcome.job;
  }
}
