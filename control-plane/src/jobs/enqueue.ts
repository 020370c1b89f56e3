/**
 * Enqueue: a new job of a declared kind, as one INSERT the caller may batch with its own writes.
 *
 * - The kind's declaration is read once here: the payload must parse, its locations and endpoints
 *   become the keys an agent must be allowed (`locations`, `endpoints`), their schemes and the
 *   kind's capabilities become `requires`, its exclusivity group and scopes become `exclusion` and
 *   `locks`, and its retry policy the attempt budget.
 * - `enqueueExclusive` refuses a job that would overlap an active one of its group (manual triggers
 *   answer 409). Two triggers that race both pass the first check; the insert is therefore batched
 *   with a statement that withdraws the new job again when a conflicting active job exists. A batch
 *   is one transaction and SQLite runs write transactions one after the other, so the second batch
 *   always sees the first one's job, and exactly one stays. Jobs that may wait (a schedule's run) are
 *   queued with `enqueue`: the offer holds them back while a conflicting job holds an agent.
 * - What a caller records with a new job (a connection's sync status) goes into the same batch
 *   (`alongside`), guarded by `jobExists`, so it holds exactly when the job stays, and before any
 *   agent can end the job.
 */

import { newId } from "@lakesmith/shared";
import { endpointKey, locationKey, parseLocation } from "@lakesmith/shared/locations";
import { and, eq, sql } from "drizzle-orm";
import { insertSelect } from "../db/insert-select.ts";
import { type Job, type JobStatus, jobs, type Priority } from "../db/schema.ts";
import { issueSummary } from "../http/problem.ts";
import type { Engine } from "./engine.ts";
import { conflicting, locksOverlap } from "./exclusion.ts";
import type { BatchItem } from "./kinds.ts";
import { ACTIVE_STATUSES } from "./state.ts";

export interface NewJob {
  kind: string;
  payload: Record<string, unknown>;
  tableId?: string | null;
  priority?: Priority;
  /** Overrides the kind's attempt budget (diagnostic jobs let the caller choose). */
  maxAttempts?: number;
  /** At most one job is ever created per key (schedule slots). */
  dedupeKey?: string | null;
  trigger?: string;
  scheduleId?: string | null;
  createdBy?: string | null;
  /** Not offered before this (default now): a job asked for later, or held for a step of the control plane. */
  notBefore?: Date;
  /** A held job says here what it waits for (the agent's progress replaces it once it runs). */
  progress?: Record<string, unknown> | null;
}

/** How a trigger queues its job, for services that build the job themselves: why, and from when. */
export type Queueing = Pick<NewJob, "trigger" | "notBefore" | "progress">;

/** The routing and overlap columns of a new job, as its kind's declaration derives them. */
export interface Routing {
  requires: string[];
  locations: string[];
  endpoints: string[];
  exclusion: string | null;
  locks: string[];
  maxAttempts: number;
}

export interface ActiveJob {
  id: string;
  status: JobStatus;
  kind: string;
}

/** Reads the declaration of `input.kind` for the job's payload; throws on a payload it refuses. */
export function routingOf(engine: Engine, input: NewJob): Routing {
  const declared = engine.kinds.of(input.kind);
  const parsed = declared.payload.safeParse(input.payload);
  if (!parsed.success)
    throw new Error(
      `payload of a '${input.kind}' job does not match its declaration: ${issueSummary(parsed.error, "(payload)")}`,
    );
  const needs = declared.needs(parsed.data);
  const schemes = needs.locations.map((uri) => parseLocation(uri).scheme);
  const locks = declared.exclusive?.scopes(parsed.data, { tableId: input.tableId ?? null }) ?? [];
  return {
    requires: [...new Set([...schemes, ...(needs.capabilities ?? [])])],
    locations: [...new Set(needs.locations.map(locationKey))],
    endpoints: [...new Set((needs.endpoints ?? []).map(endpointKey))],
    exclusion: locks.length > 0 ? (declared.exclusive?.group ?? null) : null,
    locks,
    maxAttempts: input.maxAttempts ?? declared.retry.maxAttempts,
  };
}

/**
 * The insert of a new job, for callers that batch it with their own writes. `routing` is what
 * `routingOf` derives, for a caller that has it already.
 */
export function insertStatement(
  engine: Engine,
  input: NewJob,
  id = newId("job"),
  routing = routingOf(engine, input),
) {
  const now = engine.clock.now();
  return engine.db
    .insert(jobs)
    .values({
      id,
      kind: input.kind,
      tableId: input.tableId ?? null,
      priority: input.priority ?? "P2",
      payload: input.payload,
      ...routing,
      dedupeKey: input.dedupeKey ?? null,
      trigger: input.trigger ?? "manual",
      scheduleId: input.scheduleId ?? null,
      createdBy: input.createdBy ?? null,
      notBefore: input.notBefore ?? now,
      progress: input.progress ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing({ target: jobs.dedupeKey })
    .returning();
}

/**
 * One insert of many new jobs (each skipped when its dedupe key exists), for callers that queue
 * hundreds at once (the policy engine's tick): the rows travel as one JSON value, so the statement
 * is prepared once and binds one parameter however many jobs it holds (D1 allows 100).
 */
export function insertManyStatement(engine: Engine, inputs: readonly NewJob[]) {
  const now = engine.clock.now().getTime();
  const rows = inputs.map((input) => {
    const routing = routingOf(engine, input);
    return {
      id: newId("job"),
      kind: input.kind,
      table_id: input.tableId ?? null,
      priority: input.priority ?? "P2",
      payload: input.payload,
      requires: routing.requires,
      locations: routing.locations,
      endpoints: routing.endpoints,
      exclusion: routing.exclusion,
      locks: routing.locks,
      max_attempts: routing.maxAttempts,
      dedupe_key: input.dedupeKey ?? null,
      trigger: input.trigger ?? "manual",
      schedule_id: input.scheduleId ?? null,
      created_by: input.createdBy ?? null,
      not_before: (input.notBefore ?? new Date(now)).getTime(),
      progress: input.progress ?? null,
    };
  });
  const f = (key: string) => sql`json_extract(j.value, ${`$.${key}`})`;
  const json = (key: string) => sql`json(json_extract(j.value, ${`$.${key}`}))`;
  return insertSelect(
    engine.db,
    jobs,
    {
      id: f("id"),
      kind: f("kind"),
      tableId: f("table_id"),
      priority: f("priority"),
      payload: json("payload"),
      requires: json("requires"),
      locations: json("locations"),
      endpoints: json("endpoints"),
      exclusion: f("exclusion"),
      locks: json("locks"),
      refusals: sql`'[]'`,
      status: sql`'queued'`,
      attempt: sql`0`,
      maxAttempts: f("max_attempts"),
      fence: sql`0`,
      leaseOwner: sql`null`,
      leaseExpiresAt: sql`null`,
      notBefore: f("not_before"),
      dedupeKey: f("dedupe_key"),
      trigger: f("trigger"),
      scheduleId: f("schedule_id"),
      progress: sql`case when json_type(j.value, '$.progress') = 'object' then json(json_extract(j.value, '$.progress')) end`,
      partFence: sql`null`,
      partSeq: sql`null`,
      result: sql`null`,
      error: sql`null`,
      createdBy: f("created_by"),
      createdAt: sql`${now}`,
      updatedAt: sql`${now}`,
      startedAt: sql`null`,
      finishedAt: sql`null`,
    },
    sql`from json_each(${JSON.stringify(rows)}) j where true`,
  ).onConflictDoNothing({ target: jobs.dedupeKey });
}

/** Queues a job. With a `dedupeKey` that already exists, returns the existing job instead. */
export async function enqueue(engine: Engine, input: NewJob): Promise<{ job: Job; created: boolean }> {
  const [job] = await withoutSecrets(engine, input, () => insertStatement(engine, input));
  if (job) {
    engine.notifyWork();
    return { job, created: true };
  }
  const [existing] = await engine.db
    .select()
    .from(jobs)
    .where(eq(jobs.dedupeKey, input.dedupeKey ?? ""));
  if (!existing) throw new Error("job insert returned no row");
  return { job: existing, created: false };
}

/** An active job of the group that overlaps `routing`, other than `id`, if any. */
async function firstConflict(engine: Engine, id: string, routing: Routing, tableId: string | null) {
  const [active] = await engine.db
    .select({ id: jobs.id, status: jobs.status, kind: jobs.kind })
    .from(jobs)
    .where(
      and(
        eq(jobs.exclusion, routing.exclusion ?? ""),
        sql`${jobs.status} in ${ACTIVE_STATUSES}`,
        tableId === null ? sql`${jobs.tableId} is null` : eq(jobs.tableId, tableId),
        sql`${jobs.id} != ${id}`,
        locksOverlap(sql`${jobs.locks}`, JSON.stringify(routing.locks)),
      ),
    )
    .limit(1);
  return active;
}

/**
 * Runs the insert of a job whose kind declares secret payload fields (`JobKind.secrets`: a catalog's
 * credentials): a failure is rethrown without the query's parameters, which drizzle's errors quote
 * and the 500 handler logs.
 */
async function withoutSecrets<T>(engine: Engine, input: NewJob, work: () => Promise<T>): Promise<T> {
  if (!engine.kinds.of(input.kind).secrets?.length) return work();
  try {
    return await work();
  } catch (err) {
    if (err instanceof Error && "params" in err) {
      const cause = err.cause instanceof Error ? err.cause.message : "a database error";
      throw new Error(`a '${input.kind}' job could not be queued: ${cause}`);
    }
    throw err;
  }
}

/** Holds while the job `id` exists: the guard of statements batched with its insert. */
export const jobExists = (id: string) => sql`exists (select 1 from ${jobs} where ${jobs.id} = ${id})`;

/**
 * Queues the job unless an active job of its exclusivity group overlaps it. Returns the job, or the
 * active job that won (undefined when the winner ended again before it could be named).
 * `alongside(id)` returns statements for the same batch, after the insert; each must be guarded by
 * `jobExists(id)` (the insert may be withdrawn, or skipped for a `dedupeKey` that exists already).
 * `before` are statements for the same batch, before the insert (they stand even if the job is
 * withdrawn): a row the job belongs to, created with its first job or not at all.
 */
export async function enqueueExclusive(
  engine: Engine,
  input: NewJob,
  alongside?: (jobId: string) => BatchItem[],
  before: BatchItem[] = [],
): Promise<{ job: Job } | { active: ActiveJob | undefined }> {
  const routing = routingOf(engine, input);
  const tableId = input.tableId ?? null;
  if (routing.exclusion === null && !alongside && before.length === 0)
    return { job: (await enqueue(engine, input)).job };
  const exclusion = routing.exclusion;
  if (exclusion !== null) {
    const before = await firstConflict(engine, "", routing, tableId);
    if (before) return { active: before };
  }
  const id = newId("job");
  const withdraw = engine.db
    .delete(jobs)
    .where(
      and(
        eq(jobs.id, id),
        exclusion === null
          ? sql`0`
          : conflicting({ id, exclusion, tableId, locks: JSON.stringify(routing.locks) }, ACTIVE_STATUSES),
      ),
    )
    .returning({ id: jobs.id });
  const statements: [BatchItem, ...BatchItem[]] = [
    insertStatement(engine, input, id, routing),
    withdraw,
    ...(alongside?.(id) ?? []),
  ];
  const results = await withoutSecrets(engine, input, () =>
    engine.db.batch([...before, ...statements] as [BatchItem, ...BatchItem[]]),
  );
  const [[created], withdrawn] = results.slice(before.length) as [Job[], { id: string }[]];
  if (withdrawn.length > 0 || !created) return { active: await firstConflict(engine, id, routing, tableId) };
  engine.notifyWork();
  return { job: created };
}

/**
 * A new job on `table`: the table's id, and its priority unless the job names one.
 *
 * @example jobs.enqueue(jobOnTable(table, { kind: "vacuum", payload, trigger: "manual" }))
 */
export function jobOnTable(
  table: { id: string; priority: Priority },
  job: Omit<NewJob, "tableId">,
): NewJob & { tableId: string } {
  return { ...job, priority: job.priority ?? table.priority, tableId: table.id };
}
