/**
 * The agent: speaks protocol v1 on its `Connection` and keeps the jobs it holds. The control plane's
 * database is the truth; this side keeps only what it needs to carry its work across a dropped
 * socket (architecture.md, "Jobs and leases"):
 *
 *   offer ──ack──▶ acked ──leased──▶ running ──handler ends──▶ reporting ──(confirmed)──▶ forgotten
 *
 * - A reconnect keeps every held job: `hello` names them, and the `welcome` verdict decides. `valid`
 *   keeps the job (an acked one starts: its ack went through), `cancelling` stops it and reports
 *   `cancelled`, `lost` aborts it silently (the plane gave it to someone else).
 * - A result is kept after it is sent, for one heartbeat interval: if the socket drops before the
 *   plane could have recorded it, the next `hello` names the job again and the result is re-sent
 *   when the plane says the lease is still valid. A duplicate completion changes nothing there.
 * - `refused` means the plane no longer gives this agent that job: the handler is aborted and its
 *   result dropped. `cancel` aborts the handler and reports `cancelled`.
 * - Progress is coalesced (at most one report a second per job) and extends the lease; heartbeats
 *   extend every running lease at the interval the welcome gives.
 * - Parts of a job's output go one at a time, numbered from 1 per lease; the one awaiting its
 *   `part_ack` is sent again after a reconnect (lease `valid`) and after `PART_RESEND_MS` without an
 *   answer. The plane applies a part once, so sending one twice is safe.
 * - Drain: tell the plane, take no offers, wait for running jobs up to the grace period, release the
 *   rest (back to the queue without using an attempt) and close.
 */
import { mkdir } from "node:fs/promises";
import {
  type AgentMessage,
  type JobOffer,
  type Part,
  type PlaneMessage,
  PROTOCOL_VERSION,
  type ResultSchema,
} from "@lakesmith/shared/protocol";
import type { Logger } from "pino";
import type { z } from "zod";
import { AllowList } from "./allow.ts";
import type { AgentConfig } from "./config.ts";
import { Connection } from "./connection.ts";
import { AgentMetrics } from "./metrics.ts";
import type { HandlerRegistry } from "./registry.ts";
import { admit, runJob } from "./runner.ts";
import { AGENT_VERSION } from "./version.ts";

type Result = z.infer<typeof ResultSchema>;
/** Why the agent stopped a job itself; decides whether a result is reported. */
type StopReason = "cancelled" | "refused" | "lost" | "released" | "shutdown";

interface HeldJob {
  offer: JobOffer;
  state: "acked" | "running" | "reporting";
  controller: AbortController;
  stopReason?: StopReason;
  /** A cancel arrived before the job started: it ends `cancelled` without running. */
  cancelBeforeStart?: boolean;
  result?: Result;
  /** Connection generation and time the result was sent on; undefined while unsent. */
  sentOn?: { generation: number; at: number };
  pendingProgress?: Record<string, unknown>;
  /** The last part number used on this lease. */
  partSeq: number;
  /** The part awaiting its ack. */
  pendingPart?: PendingPart;
  progressTimer?: NodeJS.Timeout;
  lastProgressAt: number;
}

interface PendingPart {
  message: Part;
  resolve(reply: Record<string, unknown> | undefined): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
}

export interface AgentOptions {
  config: AgentConfig;
  registry: HandlerRegistry;
  log: Logger;
  metrics?: AgentMetrics;
}

/** How the agent ended: 0 after a drain, non-zero when the plane refused it for good. */
export interface AgentExit {
  code: number;
  reason: string;
}

const PROGRESS_INTERVAL_MS = 1000;
/** A part not answered in this long is sent again (the plane may have failed to handle it). */
const PART_RESEND_MS = 15_000;

export class Agent {
  readonly metrics: AgentMetrics;
  private readonly allow: AllowList;
  private readonly capabilities: string[];
  private readonly kinds: string[];
  private readonly connection: Connection;
  private readonly held = new Map<string, HeldJob>();
  private readonly log: Logger;
  private generation = 0;
  private welcomed = false;
  private heartbeatMs = 20_000;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private draining = false;
  private stopped = false;
  private changed: () => void = () => {};
  private finish!: (exit: AgentExit) => void;
  /** Resolves once the agent has stopped for good. */
  readonly exited: Promise<AgentExit>;
  /** The agent id the control plane knows this token by (after the first welcome). */
  agentId: string | undefined;

  constructor(private readonly options: AgentOptions) {
    const { config } = options;
    this.log = options.log;
    this.metrics = options.metrics ?? new AgentMetrics();
    this.metrics.capacity.set(config.concurrency);
    this.allow = new AllowList(config.allow, config.allow_endpoints);
    this.capabilities = [...new Set([...this.allow.schemes(), ...config.capabilities])].sort();
    const { kinds, missing } = options.registry.runnableKinds(this.capabilities);
    for (const [kind, lacking] of missing)
      this.log.warn({ kind, lacking }, "job kind not announced: the agent lacks a capability it requires");
    this.kinds = kinds;
    this.exited = new Promise((resolve) => {
      this.finish = resolve;
    });
    this.connection = new Connection({
      baseUrl: config.control_plane,
      token: config.token,
      reconnectBaseMs: config.reconnect_base_ms,
      reconnectMaxMs: config.reconnect_max_ms,
      log: this.log,
      metrics: this.metrics,
      onOpen: () => this.opened(),
      onMessage: (message) => this.received(message),
      onClose: () => this.closed(),
      onFatal: (reason) => void this.fatal(reason),
    });
  }

  /** Prepares the scratch folder and connects. */
  async start(): Promise<void> {
    await mkdir(this.options.config.scratch, { recursive: true });
    this.log.info(
      {
        control_plane: this.options.config.control_plane,
        kinds: this.kinds,
        capabilities: this.capabilities,
        concurrency: this.options.config.concurrency,
        allow: this.allow.prefixes.length,
      },
      "agent starting",
    );
    this.connection.start();
  }

  /** Jobs acked or running now (they use a slot). */
  activeJobs(): number {
    let n = 0;
    for (const job of this.held.values()) if (job.state !== "reporting") n++;
    return n;
  }

  /** Whether a live session with the control plane exists (welcome received). */
  get connected(): boolean {
    return this.welcomed && this.connection.open;
  }

  /**
   * Drains and stops: no new offers, running jobs get `graceMs` to finish, the rest are released
   * back to the queue. Resolves with exit code 0.
   */
  async drain(graceMs = this.options.config.drain_timeout_ms): Promise<AgentExit> {
    if (this.stopped) return this.exited;
    if (!this.draining) {
      this.draining = true;
      this.log.info({ running: this.activeJobs(), grace_ms: graceMs }, "draining: taking no new jobs");
      this.send({ type: "drain" });
      await this.until(() => this.activeJobs() === 0 && this.unsentResults() === 0, graceMs);
      const left = [...this.held.values()].filter((j) => j.state !== "reporting");
      for (const job of left) this.release(job, "the agent is shutting down");
      if (left.length)
        this.log.info({ released: left.length }, "released the jobs that did not finish in time");
      const unsent = this.unsentResults() + (this.connected ? 0 : left.length);
      if (unsent) this.log.warn({ jobs: unsent }, "not connected: these leases will lapse and be retried");
      await this.shutdown();
      this.finish({ code: 0, reason: "drained" });
    }
    return this.exited;
  }

  /** Stops at once: aborts every job without reporting (their leases lapse). For tests and fatal ends. */
  async stop(exit: AgentExit = { code: 0, reason: "stopped" }): Promise<AgentExit> {
    if (!this.stopped) {
      for (const job of this.held.values()) this.abort(job, "shutdown");
      this.held.clear();
      await this.shutdown();
      this.finish(exit);
    }
    return this.exited;
  }

  private async fatal(reason: string): Promise<void> {
    this.log.fatal({ reason }, "the control plane refused this agent; not reconnecting");
    await this.stop({ code: 3, reason });
  }

  private async shutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    for (const job of this.held.values()) {
      clearTimeout(job.progressTimer);
      clearTimeout(job.pendingPart?.timer);
    }
    await this.connection.stop(1000, this.draining ? "the agent drained" : "the agent is stopping");
    this.changed();
  }

  // ---- connection events ----

  private opened(): void {
    this.generation++;
    this.welcomed = false;
    this.connection.send({
      type: "hello",
      protocol: PROTOCOL_VERSION,
      agent_version: AGENT_VERSION,
      kinds: this.kinds,
      capabilities: this.capabilities,
      ...this.allow.announced(),
      capacity: this.options.config.concurrency,
      leases: [...this.held.values()].map((j) => ({ job_id: j.offer.id, fence: j.offer.fence })),
      draining: this.draining,
    });
  }

  private closed(): void {
    this.welcomed = false;
    clearInterval(this.heartbeatTimer);
    this.changed();
  }

  private received(message: PlaneMessage): void {
    if (message.type === "welcome") {
      this.welcome(message);
      return;
    }
    if (!this.welcomed) {
      this.log.warn({ type: message.type }, "message before welcome ignored");
      return;
    }
    switch (message.type) {
      case "offer":
        this.offer(message.job);
        return;
      case "leased": {
        const job = this.find(message.job_id, message.fence);
        if (job?.state === "acked") this.begin(job);
        return;
      }
      case "refused": {
        const job = this.find(message.job_id, message.fence);
        if (!job) return;
        this.log.warn(
          { job_id: job.offer.id, reason: message.reason },
          "the control plane refused: job stopped",
        );
        this.abort(job, "refused");
        this.forget(job);
        return;
      }
      case "part_ack": {
        const job = this.find(message.job_id, message.fence);
        const pending = job?.pendingPart;
        if (!job || pending?.message.seq !== message.seq) return;
        clearTimeout(pending.timer);
        job.pendingPart = undefined;
        pending.resolve(message.reply);
        return;
      }
      case "cancel": {
        const job = this.find(message.job_id, message.fence);
        if (!job) return;
        this.log.info({ job_id: job.offer.id, reason: message.reason }, "cancel received");
        if (job.state === "acked") job.cancelBeforeStart = true;
        else if (job.state === "running") this.abort(job, "cancelled");
        return;
      }
    }
  }

  private welcome(message: Extract<PlaneMessage, { type: "welcome" }>): void {
    this.welcomed = true;
    this.agentId = message.agent_id;
    this.heartbeatMs = message.heartbeat_ms;
    this.connection.established();
    const verdicts = new Map(message.leases.map((l) => [`${l.job_id}:${l.fence}`, l.state]));
    for (const job of [...this.held.values()]) {
      const verdict = verdicts.get(`${job.offer.id}:${job.offer.fence}`) ?? "lost";
      if (verdict === "lost") {
        if (job.state !== "reporting" || !job.sentOn)
          this.log.warn({ job_id: job.offer.id }, "lease lost while disconnected: job dropped");
        this.abort(job, "lost");
        this.forget(job);
      } else if (job.state === "reporting") {
        this.sendResult(job);
      } else if (verdict === "cancelling") {
        if (job.state === "acked") {
          job.cancelBeforeStart = true;
          this.begin(job);
        } else this.abort(job, "cancelled");
      } else if (job.state === "acked") {
        this.begin(job);
      } else if (job.pendingPart) this.sendPart(job);
    }
    this.log.info(
      { agent_id: message.agent_id, resumed: this.held.size, heartbeat_ms: message.heartbeat_ms },
      "session established",
    );
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.changed();
  }

  private offer(offer: JobOffer): void {
    const reject = (reason: string) => {
      this.metrics.offers.inc({ decision: "reject" });
      this.send({ type: "reject", job_id: offer.id, fence: offer.fence, reason });
    };
    if (this.draining || this.stopped) {
      reject("the agent is draining");
      return;
    }
    const handler = this.options.registry.get(offer.kind);
    if (!handler) {
      reject(`no handler for kind '${offer.kind}'`);
      return;
    }
    // The plane offers only what this agent announced it may use; this is the agent's own word on it.
    // A payload that does not parse is accepted and fails in the runner, with the reason, for good.
    const parsed = handler.payload.safeParse(offer.payload);
    if (parsed.success) {
      const admitted = admit(handler, parsed.data, offer.payload, this.allow);
      if (!admitted.ok) {
        this.log.warn({ job_id: offer.id, kind: offer.kind, reason: admitted.reason }, "offer refused");
        this.metrics.offers.inc({ decision: "refuse" });
        this.send({
          type: "reject",
          job_id: offer.id,
          fence: offer.fence,
          reason: admitted.reason,
          refused: true,
        });
        return;
      }
    }
    const existing = this.held.get(offer.id);
    if (existing) {
      // The plane re-offered a job this agent thought it held: its old lease is over.
      this.abort(existing, "lost");
      this.forget(existing);
    }
    if (this.activeJobs() >= this.options.config.concurrency) {
      reject("the agent is at capacity");
      return;
    }
    this.held.set(offer.id, {
      offer,
      state: "acked",
      controller: new AbortController(),
      lastProgressAt: 0,
      partSeq: 0,
    });
    this.metrics.offers.inc({ decision: "ack" });
    this.send({ type: "ack", job_id: offer.id, fence: offer.fence });
  }

  // ---- jobs ----

  /** The lease is granted: run the job (or report it cancelled if that was asked first). */
  private begin(job: HeldJob): void {
    job.state = "running";
    if (job.cancelBeforeStart) {
      this.report(job, { outcome: "cancelled", error: "cancelled before it started" });
      return;
    }
    const { offer } = job;
    this.metrics.jobsStarted.inc({ kind: offer.kind });
    this.metrics.running.inc();
    this.log.info(
      { job_id: offer.id, kind: offer.kind, fence: offer.fence, attempt: offer.attempt },
      "job started",
    );
    void runJob(offer, {
      registry: this.options.registry,
      allow: this.allow,
      scratchRoot: this.options.config.scratch,
      log: this.log,
      signal: job.controller.signal,
      progress: (progress) => this.progress(job, progress),
      part: (part) => this.part(job, part),
    }).then((outcome) => {
      this.metrics.running.dec();
      clearTimeout(job.progressTimer);
      if (this.held.get(offer.id) !== job || job.stopReason === "refused" || job.stopReason === "lost") {
        this.metrics.jobEnded(offer.kind, "aborted");
        return;
      }
      if (job.stopReason === "released" || job.stopReason === "shutdown") {
        this.metrics.jobEnded(offer.kind, "released");
        return;
      }
      if (outcome.outcome === "succeeded") this.report(job, { outcome: "succeeded", result: outcome.result });
      else if (outcome.outcome === "failed")
        this.report(
          job,
          job.stopReason === "cancelled"
            ? { outcome: "cancelled", error: outcome.error }
            : { outcome: "failed", error: outcome.error, retryable: outcome.retryable },
        );
      else this.report(job, { outcome: "cancelled", error: "cancelled while running" });
    });
  }

  private report(job: HeldJob, result: Omit<Result, "type" | "job_id" | "fence">): void {
    job.state = "reporting";
    job.result = { type: "result", job_id: job.offer.id, fence: job.offer.fence, ...result };
    this.metrics.jobEnded(job.offer.kind, result.outcome);
    this.log[result.outcome === "failed" ? "warn" : "info"](
      { job_id: job.offer.id, kind: job.offer.kind, outcome: result.outcome, error: result.error },
      "job ended",
    );
    this.sendResult(job);
    this.changed();
  }

  private sendResult(job: HeldJob): void {
    if (job.result && this.connected && this.connection.send(job.result))
      job.sentOn = { generation: this.generation, at: Date.now() };
    else job.sentOn = undefined;
  }

  private progress(job: HeldJob, progress: Record<string, unknown>): void {
    if (job.state !== "running" || job.controller.signal.aborted) return;
    job.pendingProgress = progress;
    if (job.progressTimer) return;
    const wait = Math.max(0, job.lastProgressAt + PROGRESS_INTERVAL_MS - Date.now());
    job.progressTimer = setTimeout(() => {
      job.progressTimer = undefined;
      if (job.state !== "running" || !job.pendingProgress) return;
      if (this.connected)
        this.send({
          type: "progress",
          job_id: job.offer.id,
          fence: job.offer.fence,
          progress: job.pendingProgress,
        });
      job.pendingProgress = undefined;
      job.lastProgressAt = Date.now();
    }, wait);
  }

  private part(job: HeldJob, part: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    if (job.state !== "running" || job.controller.signal.aborted)
      return Promise.reject(new Error(`job ${job.offer.id} is not running: no part can be sent`));
    if (job.pendingPart)
      return Promise.reject(new Error("a part is already awaiting its ack: send parts one at a time"));
    const seq = ++job.partSeq;
    const message: Part = { type: "part", job_id: job.offer.id, fence: job.offer.fence, seq, part };
    return new Promise((resolve, reject) => {
      job.pendingPart = { message, resolve, reject };
      this.sendPart(job);
    });
  }

  /** Sends the part awaiting its ack (when connected), and again later unless answered. */
  private sendPart(job: HeldJob): void {
    const pending = job.pendingPart;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.send(pending.message);
    pending.timer = setTimeout(() => this.sendPart(job), PART_RESEND_MS);
  }

  private release(job: HeldJob, reason: string): void {
    if (job.state === "acked")
      this.send({ type: "reject", job_id: job.offer.id, fence: job.offer.fence, reason });
    else this.send({ type: "release", job_id: job.offer.id, fence: job.offer.fence, reason });
    this.abort(job, "released");
    this.forget(job);
  }

  private abort(job: HeldJob, reason: StopReason): void {
    if (job.stopReason) return;
    job.stopReason = reason;
    clearTimeout(job.progressTimer);
    if (job.pendingPart) {
      clearTimeout(job.pendingPart.timer);
      job.pendingPart.reject(new Error(`job stopped: ${reason}`));
      job.pendingPart = undefined;
    }
    job.controller.abort(new Error(`job stopped: ${reason}`));
  }

  private forget(job: HeldJob): void {
    if (this.held.get(job.offer.id) === job) this.held.delete(job.offer.id);
    this.changed();
  }

  /** Extends running leases; forgets results that had a whole interval to be recorded. */
  private heartbeat(): void {
    const now = Date.now();
    const leases = [];
    for (const job of [...this.held.values()]) {
      if (job.state === "running") leases.push({ job_id: job.offer.id, fence: job.offer.fence });
      else if (
        job.state === "reporting" &&
        job.sentOn?.generation === this.generation &&
        now - job.sentOn.at >= this.heartbeatMs
      )
        this.forget(job);
    }
    this.send({ type: "heartbeat", leases });
  }

  private find(jobId: string, fence: number): HeldJob | undefined {
    const job = this.held.get(jobId);
    return job && job.offer.fence === fence ? job : undefined;
  }

  private unsentResults(): number {
    let n = 0;
    for (const job of this.held.values()) if (job.state === "reporting" && !job.sentOn) n++;
    return n;
  }

  private send(message: AgentMessage): void {
    if (this.connected) this.connection.send(message);
  }

  /** Resolves when `done()` holds or after `timeoutMs`, re-checking on every change. */
  private until(done: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const previous = this.changed;
      const check = () => {
        previous();
        if (done()) finish();
      };
      const finish = () => {
        clearTimeout(timer);
        if (this.changed === check) this.changed = previous;
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.changed = check;
      check();
    });
  }
}
