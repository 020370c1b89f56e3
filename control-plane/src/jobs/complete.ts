/**
 * Complete: the agent's result is recorded once, and the kind's finish hook runs in the same batch,
 * so what a kind records elsewhere (a table's onboarding status, pending deletions) moves together
 * with the job.
 *
 * - A retryable failure before the last attempt queues the job again after a backoff.
 * - A job being cancelled ends `cancelled` unless it reports success (it had already committed when
 *   the cancel arrived, and the record says what really happened).
 * - A duplicate completion (same fence and owner, job already ended) changes nothing.
 * - Progress belongs to the attempt that reported it: every move out of running (here, and in
 *   release, reap, refuse and cancel) clears it, so an ended or requeued job shows none.
 * - Every end also removes the payload fields the kind declares secret (`secrets.ts`), in the same batch.
 * - A failure for good (not a retry) writes its notification rows to the outbox in the same batch
 *   (`notifications/outbox.ts`), guarded like a hook, for the dispatcher to send.
 * - Ends the engine decides alone (cancel before start, a lapsed lease, the last refusal) run their
 *   hooks right after, in a batch of their own (`runFinishHooks`); each statement is guarded by the
 *   end it belongs to, so running one twice changes nothing.
 */
import { type SQL, sql } from "drizzle-orm";
import { type Job, type JobStatus, jobs } from "../db/schema.ts";
import { failureStatements } from "../notifications/outbox.ts";
import { type Completion, type Engine, getJob, owned, whyRefused } from "./engine.ts";
import type { BatchItem, JobEnd } from "./kinds.ts";
import { purgeStatement } from "./secrets.ts";
import { from, TERMINAL_STATUSES } from "./state.ts";
import { backoffSql } from "./timings.ts";

export interface CompletionDetail {
  result?: Record<string, unknown> | undefined;
  error?: string | undefined;
  retryable?: boolean | undefined;
}

export async function complete(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
  outcome: "succeeded" | "failed" | "cancelled",
  detail: CompletionDetail = {},
): Promise<Completion> {
  const { db, clock } = engine;
  const now = clock.now();
  const retry =
    outcome === "failed" && detail.retryable !== false
      ? sql`${jobs.status} = 'running' and ${jobs.attempt} < ${jobs.maxAttempts}`
      : sql`0`;
  const status =
    outcome === "succeeded"
      ? sql`'succeeded'`
      : outcome === "cancelled"
        ? sql`'cancelled'`
        : sql`case when ${retry} then 'queued' when ${jobs.status} = 'cancelling' then 'cancelled' else 'failed' end`;
  const update = db
    .update(jobs)
    .set({
      status: status as unknown as JobStatus,
      result: detail.result ?? null,
      error: detail.error ?? null,
      progress: null,
      leaseOwner: sql`case when ${retry} then null else ${jobs.leaseOwner} end`,
      leaseExpiresAt: null,
      notBefore: sql`case when ${retry} then ${now.getTime()} + ${backoffSql(engine.timings)} else ${jobs.notBefore} end`,
      finishedAt: sql`case when ${retry} then null else ${now.getTime()} end`,
      updatedAt: now,
    })
    .where(owned(jobId, agentId, fence, from("complete")))
    .returning();
  const current = await getJob(engine, jobId);
  const ends: JobEnd["status"][] = outcome === "failed" ? ["failed", "cancelled"] : [outcome];
  const extra = current
    ? hookStatements(
        engine,
        current,
        ends.map((s) => ({ status: s, result: detail.result ?? null, error: detail.error ?? null })),
        now,
      )
    : [];
  const [updated] = (await db.batch([update, ...extra] as [BatchItem, ...BatchItem[]]))[0] as Job[];
  if (updated) {
    if (updated.status === "queued") engine.notifyWork();
    return { kind: "done", job: updated };
  }
  if (
    current &&
    current.fence === fence &&
    current.leaseOwner === agentId &&
    TERMINAL_STATUSES.includes(current.status)
  )
    return { kind: "duplicate", job: current };
  return { kind: "refused", reason: await whyRefused(engine, jobId, agentId, fence) };
}

/** Finish hooks of jobs that already ended outside `complete`, in a batch of their own. */
export async function runFinishHooks(engine: Engine, ended: Job[]): Promise<void> {
  const statements = ended
    .filter((job) => job.finishedAt !== null && TERMINAL_STATUSES.includes(job.status))
    .flatMap((job) =>
      hookStatements(
        engine,
        job,
        [{ status: job.status as JobEnd["status"], result: job.result, error: job.error }],
        job.finishedAt as Date,
      ),
    );
  if (statements.length) await engine.db.batch(statements as [BatchItem, ...BatchItem[]]);
}

/** The kind's finish hook for each possible end, then the purge of the payload's secrets. */
function hookStatements(engine: Engine, job: Job, ends: JobEnd[], finishedAt: Date): BatchItem[] {
  const kind = engine.kinds.get(job.kind);
  const ctx = { db: engine.db, clock: engine.clock };
  return ends.flatMap((end) => {
    const ended = endedAs(job.id, end.status, finishedAt);
    const purge = purgeStatement(engine.db, kind, job, ended);
    const notices = end.status === "failed" ? failureStatements(engine.db, job, ended, finishedAt) : [];
    return [...(kind?.finish?.(ctx, job, end, ended) ?? []), ...(purge ? [purge] : []), ...notices];
  });
}

/** Holds only if the job reached `status` at `finishedAt`: the guard of every hook statement. */
function endedAs(jobId: string, status: JobEnd["status"], finishedAt: Date): SQL {
  return sql`exists (select 1 from ${jobs} where ${jobs.id} = ${jobId} and ${jobs.status} = ${status} and ${jobs.finishedAt} = ${finishedAt.getTime()})`;
}
