/**
 * The agent protocol, version 1: the messages the control plane and its agents exchange over one
 * WebSocket (`GET /api/v1/agents/connect`, `Authorization: Bearer <agent token>`). Both sides parse
 * every frame with these schemas and close the socket with `CLOSE.PROTOCOL` on anything else.
 *
 * The database is the truth; the socket only carries offers, acknowledgements, progress and
 * results. Every message about a job names its `fence`; a message with an old fence is answered
 * with `refused` and the agent stops that work.
 *
 * A session:
 *   agent → hello (version, kinds, capabilities, what it may use, capacity, the leases it still holds)
 *   plane → welcome (agent id, timings, which of those leases are still valid)
 *   plane → offer  · agent → ack (or reject; `refused` when its allow list forbids the job)
 *   plane → leased (the job may start)
 *   agent → progress … (each extends the lease)  · agent → result
 *   agent → part · plane → part_ack (a bounded piece of a large result, in order; see `PartSchema`)
 *   agent → drain (no more offers)  · agent → release (hand a job back unfinished)
 *   plane → cancel (stop this job; answer with a `cancelled` result)
 */
import { z } from "zod";

export const PROTOCOL_VERSION = 1;

/** WebSocket close codes (4000-4999 are the application's). */
export const CLOSE = {
  /** A frame that is not valid JSON or not a message of this protocol. */
  PROTOCOL: 4000,
  /** The agent speaks a protocol version the control plane does not. */
  VERSION: 4001,
  /** The agent's token was revoked while it was connected. */
  REVOKED: 4003,
  /** The same agent connected again; the older socket is closed. */
  REPLACED: 4009,
  /** The control plane is shutting down; reconnect. */
  GOING_AWAY: 1001,
} as const;

const jobId = z.string().min(1).max(64);
const fence = z.number().int().min(1);
const jsonObject = z.record(z.string(), z.unknown());
/** Job kinds and capabilities: lower-case words such as `crunch`, `partition_expiration`, `s3`. */
export const NameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,63}$/, "a lower-case name of letters, digits, '_', '.' or '-'");

export const LeaseRefSchema = z.object({ job_id: jobId, fence });
export type LeaseRef = z.infer<typeof LeaseRefSchema>;

// ---- agent → control plane ----

export const HelloSchema = z.object({
  type: z.literal("hello"),
  protocol: z.number().int(),
  agent_version: z.string().max(64),
  /** Job kinds this agent has handlers for. */
  kinds: z.array(NameSchema).max(100),
  /** Other capabilities jobs may require (object-store schemes and the like). */
  capabilities: z.array(NameSchema).max(100),
  /**
   * The storage prefixes its allow list permits (`scheme://bucket/path`, `file:///path`): it is
   * offered only jobs whose every location lies within one of them. Absent: none.
   */
  allow: z.array(z.string().min(1).max(2048)).max(1000).default([]),
  /** The catalog and metastore endpoints (`https://host[:port]`, `thrift://host:port`) it may reach. */
  endpoints: z.array(z.string().min(1).max(2048)).max(100).default([]),
  /** How many jobs it runs at once. */
  capacity: z.number().int().min(0).max(1000),
  /** Jobs it is still working on from before a reconnect. */
  leases: z.array(LeaseRefSchema).max(1000),
  draining: z.boolean().default(false),
});

export const AckSchema = z.object({ type: z.literal("ack"), ...LeaseRefSchema.shape });
export const RejectSchema = z.object({
  type: z.literal("reject"),
  ...LeaseRefSchema.shape,
  reason: z.string().max(1000),
  /**
   * True: this agent may never take the job (its allow list forbids a location the job names); the
   * plane hands it to another agent, counting an attempt. False or absent: it is merely busy.
   */
  refused: z.boolean().optional(),
});

export const ProgressSchema = z.object({
  type: z.literal("progress"),
  ...LeaseRefSchema.shape,
  /** Free-form progress the job reports (fraction done, bytes, phase). */
  progress: jsonObject.optional(),
});

export const OUTCOMES = ["succeeded", "failed", "cancelled"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const ResultSchema = z.object({
  type: z.literal("result"),
  ...LeaseRefSchema.shape,
  outcome: z.enum(OUTCOMES),
  result: jsonObject.optional(),
  error: z.string().max(10_000).optional(),
  /** For `failed`: whether another attempt may succeed (default true); false fails the job at once. */
  retryable: z.boolean().optional(),
});

/**
 * A piece of a job's output too large for one result (a catalog sync's tables), sent while the job
 * runs. Parts of one lease are numbered from 1 (`seq`) and sent one at a time: the agent sends the
 * next only once `part_ack` answered the last (the plane's answer may steer the job, such as which
 * listed tables to read). The plane applies each part once, in order, in one batch with the check
 * that the lease is still the agent's; a part sent again (no ack came) is answered again and not
 * applied twice; a gap or an old fence is `refused`. Each part also extends the lease. The job
 * kind decides what a part holds (`docs/job-kinds.md`); a part's frame stays under 1 MiB.
 */
export const PartSchema = z.object({
  type: z.literal("part"),
  ...LeaseRefSchema.shape,
  seq: z.number().int().min(1),
  part: jsonObject,
});
export type Part = z.infer<typeof PartSchema>;

export const ReleaseSchema = z.object({
  type: z.literal("release"),
  ...LeaseRefSchema.shape,
  reason: z.string().max(1000),
});

export const DrainSchema = z.object({ type: z.literal("drain") });

/** Extends every lease the agent names; sent on an interval while jobs run. */
export const HeartbeatSchema = z.object({
  type: z.literal("heartbeat"),
  leases: z.array(LeaseRefSchema).max(1000),
});

export const AgentMessageSchema = z.discriminatedUnion("type", [
  HelloSchema,
  AckSchema,
  RejectSchema,
  ProgressSchema,
  PartSchema,
  ResultSchema,
  ReleaseSchema,
  DrainSchema,
  HeartbeatSchema,
]);
export type AgentMessage = z.infer<typeof AgentMessageSchema>;
export type Hello = z.infer<typeof HelloSchema>;

// ---- control plane → agent ----

export const LEASE_STATES = ["valid", "lost", "cancelling"] as const;

export const WelcomeSchema = z.object({
  type: z.literal("welcome"),
  protocol: z.number().int(),
  agent_id: z.string(),
  /** How long a lease lasts without progress or heartbeat. */
  lease_ms: z.number().int().positive(),
  /** How often the agent should heartbeat its leases. */
  heartbeat_ms: z.number().int().positive(),
  /** How long an offer waits for `ack` before it goes back to the queue. */
  offer_timeout_ms: z.number().int().positive(),
  /** The verdict on each lease the agent named in `hello`. */
  leases: z.array(z.object({ ...LeaseRefSchema.shape, state: z.enum(LEASE_STATES) })),
});

export const JobOfferSchema = z.object({
  id: jobId,
  kind: NameSchema,
  fence,
  attempt: z.number().int().min(0),
  priority: z.enum(["P1", "P2"]),
  table_id: z.string().nullable(),
  payload: jsonObject,
});
export type JobOffer = z.infer<typeof JobOfferSchema>;

export const OfferSchema = z.object({ type: z.literal("offer"), job: JobOfferSchema });
/** The ack was accepted: the job is leased to the agent and may start. */
export const LeasedSchema = z.object({
  type: z.literal("leased"),
  ...LeaseRefSchema.shape,
  lease_expires_at: z.string(),
});
/** The message about this job was refused (old fence, not the owner, job over): stop that work. */
export const RefusedSchema = z.object({
  type: z.literal("refused"),
  ...LeaseRefSchema.shape,
  reason: z.string(),
});
/** Stop the job without committing; answer with a `cancelled` result. */
export const CancelSchema = z.object({
  type: z.literal("cancel"),
  ...LeaseRefSchema.shape,
  reason: z.string(),
});

/** Part `seq` is applied (now or before); `reply` is the kind's answer to it, if it has one. */
export const PartAckSchema = z.object({
  type: z.literal("part_ack"),
  ...LeaseRefSchema.shape,
  seq: z.number().int().min(1),
  reply: jsonObject.optional(),
});

export const PlaneMessageSchema = z.discriminatedUnion("type", [
  WelcomeSchema,
  OfferSchema,
  LeasedSchema,
  RefusedSchema,
  CancelSchema,
  PartAckSchema,
]);
export type PlaneMessage = z.infer<typeof PlaneMessageSchema>;

/**
 * Parses one frame. Returns the message, or a one-line reason fit for a close frame (close reasons
 * are limited to 123 bytes).
 */
export function parseFrame<S extends z.ZodType>(
  schema: S,
  data: string,
): { ok: true; message: z.infer<S> } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ok: false, reason: "frame is not JSON" };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "message";
  return { ok: false, reason: `invalid ${where}: ${issue?.message ?? "unknown"}`.slice(0, 120) };
}
