/** The API's view of a job, shared by every route that returns jobs. */
import { z } from "@hono/zod-openapi";
import { describeKey } from "@lakesmith/shared/locations";
import { type Abilities, endpointsOutside, locationsOutside } from "../agents/routing.ts";
import { JOB_STATUSES, type Job } from "../db/schema.ts";
import type { JobKindRegistry } from "./kinds.ts";
import { shownPayload } from "./secrets.ts";
import { TERMINAL_STATUSES } from "./state.ts";

export const JobSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    status: z.enum(JOB_STATUSES).openapi({
      description:
        "queued → offered (to one agent, awaiting its ack) → running (leased) → succeeded, failed or cancelled. " +
        "A running job asked to stop is `cancelling` until its agent confirms or its lease lapses.",
    }),
    priority: z.enum(["P1", "P2"]),
    table_id: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()).openapi({
      description:
        "What the job was asked, without the fields its kind declares secret (a catalog job's credentials), which are never shown and are removed from the job once it ends.",
    }),
    requires: z.array(z.string()).openapi({ description: "Capabilities the agent must have announced." }),
    locations: z.array(z.string()).openapi({
      description:
        "Storage locations the job touches, canonical: it is offered only to an agent whose allow list covers every one.",
    }),
    endpoints: z.array(z.string()).openapi({
      description:
        "Catalog and metastore endpoints (`scheme://host:port`) the agent must be allowed to reach.",
    }),
    refusals: z.array(z.object({ agent_id: z.string(), reason: z.string(), at: z.string() })).openapi({
      description:
        "Agents that refused the job (their allow list forbids it); it is not offered to them again unless they reconnect with a different allow list.",
    }),
    attempt: z
      .number()
      .int()
      .openapi({ description: "Leases granted so far (an unacknowledged offer does not count)." }),
    max_attempts: z.number().int(),
    agent_id: z
      .string()
      .nullable()
      .openapi({ description: "The agent the job is offered or leased to, or that ran it last." }),
    lease_expires_at: z.string().nullable(),
    not_before: z
      .string()
      .openapi({ description: "A queued job is not offered before this (retry backoff)." }),
    trigger: z.string(),
    schedule_id: z.string().nullable(),
    progress: z.record(z.string(), z.unknown()).nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    error: z.string().nullable(),
    waiting_for: z.string().nullable().openapi({
      description:
        "Why a queued job is not being offered: no connected agent handles its kind, none is allowed to use its locations or endpoints (`an agent allowed to use ...`), or a free agent slot; null otherwise.",
    }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("Job");

export type JobView = z.infer<typeof JobSchema>;

/** A time (a Date or epoch milliseconds) as ISO 8601 text, null stays null: the wire form of every timestamp. */
export const iso = (d: Date | number | null): string | null =>
  d === null ? null : new Date(d).toISOString();

/**
 * What every per-table job view (crunch, vacuum, partition expiration) shows of the job row itself;
 * each view adds what its payload asked and its result says.
 */
export function tableJobFields(job: Job) {
  return {
    id: job.id,
    table_id: job.tableId,
    status: job.status,
    trigger: job.trigger,
    schedule_id: job.scheduleId,
    priority: job.priority,
    attempt: job.attempt,
    agent_id: job.leaseOwner,
    error: job.error,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
  };
}

export type { Abilities };

/**
 * Why a queued job waits, in the order an offer checks: backoff, an agent with the kind, one that
 * may use every location and endpoint and has not refused it, then a free slot (or, for a kind with
 * an overlap rule, the end of the job it may not run beside).
 */
export function waitingFor(job: Job, abilities: Abilities, now: Date): string | null {
  if (job.status !== "queued") return null;
  if (job.notBefore > now) return `retry backoff until ${job.notBefore.toISOString()}`;
  const kindOk = abilities.filter((a) => a.kinds.includes(job.kind));
  if (kindOk.length === 0) return `no connected agent handles kind '${job.kind}'`;
  // Locations first: a scheme the job requires comes from its locations, and the allow list is what
  // an operator changes.
  const allowed = kindOk.filter(
    (a) =>
      locationsOutside(job.locations, a.allow).length === 0 &&
      endpointsOutside(job.endpoints, a.endpoints).length === 0,
  );
  if (allowed.length === 0) {
    const needs = [...job.locations.map(describeKey), ...job.endpoints];
    const theirs = kindOk.map((a) => `${a.name}: ${a.allow.map(describeKey).join(", ") || "nothing"}`);
    return `an agent allowed to use ${needs.join(" and ")} (connected agents for '${job.kind}' allow ${theirs.join("; ")})`;
  }
  const missing = job.requires.filter((r) => !allowed.some((a) => a.capabilities.includes(r)));
  if (missing.length > 0)
    return `no connected agent for '${job.kind}' has capability ${missing.map((m) => `'${m}'`).join(", ")}`;
  const refused = new Set(job.refusals.map((r) => r.agent_id));
  if (allowed.every((a) => refused.has(a.id)))
    return `an agent that has not refused it (refused by ${job.refusals.map((r) => `${r.agent_id}: ${r.reason}`).join("; ")})`;
  if (job.exclusion !== null)
    return `a free agent slot, and no overlapping '${job.exclusion}' job holding an agent`;
  return "a free agent slot";
}

/** The job as the API shows it; `kinds` says which payload fields are secret and left out. */
export function jobView(job: Job, abilities: Abilities, now: Date, kinds: JobKindRegistry): JobView {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    priority: job.priority,
    table_id: job.tableId,
    payload: shownPayload(kinds.get(job.kind), job.payload),
    requires: job.requires,
    locations: job.locations.map(describeKey),
    endpoints: job.endpoints,
    refusals: job.refusals,
    attempt: job.attempt,
    max_attempts: job.maxAttempts,
    agent_id: job.leaseOwner,
    lease_expires_at: iso(job.leaseExpiresAt),
    not_before: job.notBefore.toISOString(),
    trigger: job.trigger,
    schedule_id: job.scheduleId,
    progress: job.progress,
    result: job.result,
    error: job.error,
    waiting_for: waitingFor(job, abilities, now),
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
  };
}

/**
 * Why a job's view has no result summary: still running (`pending` says what comes with the result),
 * ended without one, or an odd result (`problem`: why it did not parse as a `kind` result).
 */
export function resultNote(
  job: Job,
  problem: { issues: { path: PropertyKey[]; message: string }[] } | undefined,
  kind: string,
  pending = "the summary comes",
): string {
  if (job.result && problem) {
    const issues = problem.issues.map((i) => `${i.path.map(String).join(".") || "(result)"}: ${i.message}`);
    return `the agent's result is not a ${kind} result (${issues.join("; ")})`;
  }
  if (!TERMINAL_STATUSES.includes(job.status)) return `the job is ${job.status}; ${pending} with its result`;
  return `the job ended ${job.status} without a result${job.error ? `: ${job.error}` : ""}`;
}
