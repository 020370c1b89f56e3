/**
 * The agent hub: holds the sockets of connected agents, speaks the agent protocol on them and
 * offers queued jobs. It decides nothing itself: every move of a job is made by `JobService`
 * against the database, and the hub only carries the outcome (architecture.md, "Jobs and leases").
 *
 * `LocalHub` knows nothing about its runtime. On Node it holds the sockets of `@hono/node-server`;
 * on Workers the `AgentHub` Durable Object holds hibernatable sockets and rebuilds the hub's
 * sessions from their attachments when it wakes.
 */
import type { Clock } from "@lakesmith/shared";
import {
  type AgentMessage,
  AgentMessageSchema,
  CLOSE,
  type Hello,
  type JobOffer,
  type PlaneMessage,
  PROTOCOL_VERSION,
  parseFrame,
} from "@lakesmith/shared/protocol";
import type { Job } from "../db/schema.ts";
import type { JobService } from "../jobs/service.ts";
import { routingKeys } from "./routing.ts";
import type { AgentService } from "./service.ts";

/** What the rest of the control plane asks of the hub, wherever it runs. */
export interface Hub {
  /** New work may be offerable: run a dispatch round soon. */
  poke(): void;
  /** Tell the agent holding a job to stop it. */
  cancel(agentId: string, jobId: string, fence: number, reason: string): void;
  /** Close an agent's connection (its token was revoked). */
  drop(agentId: string, reason: string): void;
}

/** A socket as the hub needs it. */
export interface AgentSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** What a session remembers; small and plain so a hibernating socket can carry it. */
export interface SessionState {
  agentId: string;
  /** When this connection was accepted (epoch ms); tells it apart from a later one. */
  connectedAt: number;
  /**
   * The agent refused a job that may still be queued: its "nothing to offer" verdict is its own,
   * not one to share with agents that announced the same (they may take what it refused).
   */
  refused?: boolean;
  hello?: Pick<Hello, "kinds" | "capabilities" | "capacity" | "draining"> & {
    /** Location keys of its allow list and endpoint keys, as offers compare them. */
    allow: string[];
    endpoints: string[];
  };
}

interface Session {
  state: SessionState;
  socket: AgentSocket;
  /** Messages of one socket are handled strictly in order. */
  queue: Promise<void>;
  /** After a reject, the agent gets no offer until this time (it says it is full). */
  quietUntil: number;
}

export interface HubOptions {
  /** Called when the hub wants a round later (after a reject); Node uses a timer, the DO an alarm. */
  later?: (ms: number, run: () => void) => void;
  log?: (level: "info" | "warn", message: string, fields?: Record<string, unknown>) => void;
}

const REJECT_QUIET_MS = 250;

export class LocalHub implements Hub {
  private readonly sessions = new Map<string, Session>();
  private roundRunning = false;
  private roundWanted = false;
  private idle: Promise<void> = Promise.resolve();
  private rotation = 0;
  private stopping = false;

  constructor(
    private readonly jobs: JobService,
    private readonly agents: AgentService,
    private readonly clock: Clock,
    private readonly options: HubOptions = {},
  ) {}

  /** A socket was accepted for an agent whose token checked out. */
  open(state: SessionState, socket: AgentSocket): void {
    const older = this.sessions.get(state.agentId);
    if (older && older.socket !== socket) {
      older.socket.close(CLOSE.REPLACED, "the same agent connected again");
    }
    this.sessions.set(state.agentId, { state, socket, queue: Promise.resolve(), quietUntil: 0 });
  }

  /** Rebuilds a session from a socket that survived hibernation. */
  restore(state: SessionState, socket: AgentSocket): void {
    const current = this.sessions.get(state.agentId);
    if (!current || current.state.connectedAt <= state.connectedAt) {
      this.sessions.set(state.agentId, { state, socket, queue: Promise.resolve(), quietUntil: 0 });
    }
  }

  /** Handles one frame; resolves once it is handled (tests and the DO may wait for it). */
  message(agentId: string, socket: AgentSocket, data: string): Promise<void> {
    if (this.stopping) return Promise.resolve(); // The socket is closing; the agent will say it again.
    const session = this.sessions.get(agentId);
    if (!session || session.socket !== socket) {
      socket.close(CLOSE.REPLACED, "this connection was replaced by a newer one");
      return Promise.resolve();
    }
    session.queue = session.queue
      .then(() => this.handle(session, data))
      .catch((err) => this.fail(session, err));
    return session.queue;
  }

  /** The socket closed. Leases stay: the agent may come back before they lapse. */
  async closed(agentId: string, socket: AgentSocket): Promise<void> {
    const session = this.sessions.get(agentId);
    if (!session || session.socket !== socket) return;
    this.sessions.delete(agentId);
    await session.queue;
    await this.agents.disconnected(agentId, new Date(session.state.connectedAt));
  }

  /** What the session of this agent remembers now (the Durable Object stores it on its socket). */
  sessionState(agentId: string): SessionState | undefined {
    return this.sessions.get(agentId)?.state;
  }

  poke(): void {
    if (this.stopping) return;
    if (this.roundRunning) {
      this.roundWanted = true;
      return;
    }
    this.roundRunning = true;
    this.idle = this.rounds();
  }

  /** Resolves when no dispatch round is running (tests and the DO wait on it). */
  settled(): Promise<void> {
    return this.idle;
  }

  cancel(agentId: string, jobId: string, fence: number, reason: string): void {
    const session = this.sessions.get(agentId);
    if (session) this.send(session, { type: "cancel", job_id: jobId, fence, reason });
  }

  drop(agentId: string, reason: string): void {
    const session = this.sessions.get(agentId);
    if (!session) return;
    this.sessions.delete(agentId);
    session.socket.close(CLOSE.REVOKED, reason);
  }

  /**
   * Closes every socket (the control plane is stopping; agents reconnect to its successor) and
   * resolves once the frames already taken in are handled, so none runs against a closed database.
   */
  async closeAll(reason: string): Promise<void> {
    this.stopping = true;
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const session of sessions) session.socket.close(CLOSE.GOING_AWAY, reason);
    await Promise.all(sessions.map((s) => s.queue));
    await this.idle;
  }

  private async handle(session: Session, data: string): Promise<void> {
    const parsed = parseFrame(AgentMessageSchema, data);
    if (!parsed.ok) return this.violation(session, parsed.reason);
    const message: AgentMessage = parsed.message;
    const agentId = session.state.agentId;
    if (!session.state.hello && message.type !== "hello")
      return this.violation(session, "the first message must be hello");

    switch (message.type) {
      case "hello":
        return this.hello(session, message);
      case "ack": {
        const outcome = await this.jobs.ack(agentId, message.job_id, message.fence);
        if (outcome.kind === "done") {
          const expires = outcome.job.leaseExpiresAt?.toISOString() ?? this.clock.now().toISOString();
          this.send(session, {
            type: "leased",
            job_id: message.job_id,
            fence: message.fence,
            lease_expires_at: expires,
          });
          if (outcome.job.status === "cancelling") this.cancelOf(session, outcome.job);
        } else if (outcome.kind === "refused")
          this.refuse(session, message.job_id, message.fence, outcome.reason);
        return;
      }
      case "reject": {
        if (message.refused) {
          // The agent may never take this job: another agent gets it, this one is never offered it again.
          session.state.refused = true;
          const outcome = await this.jobs.refuse(agentId, message.job_id, message.fence, message.reason);
          if (outcome.kind === "refused") this.refuse(session, message.job_id, message.fence, outcome.reason);
          return;
        }
        // Quiet first: the reject itself pokes a round, which must not offer the job straight back.
        session.quietUntil = this.clock.now().getTime() + REJECT_QUIET_MS;
        const outcome = await this.jobs.reject(agentId, message.job_id, message.fence);
        this.options.later?.(REJECT_QUIET_MS, () => this.poke());
        if (outcome.kind === "refused") this.refuse(session, message.job_id, message.fence, outcome.reason);
        return;
      }
      case "progress":
        return this.extend(session, message.job_id, message.fence, message.progress);
      case "part": {
        const { job_id, fence, seq } = message;
        const outcome = await this.jobs.part(agentId, message);
        if (outcome.kind === "refused") return this.refuse(session, job_id, fence, outcome.reason);
        this.send(session, {
          type: "part_ack",
          job_id,
          fence,
          seq,
          ...(outcome.reply ? { reply: outcome.reply } : {}),
        });
        if (outcome.cancelling)
          this.send(session, { type: "cancel", job_id, fence, reason: "cancel requested" });
        return;
      }
      case "heartbeat":
        for (const lease of message.leases) await this.extend(session, lease.job_id, lease.fence);
        await this.agents.seen([agentId]);
        return;
      case "result": {
        const outcome = await this.jobs.complete(agentId, message.job_id, message.fence, message.outcome, {
          result: message.result,
          error: message.error,
          retryable: message.retryable,
        });
        if (outcome.kind === "refused") this.refuse(session, message.job_id, message.fence, outcome.reason);
        this.poke();
        return;
      }
      case "release": {
        const outcome = await this.jobs.release(agentId, message.job_id, message.fence, message.reason);
        if (outcome.kind === "refused") this.refuse(session, message.job_id, message.fence, outcome.reason);
        return;
      }
      case "drain":
        if (session.state.hello) session.state.hello = { ...session.state.hello, draining: true };
        await this.agents.draining(agentId);
        return;
    }
  }

  private async hello(session: Session, hello: Hello): Promise<void> {
    if (session.state.hello) return this.violation(session, "hello was already sent on this connection");
    if (hello.protocol !== PROTOCOL_VERSION) {
      session.socket.close(
        CLOSE.VERSION,
        `protocol ${hello.protocol} is not supported; this control plane speaks ${PROTOCOL_VERSION}`,
      );
      this.sessions.delete(session.state.agentId);
      return;
    }
    const { kinds, capabilities, capacity, draining } = hello;
    const routing = routingKeys(hello);
    session.state.hello = { kinds, capabilities, capacity, draining, ...routing };
    const changed = await this.agents.connected(
      session.state.agentId,
      hello,
      new Date(session.state.connectedAt),
    );
    if (changed) await this.jobs.forgetRefusals(session.state.agentId);
    session.state.refused = await this.jobs.hasRefusalsBy(session.state.agentId);
    const leases = await this.jobs.resume(session.state.agentId, hello.leases);
    const { leaseMs, heartbeatMs, offerTimeoutMs } = this.jobs.timings;
    this.send(session, {
      type: "welcome",
      protocol: PROTOCOL_VERSION,
      agent_id: session.state.agentId,
      lease_ms: leaseMs,
      heartbeat_ms: heartbeatMs,
      offer_timeout_ms: offerTimeoutMs,
      leases,
    });
    this.options.log?.("info", "agent connected", {
      agent_id: session.state.agentId,
      kinds,
      allow: hello.allow,
      endpoints: hello.endpoints,
      capacity,
      resumed: leases.filter((l) => l.state !== "lost").length,
    });
    this.poke();
  }

  private async extend(session: Session, jobId: string, fence: number, progress?: Record<string, unknown>) {
    const outcome = await this.jobs.extend(session.state.agentId, jobId, fence, progress);
    if (outcome.kind === "refused") this.refuse(session, jobId, fence, outcome.reason);
    else if (outcome.job.status === "cancelling") this.cancelOf(session, outcome.job);
  }

  private cancelOf(session: Session, job: Job): void {
    this.send(session, { type: "cancel", job_id: job.id, fence: job.fence, reason: "cancel requested" });
  }

  private refuse(session: Session, jobId: string, fence: number, reason: string): void {
    this.send(session, { type: "refused", job_id: jobId, fence, reason });
  }

  private violation(session: Session, reason: string): void {
    this.options.log?.("warn", "protocol violation", { agent_id: session.state.agentId, reason });
    session.socket.close(CLOSE.PROTOCOL, reason.slice(0, 120));
    this.sessions.delete(session.state.agentId);
  }

  private fail(session: Session, err: unknown): void {
    this.options.log?.("warn", "agent message failed", {
      agent_id: session.state.agentId,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  private send(session: Session, message: PlaneMessage): void {
    try {
      session.socket.send(JSON.stringify(message));
    } catch {
      // A socket closing under us: what was not delivered times out and goes back to the queue.
    }
  }

  /** Dispatch rounds until no poke arrived during the last one. */
  private async rounds(): Promise<void> {
    try {
      do {
        this.roundWanted = false;
        await this.round();
      } while (this.roundWanted);
    } catch (err) {
      this.options.log?.("warn", "dispatch round failed", {
        error: err instanceof Error ? err.message : String(err),
      });
    } finally {
      this.roundRunning = false;
    }
  }

  /**
   * One round: each pass offers at most one job to every agent with a free slot, so work spreads
   * across agents; agents that announced the same kinds, capabilities, allow list and endpoints
   * share a "nothing left" verdict (unless one refused a job the others may take), so a round
   * costs a few queries however many idle agents are connected.
   */
  private async round(): Promise<void> {
    const now = this.clock.now().getTime();
    const ready = [...this.sessions.values()].filter(
      (s) => s.state.hello && !s.state.hello.draining && s.state.hello.capacity > 0 && s.quietUntil <= now,
    );
    if (ready.length === 0) return;
    const held = await this.jobs.heldCounts();
    const start = this.rotation++ % ready.length;
    const order = [...ready.slice(start), ...ready.slice(0, start)];
    const free = new Map(
      order.map((s) => [s, (s.state.hello?.capacity ?? 0) - (held.get(s.state.agentId) ?? 0)]),
    );
    const exhausted = new Set<string>();
    let offered = true;
    while (offered) {
      offered = false;
      for (const session of order) {
        const hello = session.state.hello;
        const signature = [
          hello?.kinds,
          hello?.capabilities,
          hello?.allow,
          hello?.endpoints,
          session.state.refused ? [session.state.agentId] : [],
        ].join("|");
        if (!hello || (free.get(session) ?? 0) <= 0 || exhausted.has(signature)) continue;
        if (this.sessions.get(session.state.agentId) !== session) continue;
        const job = await this.jobs.offerNext({
          id: session.state.agentId,
          kinds: hello.kinds,
          capabilities: hello.capabilities,
          allow: hello.allow,
          endpoints: hello.endpoints,
        });
        if (!job) {
          exhausted.add(signature);
          continue;
        }
        free.set(session, (free.get(session) ?? 0) - 1);
        this.send(session, { type: "offer", job: toOffer(job) });
        offered = true;
      }
    }
  }
}

export function toOffer(job: Job): JobOffer {
  return {
    id: job.id,
    kind: job.kind,
    fence: job.fence,
    attempt: job.attempt,
    priority: job.priority,
    table_id: job.tableId,
    payload: job.payload,
  };
}
