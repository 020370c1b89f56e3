/**
 * What every module of the job engine shares: the database, the clock, the timings, the kind
 * declarations and the "new work" signal. The modules are `enqueue.ts`, `offer.ts`, `lease.ts`,
 * `complete.ts`, `cancel.ts` and `reap.ts`; `service.ts` puts them behind one `JobService`.
 */
import type { Clock } from "@lakesmith/shared";
import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type Job, type JobStatus, jobs } from "../db/schema.ts";
import type { JobKindRegistry } from "./kinds.ts";
import type { LeaseTimings } from "./timings.ts";

export interface Engine {
  db: Db;
  clock: Clock;
  timings: LeaseTimings;
  kinds: JobKindRegistry;
  /** A job may have become offerable: the hub runs a dispatch round. */
  notifyWork(): void;
}

export type Completion =
  | { kind: "done"; job: Job }
  /** The same result was already recorded (a duplicate completion): nothing changed. */
  | { kind: "duplicate"; job: Job }
  /** Old fence, another owner, or the job is over: the agent must stop this work. */
  | { kind: "refused"; reason: string };

/** The job, if this agent holds it at this fence in one of `statuses`. */
export function owned(jobId: string, agentId: string, fence: number, statuses: JobStatus[]): SQL {
  return and(
    eq(jobs.id, jobId),
    eq(jobs.fence, fence),
    eq(jobs.leaseOwner, agentId),
    inArray(jobs.status, statuses),
  ) as SQL;
}

export async function getJob(engine: Engine, id: string): Promise<Job | undefined> {
  const [job] = await engine.db.select().from(jobs).where(eq(jobs.id, id));
  return job;
}

/** Why a message about a job changed nothing, in words the agent logs. */
export async function whyRefused(engine: Engine, jobId: string, agentId: string, fence: number) {
  const job = await getJob(engine, jobId);
  if (!job) return "no such job";
  if (job.fence !== fence) return `stale fence ${fence}; the job is at fence ${job.fence}`;
  if (job.leaseOwner !== agentId) return "the job is not leased to this agent";
  return `the job is ${job.status}`;
}

/** The outcome of a move by an agent: done, or refused with the reason. */
export async function outcomeOf(
  engine: Engine,
  job: Job | undefined,
  ref: { jobId: string; agentId: string; fence: number },
): Promise<Completion> {
  return job
    ? { kind: "done", job }
    : { kind: "refused", reason: await whyRefused(engine, ref.jobId, ref.agentId, ref.fence) };
}
