/**
 * The reaper (runs in the scheduler tick) and early lapses.
 *
 * - Expired offers go back to the queue without counting an attempt.
 * - Expired leases go back with a backoff, or fail after the last attempt.
 * - A job being cancelled whose lease lapsed ends cancelled.
 * - Jobs that end here run their kind's finish hook right after.
 * Bounds: three set-based UPDATEs in one batch, on the `(status, lease_expires_at)` index.
 */
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { type JobStatus, jobs } from "../db/schema.ts";
import { runFinishHooks } from "./complete.ts";
import type { Engine } from "./engine.ts";
import { from, type Move } from "./state.ts";
import { backoffSql } from "./timings.ts";

export interface Reaped {
  offers: number;
  leases: number;
  cancelled: number;
}

export async function reap(engine: Engine): Promise<Reaped> {
  const { db, clock } = engine;
  const now = clock.now();
  const expired = (move: Move) => and(inArray(jobs.status, from(move)), lt(jobs.leaseExpiresAt, now));
  const [offers, leases, cancelled] = await db.batch([
    db
      .update(jobs)
      .set({ status: "queued", leaseOwner: null, leaseExpiresAt: null, progress: null, updatedAt: now })
      .where(expired("reapOffer"))
      .returning({ id: jobs.id }),
    db
      .update(jobs)
      .set(lapseSet(engine, now, "the lease lapsed"))
      .where(expired("reapLease"))
      .returning(),
    db
      .update(jobs)
      .set({
        status: "cancelled",
        leaseOwner: null,
        leaseExpiresAt: null,
        progress: null,
        finishedAt: now,
        updatedAt: now,
      })
      .where(expired("reapCancel"))
      .returning(),
  ]);
  await runFinishHooks(engine, [...leases, ...cancelled]);
  if (offers.length || leases.length) engine.notifyWork();
  return { offers: offers.length, leases: leases.length, cancelled: cancelled.length };
}

/** Ends a lease early as if it had lapsed (the agent lost the job). */
export async function lapse(engine: Engine, jobId: string, fence: number, reason: string): Promise<void> {
  const lapsed = await engine.db
    .update(jobs)
    .set(lapseSet(engine, engine.clock.now(), reason))
    .where(and(eq(jobs.id, jobId), eq(jobs.fence, fence), inArray(jobs.status, from("lapse"))))
    .returning();
  await runFinishHooks(engine, lapsed);
  engine.notifyWork();
}

/** A lost lease: retry after a backoff while attempts remain, else fail; a cancel in flight ends it. */
function lapseSet(engine: Engine, now: Date, reason: string) {
  const retry = sql`${jobs.status} = 'running' and ${jobs.attempt} < ${jobs.maxAttempts}`;
  return {
    status:
      sql`case when ${retry} then 'queued' when ${jobs.status} = 'cancelling' then 'cancelled' else 'failed' end` as unknown as JobStatus,
    error: sql`case when ${retry} or ${jobs.status} = 'cancelling' then ${reason} else ${reason} || ' after ' || ${jobs.attempt} || ' attempts' end`,
    leaseOwner: null,
    leaseExpiresAt: null,
    progress: null,
    notBefore: sql`case when ${retry} then ${now.getTime()} + ${backoffSql(engine.timings)} else ${jobs.notBefore} end`,
    finishedAt: sql`case when ${retry} then null else ${now.getTime()} end`,
    updatedAt: now,
  };
}
