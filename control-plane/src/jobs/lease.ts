/**
 * Leases while a job runs: heartbeats and progress extend them, a draining agent releases them, and
 * a reconnecting agent's claims are checked against the database.
 *
 * - `extend` answers `done` with the job (its status tells the caller whether a cancel is pending)
 *   or `refused` when the agent no longer owns it.
 * - `release` gives a running job back unfinished: queued again at once, the attempt not counted.
 * - `resume` (on hello): a lease the agent still owns is extended (`valid`, or `cancelling`);
 *   anything else is `lost`. Jobs the database gives the agent but the agent does not name (it
 *   restarted and lost them) go back to the queue now instead of lapsing.
 */
import { and, count, eq, inArray, sql } from "drizzle-orm";
import { type Job, jobs } from "../db/schema.ts";
import { type Completion, type Engine, outcomeOf, owned } from "./engine.ts";
import { reject } from "./offer.ts";
import { lapse } from "./reap.ts";
import { from, HELD_STATUSES } from "./state.ts";

export async function extend(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
  progress?: Record<string, unknown>,
): Promise<Completion> {
  const now = engine.clock.now();
  const [job] = await engine.db
    .update(jobs)
    .set({
      leaseExpiresAt: new Date(now.getTime() + engine.timings.leaseMs),
      ...(progress ? { progress } : {}),
      updatedAt: now,
    })
    .where(owned(jobId, agentId, fence, from("extend")))
    .returning();
  return outcomeOf(engine, job, { jobId, agentId, fence });
}

export async function release(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
  reason: string,
): Promise<Completion> {
  const now = engine.clock.now();
  const [job] = await engine.db
    .update(jobs)
    .set({
      status: sql`case when ${jobs.status} = 'cancelling' then 'cancelled' else 'queued' end`,
      attempt: sql`max(${jobs.attempt} - 1, 0)`,
      leaseOwner: null,
      leaseExpiresAt: null,
      progress: null,
      notBefore: now,
      error: `released by the agent: ${reason}`,
      finishedAt: sql`case when ${jobs.status} = 'cancelling' then ${now.getTime()} else null end`,
      updatedAt: now,
    })
    .where(owned(jobId, agentId, fence, from("release")))
    .returning();
  if (job) engine.notifyWork();
  return outcomeOf(engine, job, { jobId, agentId, fence });
}

/** Jobs an agent holds (offered to it, running or being cancelled). */
export function heldBy(
  engine: Engine,
  agentId: string,
): Promise<Pick<Job, "id" | "kind" | "status" | "fence">[]> {
  return engine.db
    .select({ id: jobs.id, kind: jobs.kind, status: jobs.status, fence: jobs.fence })
    .from(jobs)
    .where(and(eq(jobs.leaseOwner, agentId), inArray(jobs.status, HELD_STATUSES)));
}

/** How many jobs each agent holds (offered, running or being cancelled). */
export async function heldCounts(engine: Engine): Promise<Map<string, number>> {
  const rows = await engine.db
    .select({ owner: jobs.leaseOwner, n: count() })
    .from(jobs)
    .where(inArray(jobs.status, HELD_STATUSES))
    .groupBy(jobs.leaseOwner);
  return new Map(rows.map((r) => [r.owner ?? "", r.n]));
}

export async function resume(
  engine: Engine,
  agentId: string,
  leases: readonly { job_id: string; fence: number }[],
) {
  const verdicts: { job_id: string; fence: number; state: "valid" | "lost" | "cancelling" }[] = [];
  for (const lease of leases) {
    const outcome = await extend(engine, agentId, lease.job_id, lease.fence);
    verdicts.push({
      ...lease,
      state:
        outcome.kind === "done" ? (outcome.job.status === "cancelling" ? "cancelling" : "valid") : "lost",
    });
  }
  const named = new Set(leases.map((l) => l.job_id));
  const orphans = (await heldBy(engine, agentId)).filter((j) => !named.has(j.id));
  for (const orphan of orphans) {
    if (orphan.status === "offered") await reject(engine, agentId, orphan.id, orphan.fence);
    else await lapse(engine, orphan.id, orphan.fence, "the agent reconnected without this job");
  }
  return verdicts;
}
