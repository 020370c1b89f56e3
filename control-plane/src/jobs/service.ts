/**
 * The job engine behind one object: what the hub, the scheduler and the domain services call. Each
 * move lives in its own module, with the state machine stated once in `state.ts`:
 *
 *   enqueue.ts   new jobs, from their kind's declaration; the overlap rule at enqueue
 *   offer.ts     offer to an agent that may take the job, ack, reject, refuse
 *   lease.ts     extend, release, resume after a reconnect
 *   parts.ts     parts of a running job's output, applied as they arrive
 *   complete.ts  results, and the finish hooks of every end
 *   cancel.ts    cancel (`CancelService` also tells the agent)
 *   reap.ts      lapsed offers and leases
 *   wait.ts      a request waiting for a job's end (a validate's answer)
 *
 * Callers that learn of new work (enqueue, a job back in the queue) call `notifyWork` so the hub
 * can offer it at once; the hub never decides anything the database has not already decided.
 */
import type { Clock } from "@lakesmith/shared";
import { and, count, desc, eq, inArray, type SQL } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type Job, type JobStatus, jobs } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { cancelJob } from "./cancel.ts";
import { type CompletionDetail, complete } from "./complete.ts";
import { type Completion, type Engine, getJob } from "./engine.ts";
import {
  type ActiveJob,
  enqueue,
  enqueueExclusive,
  insertStatement,
  type NewJob,
  type Routing,
  routingOf,
} from "./enqueue.ts";
import type { BatchItem, JobKindRegistry } from "./kinds.ts";
import { extend, heldBy, heldCounts, release, resume } from "./lease.ts";
import {
  type AgentAbilities,
  ack,
  forgetRefusals,
  hasRefusalsBy,
  offerNext,
  refuse,
  reject,
} from "./offer.ts";
import { applyPart, type PartMessage, type PartOutcome } from "./parts.ts";
import { reap } from "./reap.ts";
import { TERMINAL_STATUSES } from "./state.ts";
import { DEFAULT_LEASE_TIMINGS, type LeaseTimings } from "./timings.ts";
import { JobEnds, waitForEnd } from "./wait.ts";

export { TERMINAL_STATUSES } from "./state.ts";
export type { ActiveJob, AgentAbilities, Completion, NewJob, Routing };
export { DEFAULT_LEASE_TIMINGS, type LeaseTimings };

export interface JobFilter {
  kinds?: readonly string[];
  tableId?: string;
  status?: JobStatus;
}

export class JobService {
  private readonly workListeners = new Set<() => void>();
  private readonly ends = new JobEnds();
  /** What the engine's modules share. */
  readonly engine: Engine;

  constructor(
    db: Db,
    clock: Clock,
    readonly kinds: JobKindRegistry,
    readonly timings: LeaseTimings = DEFAULT_LEASE_TIMINGS,
  ) {
    this.engine = { db, clock, timings, kinds, notifyWork: () => this.notifyWork() };
  }

  /** Calls `listener` whenever a job may have become offerable. Returns the unsubscribe function. */
  onWork(listener: () => void): () => void {
    this.workListeners.add(listener);
    return () => this.workListeners.delete(listener);
  }

  notifyWork(): void {
    for (const listener of this.workListeners) listener();
  }

  insertStatement(input: NewJob, id?: string) {
    return insertStatement(this.engine, input, id);
  }

  /** What a job's kind declaration derives for it: where it may run, what it excludes, its attempts. */
  routingOf(input: NewJob): Routing {
    return routingOf(this.engine, input);
  }

  enqueue(input: NewJob): Promise<{ job: Job; created: boolean }> {
    return enqueue(this.engine, input);
  }

  enqueueExclusive(
    input: NewJob,
    alongside?: (jobId: string) => BatchItem[],
    before?: BatchItem[],
  ): Promise<{ job: Job } | { active: ActiveJob | undefined }> {
    return enqueueExclusive(this.engine, input, alongside, before);
  }

  get(id: string): Promise<Job | undefined> {
    return getJob(this.engine, id);
  }

  async list(filter: JobFilter, offset: number, limit: number): Promise<Page<Job>> {
    const { db } = this.engine;
    const conditions = [
      filter.kinds ? inArray(jobs.kind, [...filter.kinds]) : undefined,
      filter.tableId ? eq(jobs.tableId, filter.tableId) : undefined,
      filter.status ? eq(jobs.status, filter.status) : undefined,
    ].filter((c): c is SQL => c !== undefined);
    const where = conditions.length ? and(...conditions) : undefined;
    const [items, [total]] = await Promise.all([
      db
        .select()
        .from(jobs)
        .where(where)
        .orderBy(desc(jobs.createdAt), desc(jobs.id))
        .limit(limit)
        .offset(offset),
      db.select({ n: count() }).from(jobs).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  heldBy(agentId: string) {
    return heldBy(this.engine, agentId);
  }

  heldCounts(): Promise<Map<string, number>> {
    return heldCounts(this.engine);
  }

  offerNext(agent: AgentAbilities): Promise<Job | undefined> {
    return offerNext(this.engine, agent);
  }

  ack(agentId: string, jobId: string, fence: number): Promise<Completion> {
    return ack(this.engine, agentId, jobId, fence);
  }

  reject(agentId: string, jobId: string, fence: number): Promise<Completion> {
    return reject(this.engine, agentId, jobId, fence);
  }

  /** The agent may not take the job (allow list): back for another agent, an attempt counted. */
  refuse(agentId: string, jobId: string, fence: number, reason: string): Promise<Completion> {
    return refuse(this.engine, agentId, jobId, fence, reason);
  }

  forgetRefusals(agentId: string): Promise<void> {
    return forgetRefusals(this.engine, agentId);
  }

  hasRefusalsBy(agentId: string): Promise<boolean> {
    return hasRefusalsBy(this.engine, agentId);
  }

  extend(
    agentId: string,
    jobId: string,
    fence: number,
    progress?: Record<string, unknown>,
  ): Promise<Completion> {
    return extend(this.engine, agentId, jobId, fence, progress);
  }

  /** Applies part `seq` of a running job's output (`parts.ts`). */
  part(agentId: string, message: PartMessage): Promise<PartOutcome> {
    return applyPart(this.engine, agentId, message);
  }

  release(agentId: string, jobId: string, fence: number, reason: string): Promise<Completion> {
    return release(this.engine, agentId, jobId, fence, reason);
  }

  async complete(
    agentId: string,
    jobId: string,
    fence: number,
    outcome: "succeeded" | "failed" | "cancelled",
    detail: CompletionDetail = {},
  ): Promise<Completion> {
    const completion = await complete(this.engine, agentId, jobId, fence, outcome, detail);
    if (completion.kind === "done" && TERMINAL_STATUSES.includes(completion.job.status))
      this.ends.ended(jobId);
    return completion;
  }

  /**
   * The job once it ended, or as it stands after `ms` (default `preflightWaitMs`) or when `signal`
   * aborts; undefined for an unknown id. Holds no transaction while it waits.
   */
  waitForEnd(
    jobId: string,
    ms = this.timings.preflightWaitMs,
    signal?: AbortSignal,
  ): Promise<Job | undefined> {
    return waitForEnd(this.engine, this.ends, jobId, ms, signal);
  }

  /** The state move of a cancel (`CancelService` also tells the agent). */
  cancel(jobId: string) {
    return cancelJob(this.engine, jobId);
  }

  resume(agentId: string, leases: readonly { job_id: string; fence: number }[]) {
    return resume(this.engine, agentId, leases);
  }

  reap() {
    return reap(this.engine);
  }
}
