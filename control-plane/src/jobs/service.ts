/**
 * The job state machine (architecture.md, "Jobs and leases"). Every move is one conditional UPDATE
 * keyed on the job's id, status and fence, so two callers racing on the same job can't both win:
 *
 *   queued ──offer──▶ offered ──ack──▶ running ──result──▶ succeeded | failed | cancelled
 *     ▲                  │                │  └──cancel──▶ cancelling ──result/lapse──▶ cancelled
 *     └──reject/timeout──┘                └──lease lapses / retryable failure──▶ queued (backoff)
 *
 * The fence is bumped on every offer; a message that names an older fence changes nothing.
 * Callers that learn of new work (enqueue, a job back in the queue) call `onWork` so the hub can
 * offer it at once; the hub never decides anything the database has not already decided.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { and, asc, count, desc, eq, inArray, lt, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type Job, type JobStatus, jobs, type Priority } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";

/** Timings of leases and retries; the defaults suit production, tests shorten them. */
export interface LeaseTimings {
  /** A lease lasts this long past the last ack, progress or heartbeat. */
  leaseMs: number;
  /** An offer not acknowledged within this goes back to the queue, without counting an attempt. */
  offerTimeoutMs: number;
  /** How often agents are asked to heartbeat (a third of the lease by default). */
  heartbeatMs: number;
  /** Backoff before attempt n+1 is `retryBaseMs * 2^(n-1)`, at most `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export const DEFAULT_LEASE_TIMINGS: LeaseTimings = {
  leaseMs: 60_000,
  offerTimeoutMs: 10_000,
  heartbeatMs: 20_000,
  retryBaseMs: 30_000,
  retryMaxMs: 30 * 60_000,
};

export const TERMINAL_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "cancelled"];

export interface NewJob {
  kind: string;
  payload: Record<string, unknown>;
  tableId?: string | null;
  priority?: Priority;
  requires?: string[];
  maxAttempts?: number;
  /** At most one job is ever created per key (schedule slots). */
  dedupeKey?: string | null;
  trigger?: string;
  scheduleId?: string | null;
  createdBy?: string | null;
}

/** What an agent announced it can do. */
export interface AgentAbilities {
  id: string;
  kinds: readonly string[];
  capabilities: readonly string[];
}

export interface JobFilter {
  kinds?: readonly string[];
  tableId?: string;
  status?: JobStatus;
}

export type Completion =
  | { kind: "done"; job: Job }
  /** The same result was already recorded (a duplicate completion): nothing changed. */
  | { kind: "duplicate"; job: Job }
  /** Old fence, another owner, or the job is over: the agent must stop this work. */
  | { kind: "refused"; reason: string };

/** How a job ended, as a finish hook sees it. */
export interface JobEnd {
  status: "succeeded" | "failed" | "cancelled";
  result: Record<string, unknown> | null;
  error: string | null;
}

type BatchItem = Parameters<Db["batch"]>[0][number];

/**
 * Statements that run in the same batch as a job's end, after it, so what a job kind records
 * elsewhere (a table's onboarding status) moves together with the job. `ended` is a SQL condition
 * that holds only if the job really reached `end.status` in this batch; every statement must be
 * guarded by it. A hook is asked once per end the batch might produce.
 */
export type FinishHook = (job: Job, end: JobEnd, ended: SQL) => BatchItem[];

type Notify = () => void;

const CANDIDATES_PER_OFFER = 32;

/** Statuses in which a job holds an agent's attention: offered, leased, or being cancelled. */
const HELD: JobStatus[] = ["offered", "running", "cancelling"];

/**
 * Kinds of which a table runs one job at a time: crunch and optimize rewrite the table and commit
 * to its log, so a second one at the same time would only lose its commit race and its work. The
 * manual trigger refuses an overlap with a 409; a schedule's run (or a retry) that comes while
 * another is active waits queued until the active one ends. Every other kind runs side by side.
 */
const ONE_PER_TABLE: readonly (readonly string[])[] = [["crunch", "optimize"]];

export class JobService {
  private readonly finishHooks = new Map<string, FinishHook>();
  private readonly workListeners = new Set<Notify>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly timings: LeaseTimings = DEFAULT_LEASE_TIMINGS,
  ) {}

  /** Registers statements that run with the completion of every job of `kind`. */
  onFinish(kind: string, hook: FinishHook): void {
    this.finishHooks.set(kind, hook);
  }

  /** Calls `listener` whenever a job may have become offerable. Returns the unsubscribe function. */
  onWork(listener: Notify): () => void {
    this.workListeners.add(listener);
    return () => this.workListeners.delete(listener);
  }

  notifyWork(): void {
    for (const listener of this.workListeners) listener();
  }

  /** The insert of a new job, for callers that batch it with their own writes. */
  insertStatement(input: NewJob, id = newId("job")) {
    const now = this.clock.now();
    return this.db
      .insert(jobs)
      .values({
        id,
        kind: input.kind,
        tableId: input.tableId ?? null,
        priority: input.priority ?? "P2",
        payload: input.payload,
        requires: input.requires ?? [],
        maxAttempts: input.maxAttempts ?? 3,
        dedupeKey: input.dedupeKey ?? null,
        trigger: input.trigger ?? "manual",
        scheduleId: input.scheduleId ?? null,
        createdBy: input.createdBy ?? null,
        notBefore: now,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: jobs.dedupeKey })
      .returning();
  }

  /** Queues a job. With a `dedupeKey` that already exists, returns the existing job instead. */
  async enqueue(input: NewJob): Promise<{ job: Job; created: boolean }> {
    const [job] = await this.insertStatement(input);
    if (job) {
      this.notifyWork();
      return { job, created: true };
    }
    const [existing] = await this.db
      .select()
      .from(jobs)
      .where(eq(jobs.dedupeKey, input.dedupeKey ?? ""));
    if (!existing) throw new Error("job insert returned no row");
    return { job: existing, created: false };
  }

  async get(id: string): Promise<Job | undefined> {
    const [job] = await this.db.select().from(jobs).where(eq(jobs.id, id));
    return job;
  }

  async list(filter: JobFilter, offset: number, limit: number): Promise<Page<Job>> {
    const conditions = [
      filter.kinds ? inArray(jobs.kind, [...filter.kinds]) : undefined,
      filter.tableId ? eq(jobs.tableId, filter.tableId) : undefined,
      filter.status ? eq(jobs.status, filter.status) : undefined,
    ].filter((c): c is SQL => c !== undefined);
    const where = conditions.length ? and(...conditions) : undefined;
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(jobs)
        .where(where)
        .orderBy(desc(jobs.createdAt), desc(jobs.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(jobs).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /** Jobs an agent holds (offered to it, running or being cancelled). */
  heldBy(agentId: string): Promise<Pick<Job, "id" | "kind" | "status" | "fence">[]> {
    return this.db
      .select({ id: jobs.id, kind: jobs.kind, status: jobs.status, fence: jobs.fence })
      .from(jobs)
      .where(and(eq(jobs.leaseOwner, agentId), inArray(jobs.status, HELD)));
  }

  /** How many jobs each agent holds (offered, running or being cancelled). */
  async heldCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .select({ owner: jobs.leaseOwner, n: count() })
      .from(jobs)
      .where(inArray(jobs.status, HELD))
      .groupBy(jobs.leaseOwner);
    return new Map(rows.map((r) => [r.owner ?? "", r.n]));
  }

  /**
   * Offers the most urgent queued job the agent can run (P1 before P2, then oldest): moves it to
   * `offered`, owned by the agent, with a new fence. Returns undefined when there is none.
   */
  async offerNext(agent: AgentAbilities): Promise<Job | undefined> {
    if (agent.kinds.length === 0) return undefined;
    const now = this.clock.now();
    const candidates = await this.db
      .select({
        id: jobs.id,
        fence: jobs.fence,
        requires: jobs.requires,
        kind: jobs.kind,
        tableId: jobs.tableId,
      })
      .from(jobs)
      .where(and(eq(jobs.status, "queued"), inArray(jobs.kind, [...agent.kinds]), lte(jobs.notBefore, now)))
      .orderBy(asc(jobs.priority), asc(jobs.createdAt), asc(jobs.id))
      .limit(CANDIDATES_PER_OFFER);
    for (const candidate of candidates) {
      if (!candidate.requires.every((c) => agent.capabilities.includes(c))) continue;
      const [offered] = await this.db
        .update(jobs)
        .set({
          status: "offered",
          fence: sql`${jobs.fence} + 1`,
          leaseOwner: agent.id,
          leaseExpiresAt: new Date(now.getTime() + this.timings.offerTimeoutMs),
          updatedAt: now,
        })
        .where(
          and(
            eq(jobs.id, candidate.id),
            eq(jobs.status, "queued"),
            eq(jobs.fence, candidate.fence),
            this.tableFree(candidate.kind, candidate.tableId),
          ),
        )
        .returning();
      if (offered) return offered;
    }
    return undefined;
  }

  /**
   * For a kind of `ONE_PER_TABLE`: holds while no job of its group holds the table. Part of the
   * offer's own UPDATE, so two agents offered two such jobs of a table at once can't both get one
   * (SQLite runs one write at a time, and the second sees the first's `offered`). The `+` keeps
   * SQLite on the (status, kind, ...) index, which holds few jobs in these statuses, instead of the
   * table's index, which holds every crunch the table ever had.
   */
  private tableFree(kind: string, tableId: string | null): SQL | undefined {
    const group = ONE_PER_TABLE.find((g) => g.includes(kind));
    if (!group || tableId === null) return undefined;
    return sql`not exists (select 1 from ${jobs} as other
      where other.status in ${HELD} and other.kind in ${group} and +other.table_id = ${tableId})`;
  }

  /** The agent accepted the offer: the job is leased and starts (an attempt is counted). */
  async ack(agentId: string, jobId: string, fence: number): Promise<Completion> {
    const now = this.clock.now();
    const [job] = await this.db
      .update(jobs)
      .set({
        status: "running",
        attempt: sql`${jobs.attempt} + 1`,
        leaseExpiresAt: new Date(now.getTime() + this.timings.leaseMs),
        startedAt: sql`coalesce(${jobs.startedAt}, ${now.getTime()})`,
        updatedAt: now,
      })
      .where(this.owned(jobId, agentId, fence, ["offered"]))
      .returning();
    return job
      ? { kind: "done", job }
      : { kind: "refused", reason: await this.whyRefused(jobId, agentId, fence) };
  }

  /** The agent declined the offer: back to the queue at once, no attempt counted. */
  async reject(agentId: string, jobId: string, fence: number): Promise<Completion> {
    const [job] = await this.db
      .update(jobs)
      .set({ status: "queued", leaseOwner: null, leaseExpiresAt: null, updatedAt: this.clock.now() })
      .where(this.owned(jobId, agentId, fence, ["offered"]))
      .returning();
    if (!job) return { kind: "refused", reason: await this.whyRefused(jobId, agentId, fence) };
    this.notifyWork();
    return { kind: "done", job };
  }

  /**
   * Progress or a heartbeat: extends the lease. Answers `done` with the job (its status tells the
   * caller whether a cancel is pending) or `refused` when the agent no longer owns it.
   */
  async extend(
    agentId: string,
    jobId: string,
    fence: number,
    progress?: Record<string, unknown>,
  ): Promise<Completion> {
    const now = this.clock.now();
    const [job] = await this.db
      .update(jobs)
      .set({
        leaseExpiresAt: new Date(now.getTime() + this.timings.leaseMs),
        ...(progress ? { progress } : {}),
        updatedAt: now,
      })
      .where(this.owned(jobId, agentId, fence, ["running", "cancelling"]))
      .returning();
    return job
      ? { kind: "done", job }
      : { kind: "refused", reason: await this.whyRefused(jobId, agentId, fence) };
  }

  /**
   * The agent gives a running job back unfinished (it is draining): queued again at once and the
   * attempt it used is not counted.
   */
  async release(agentId: string, jobId: string, fence: number, reason: string): Promise<Completion> {
    const now = this.clock.now();
    const [job] = await this.db
      .update(jobs)
      .set({
        status: sql`case when ${jobs.status} = 'cancelling' then 'cancelled' else 'queued' end`,
        attempt: sql`max(${jobs.attempt} - 1, 0)`,
        leaseOwner: null,
        leaseExpiresAt: null,
        notBefore: now,
        error: `released by the agent: ${reason}`,
        finishedAt: sql`case when ${jobs.status} = 'cancelling' then ${now.getTime()} else null end`,
        updatedAt: now,
      })
      .where(this.owned(jobId, agentId, fence, ["running", "cancelling"]))
      .returning();
    if (!job) return { kind: "refused", reason: await this.whyRefused(jobId, agentId, fence) };
    this.notifyWork();
    return { kind: "done", job };
  }

  /**
   * Records the agent's result, once. A retryable failure before the last attempt queues the job
   * again after a backoff; a job being cancelled ends `cancelled` unless it reports success (it
   * had already committed when the cancel arrived, and the record says what really happened).
   */
  async complete(
    agentId: string,
    jobId: string,
    fence: number,
    outcome: "succeeded" | "failed" | "cancelled",
    detail: {
      result?: Record<string, unknown> | undefined;
      error?: string | undefined;
      retryable?: boolean | undefined;
    } = {},
  ): Promise<Completion> {
    const now = this.clock.now();
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
    const update = this.db
      .update(jobs)
      .set({
        status: status as unknown as JobStatus,
        result: detail.result ?? null,
        error: detail.error ?? null,
        leaseOwner: sql`case when ${retry} then null else ${jobs.leaseOwner} end`,
        leaseExpiresAt: null,
        notBefore: sql`case when ${retry} then ${now.getTime()} + ${this.backoffSql()} else ${jobs.notBefore} end`,
        finishedAt: sql`case when ${retry} then null else ${now.getTime()} end`,
        updatedAt: now,
      })
      .where(this.owned(jobId, agentId, fence, ["running", "cancelling"]))
      .returning();
    const current = await this.get(jobId);
    const ends: JobEnd["status"][] = outcome === "failed" ? ["failed", "cancelled"] : [outcome];
    const extra = current
      ? this.hookStatements(
          current,
          ends.map((status) => ({ status, result: detail.result ?? null, error: detail.error ?? null })),
          now,
        )
      : [];
    const [updated] = (await this.db.batch([update, ...extra] as [BatchItem, ...BatchItem[]]))[0] as Job[];
    if (updated) {
      if (updated.status === "queued") this.notifyWork();
      return { kind: "done", job: updated };
    }
    if (
      current &&
      current.fence === fence &&
      current.leaseOwner === agentId &&
      TERMINAL_STATUSES.includes(current.status)
    )
      return { kind: "duplicate", job: current };
    return { kind: "refused", reason: await this.whyRefused(jobId, agentId, fence) };
  }

  /**
   * Cancels a job: queued or offered jobs end at once; a running job moves to `cancelling` and its
   * agent is told (the returned `notify`). Cancelling a finished job is a conflict for the caller.
   */
  async cancel(
    jobId: string,
  ): Promise<{ job: Job; changed: boolean; notify?: { agentId: string; fence: number } } | undefined> {
    const now = this.clock.now();
    const [ended] = await this.db
      .update(jobs)
      .set({
        status: "cancelled",
        error: "cancelled before it started",
        leaseOwner: null,
        leaseExpiresAt: null,
        finishedAt: now,
        updatedAt: now,
      })
      .where(and(eq(jobs.id, jobId), inArray(jobs.status, ["queued", "offered"])))
      .returning();
    if (ended) {
      await this.runHooksFor([ended]);
      return { job: ended, changed: true };
    }
    const [cancelling] = await this.db
      .update(jobs)
      .set({ status: "cancelling", updatedAt: now })
      .where(and(eq(jobs.id, jobId), inArray(jobs.status, ["running", "cancelling"])))
      .returning();
    if (cancelling?.leaseOwner) {
      const notify = { agentId: cancelling.leaseOwner, fence: cancelling.fence };
      return { job: cancelling, changed: true, notify };
    }
    const job = await this.get(jobId);
    return job ? { job, changed: false } : undefined;
  }

  /**
   * On (re)connect: checks the leases an agent says it holds. A lease it still owns is extended
   * (`valid`, or `cancelling`); anything else is `lost`. Jobs the database gives the agent but the
   * agent does not name (it restarted and lost them) go back to the queue now instead of lapsing.
   */
  async resume(agentId: string, leases: readonly { job_id: string; fence: number }[]) {
    const verdicts: { job_id: string; fence: number; state: "valid" | "lost" | "cancelling" }[] = [];
    for (const lease of leases) {
      const outcome = await this.extend(agentId, lease.job_id, lease.fence);
      verdicts.push({
        ...lease,
        state:
          outcome.kind === "done" ? (outcome.job.status === "cancelling" ? "cancelling" : "valid") : "lost",
      });
    }
    const named = new Set(leases.map((l) => l.job_id));
    const orphans = (await this.heldBy(agentId)).filter((j) => !named.has(j.id));
    for (const orphan of orphans) {
      if (orphan.status === "offered") await this.reject(agentId, orphan.id, orphan.fence);
      else await this.lapse(orphan.id, orphan.fence, "the agent reconnected without this job");
    }
    return verdicts;
  }

  /**
   * The reaper (runs in the scheduler tick): expired offers go back to the queue without counting
   * an attempt; expired leases go back with a backoff, or fail after the last attempt; a job being
   * cancelled whose lease lapsed ends cancelled. Returns how many jobs moved.
   */
  async reap(): Promise<{ offers: number; leases: number; cancelled: number }> {
    const now = this.clock.now();
    const expired = (statuses: JobStatus[]) =>
      and(inArray(jobs.status, statuses), lt(jobs.leaseExpiresAt, now));
    const [offers, leases, cancelled] = await this.db.batch([
      this.db
        .update(jobs)
        .set({ status: "queued", leaseOwner: null, leaseExpiresAt: null, updatedAt: now })
        .where(expired(["offered"]))
        .returning({ id: jobs.id }),
      this.db
        .update(jobs)
        .set(this.lapseSet(now, "the lease lapsed"))
        .where(expired(["running"]))
        .returning(),
      this.db
        .update(jobs)
        .set({ status: "cancelled", leaseOwner: null, leaseExpiresAt: null, finishedAt: now, updatedAt: now })
        .where(expired(["cancelling"]))
        .returning(),
    ]);
    await this.runHooksFor([...leases, ...cancelled].filter((j) => j.finishedAt !== null));
    if (offers.length || leases.length) this.notifyWork();
    return { offers: offers.length, leases: leases.length, cancelled: cancelled.length };
  }

  /**
   * Finish hooks for jobs that already ended outside `complete` (lapsed leases). They run in a
   * batch of their own right after; each is guarded, so running one twice changes nothing.
   */
  private async runHooksFor(ended: Job[]): Promise<void> {
    const statements = ended.flatMap((job) =>
      this.hookStatements(
        job,
        [{ status: job.status as JobEnd["status"], result: job.result, error: job.error }],
        job.finishedAt as Date,
      ),
    );
    if (statements.length) await this.db.batch(statements as [BatchItem, ...BatchItem[]]);
  }

  private hookStatements(job: Job, ends: JobEnd[], finishedAt: Date): BatchItem[] {
    const hook = this.finishHooks.get(job.kind);
    if (!hook) return [];
    return ends.flatMap((end) =>
      hook(
        job,
        end,
        sql`exists (select 1 from ${jobs} where ${jobs.id} = ${job.id} and ${jobs.status} = ${end.status} and ${jobs.finishedAt} = ${finishedAt.getTime()})`,
      ),
    );
  }

  /** Ends a lease early as if it had lapsed (the agent lost the job). */
  private async lapse(jobId: string, fence: number, reason: string): Promise<void> {
    const lapsed = await this.db
      .update(jobs)
      .set(this.lapseSet(this.clock.now(), reason))
      .where(and(eq(jobs.id, jobId), eq(jobs.fence, fence), inArray(jobs.status, ["running", "cancelling"])))
      .returning();
    await this.runHooksFor(lapsed.filter((j) => j.finishedAt !== null));
    this.notifyWork();
  }

  /** A lost lease: retry after a backoff while attempts remain, else fail; a cancel in flight ends it. */
  private lapseSet(now: Date, reason: string) {
    const retry = sql`${jobs.status} = 'running' and ${jobs.attempt} < ${jobs.maxAttempts}`;
    return {
      status:
        sql`case when ${retry} then 'queued' when ${jobs.status} = 'cancelling' then 'cancelled' else 'failed' end` as unknown as JobStatus,
      error: sql`case when ${retry} or ${jobs.status} = 'cancelling' then ${reason} else ${reason} || ' after ' || ${jobs.attempt} || ' attempts' end`,
      leaseOwner: null,
      leaseExpiresAt: null,
      notBefore: sql`case when ${retry} then ${now.getTime()} + ${this.backoffSql()} else ${jobs.notBefore} end`,
      finishedAt: sql`case when ${retry} then null else ${now.getTime()} end`,
      updatedAt: now,
    };
  }

  /** `retryBaseMs * 2^(attempt-1)`, capped; SQLite's shift does the power of two. */
  private backoffSql(): SQL {
    return sql`min(${this.timings.retryBaseMs} << min(max(${jobs.attempt} - 1, 0), 20), ${this.timings.retryMaxMs})`;
  }

  private owned(jobId: string, agentId: string, fence: number, statuses: JobStatus[]): SQL {
    return and(
      eq(jobs.id, jobId),
      eq(jobs.fence, fence),
      eq(jobs.leaseOwner, agentId),
      inArray(jobs.status, statuses),
    ) as SQL;
  }

  private async whyRefused(jobId: string, agentId: string, fence: number): Promise<string> {
    const job = await this.get(jobId);
    if (!job) return "no such job";
    if (job.fence !== fence) return `stale fence ${fence}; the job is at fence ${job.fence}`;
    if (job.leaseOwner !== agentId) return "the job is not leased to this agent";
    return `the job is ${job.status}`;
  }
}
