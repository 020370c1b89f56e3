/**
 * Offer and claim: a queued job goes to one connected agent that may take it, and the agent
 * accepts (ack), declines (reject: it is full or draining) or refuses it (its allow list forbids).
 *
 * - An agent is offered a job only when it announced the job's kind and capabilities, its allow
 *   list covers every location of the job and it may reach every endpoint, it has not refused the
 *   job before, and no job that the job's kind may not run beside holds an agent. Candidates come
 *   in offer order (P1 before P2, then oldest), and a job this agent may not take never hides one
 *   it may: when the first look finds none, a search checks every queued job (`offerNext`).
 * - A refusal hands the job back for another agent at once: it counts an attempt (a job every agent
 *   refuses fails when its budget is spent, naming the refusals) and the refusing agent is not
 *   offered it again, until it connects with a different allow list.
 */
import { within } from "@lakesmith/shared/locations";
import { and, asc, eq, inArray, lte, type SQL, sql } from "drizzle-orm";
import { type Job, jobs } from "../db/schema.ts";
import { runFinishHooks } from "./complete.ts";
import { type Completion, type Engine, outcomeOf, owned } from "./engine.ts";
import { conflicting } from "./exclusion.ts";
import { from, HELD_STATUSES } from "./state.ts";

/** What an agent announced it can do and may use. */
export interface AgentAbilities {
  id: string;
  kinds: readonly string[];
  capabilities: readonly string[];
  /** Location keys (`locationKey`) of the prefixes its allow list permits. */
  allow: readonly string[];
  /** Endpoint keys (`endpointKey`) it may reach. */
  endpoints: readonly string[];
}

/** Queued jobs looked at first, in offer order, with the checks in JavaScript. */
const FIRST_LOOK = 8;
/** Candidates the full search returns, all of which pass every check but the race for them. */
const CANDIDATES = 8;

type Candidate = Pick<
  Job,
  "id" | "fence" | "tableId" | "requires" | "locations" | "endpoints" | "refusals" | "exclusion" | "locks"
>;

/**
 * Offers the most urgent queued job the agent may run: moves it to `offered`, owned by the agent,
 * with a new fence. Returns undefined when there is none.
 *
 * Two steps, so the common case costs what a plain queue read costs: the first `FIRST_LOOK` queued
 * jobs of the agent's kinds in offer order, checked here; only when none of them is for this agent
 * (and there are more), one search that checks every queued job in SQL and returns the first few
 * that pass. The checks read JSON: run on every queued job before the sort, they tripled an offer.
 */
export async function offerNext(engine: Engine, agent: AgentAbilities): Promise<Job | undefined> {
  if (agent.kinds.length === 0) return undefined;
  const now = engine.clock.now();
  const queued = and(
    eq(jobs.status, "queued"),
    inArray(jobs.kind, [...agent.kinds]),
    lte(jobs.notBefore, now),
  );
  const first = await engine.db
    .select({
      id: jobs.id,
      fence: jobs.fence,
      tableId: jobs.tableId,
      requires: jobs.requires,
      locations: jobs.locations,
      endpoints: jobs.endpoints,
      refusals: jobs.refusals,
      exclusion: jobs.exclusion,
      locks: jobs.locks,
    })
    .from(jobs)
    .where(queued)
    .orderBy(asc(jobs.priority), asc(jobs.createdAt), asc(jobs.id))
    .limit(FIRST_LOOK);
  const offered = await claimFirst(
    engine,
    agent,
    first.filter((c) => mayTake(agent, c)),
    now,
  );
  if (offered || first.length < FIRST_LOOK) return offered;
  return claimFirst(engine, agent, await search(engine, agent, queued), now);
}

/** Whether the agent may take the job: the JavaScript form of `search`'s checks. */
function mayTake(agent: AgentAbilities, job: Candidate): boolean {
  return (
    job.requires.every((c) => agent.capabilities.includes(c)) &&
    job.locations.every((key) => agent.allow.some((prefix) => within(key, prefix))) &&
    job.endpoints.every((e) => agent.endpoints.includes(e)) &&
    !job.refusals.some((r) => r.agent_id === agent.id)
  );
}

/** The first queued jobs in offer order that the agent may take and no held job excludes. */
async function search(engine: Engine, agent: AgentAbilities, queued: SQL | undefined): Promise<Candidate[]> {
  const { db } = engine;
  // Ordered ids first (the cheap part, on the dispatch index), then the JSON checks on that order
  // until enough pass.
  const ordered = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(queued)
    .orderBy(asc(jobs.priority), asc(jobs.createdAt), asc(jobs.id));
  const rows = await db.all<{ [K in keyof Candidate]: string | number | null }>(
    sql`with q as materialized ${ordered}
      select j.id, j.fence, j.table_id as tableId, j.requires, j.locations, j.endpoints, j.refusals,
             j.exclusion, j.locks
      from q cross join ${jobs} j on j.id = q.id
      where (j.requires = '[]' or not exists (select 1 from json_each(j.requires) r
              where r.value not in (select value from json_each(${JSON.stringify(agent.capabilities)}))))
        and (j.locations = '[]' or not exists (select 1 from json_each(j.locations) l
              where not exists (select 1 from json_each(${JSON.stringify(agent.allow)}) a
                where substr(l.value, 1, length(a.value)) = a.value)))
        and (j.endpoints = '[]' or not exists (select 1 from json_each(j.endpoints) e
              where e.value not in (select value from json_each(${JSON.stringify(agent.endpoints)}))))
        and (j.refusals = '[]' or not exists (select 1 from json_each(j.refusals) f
              where json_extract(f.value, '$.agent_id') = ${agent.id}))
        and (j.exclusion is null or not ${conflicting(
          { id: sql`j.id`, exclusion: sql`j.exclusion`, tableId: sql`j.table_id`, locks: sql`j.locks` },
          HELD_STATUSES,
        )})
      limit ${CANDIDATES}`,
  );
  const list = (v: unknown) => JSON.parse(String(v));
  return rows.map((r) => ({
    id: String(r.id),
    fence: Number(r.fence),
    tableId: r.tableId === null ? null : String(r.tableId),
    requires: list(r.requires),
    locations: list(r.locations),
    endpoints: list(r.endpoints),
    refusals: list(r.refusals),
    exclusion: r.exclusion === null ? null : String(r.exclusion),
    locks: list(r.locks),
  }));
}

/**
 * Offers the first candidate still queued at the fence it was read at whose exclusivity allows it
 * now: part of the UPDATE, so two agents offered overlapping jobs at once can't both get one.
 */
async function claimFirst(
  engine: Engine,
  agent: AgentAbilities,
  candidates: readonly Candidate[],
  now: Date,
): Promise<Job | undefined> {
  for (const candidate of candidates) {
    const free =
      candidate.exclusion === null
        ? undefined
        : sql`not ${conflicting(
            {
              id: candidate.id,
              exclusion: candidate.exclusion,
              tableId: candidate.tableId,
              locks: JSON.stringify(candidate.locks),
            },
            HELD_STATUSES,
          )}`;
    const [offered] = await engine.db
      .update(jobs)
      .set({
        status: "offered",
        fence: sql`${jobs.fence} + 1`,
        leaseOwner: agent.id,
        leaseExpiresAt: new Date(now.getTime() + engine.timings.offerTimeoutMs),
        updatedAt: now,
      })
      .where(
        and(
          eq(jobs.id, candidate.id),
          inArray(jobs.status, from("offer")),
          eq(jobs.fence, candidate.fence),
          free,
        ),
      )
      .returning();
    if (offered) return offered;
  }
  return undefined;
}

/** The agent accepted the offer: the job is leased and starts (an attempt is counted). */
export async function ack(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
): Promise<Completion> {
  const now = engine.clock.now();
  const [job] = await engine.db
    .update(jobs)
    .set({
      status: "running",
      attempt: sql`${jobs.attempt} + 1`,
      leaseExpiresAt: new Date(now.getTime() + engine.timings.leaseMs),
      // A new attempt starts with no progress (rows from before progress was cleared on requeue).
      progress: null,
      startedAt: sql`coalesce(${jobs.startedAt}, ${now.getTime()})`,
      updatedAt: now,
    })
    .where(owned(jobId, agentId, fence, from("ack")))
    .returning();
  return outcomeOf(engine, job, { jobId, agentId, fence });
}

/** The agent declined the offer (full, draining): back to the queue at once, no attempt counted. */
export async function reject(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
): Promise<Completion> {
  const [job] = await engine.db
    .update(jobs)
    .set({
      status: "queued",
      leaseOwner: null,
      leaseExpiresAt: null,
      progress: null,
      updatedAt: engine.clock.now(),
    })
    .where(owned(jobId, agentId, fence, from("reject")))
    .returning();
  if (job) engine.notifyWork();
  return outcomeOf(engine, job, { jobId, agentId, fence });
}

/**
 * The agent may not take the offered job (its allow list): the job goes back for another agent,
 * with the refusal recorded and an attempt counted; the last attempt's refusal fails it.
 */
export async function refuse(
  engine: Engine,
  agentId: string,
  jobId: string,
  fence: number,
  reason: string,
): Promise<Completion> {
  const now = engine.clock.now();
  const refusal = JSON.stringify({ agent_id: agentId, reason, at: now.toISOString() });
  const spent = sql`${jobs.attempt} + 1 >= ${jobs.maxAttempts}`;
  const [job] = await engine.db
    .update(jobs)
    .set({
      status: sql`case when ${spent} then 'failed' else 'queued' end` as unknown as Job["status"],
      attempt: sql`${jobs.attempt} + 1`,
      refusals: sql`json_insert(${jobs.refusals}, '$[#]', json(${refusal}))`,
      error: sql`case when ${spent} then ${`refused by agent ${agentId}: ${reason}`} || ' (every attempt was refused)' else ${`refused by agent ${agentId}: ${reason}`} end`,
      leaseOwner: sql`case when ${spent} then ${jobs.leaseOwner} else null end`,
      leaseExpiresAt: null,
      progress: null,
      finishedAt: sql`case when ${spent} then ${now.getTime()} else null end`,
      updatedAt: now,
    })
    .where(owned(jobId, agentId, fence, from("refuse")))
    .returning();
  if (job?.status === "failed") await runFinishHooks(engine, [job]);
  if (job) engine.notifyWork();
  return outcomeOf(engine, job, { jobId, agentId, fence });
}

/**
 * Forgets this agent's earlier refusals of queued jobs: it connected with a different allow list or
 * endpoints, so what it refused before may be allowed now.
 */
export async function forgetRefusals(engine: Engine, agentId: string): Promise<void> {
  await engine.db
    .update(jobs)
    .set({
      refusals: sql`(select json_group_array(json(f.value)) from json_each(${jobs.refusals}) f
        where json_extract(f.value, '$.agent_id') != ${agentId})`,
    })
    .where(
      and(
        eq(jobs.status, "queued"),
        sql`${jobs.refusals} != '[]'`,
        sql`exists (select 1 from json_each(${jobs.refusals}) f where json_extract(f.value, '$.agent_id') = ${agentId})`,
      ),
    );
}

/** Whether a queued job carries this agent's refusal (the partial index on refused jobs answers it). */
export async function hasRefusalsBy(engine: Engine, agentId: string): Promise<boolean> {
  const [row] = await engine.db
    .select({ id: jobs.id })
    .from(jobs)
    .where(
      and(
        eq(jobs.status, "queued"),
        sql`${jobs.refusals} != '[]'`,
        sql`exists (select 1 from json_each(${jobs.refusals}) f where json_extract(f.value, '$.agent_id') = ${agentId})`,
      ),
    )
    .limit(1);
  return row !== undefined;
}
