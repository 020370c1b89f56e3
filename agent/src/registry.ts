/**
 * Job handlers, registered by kind. The agent announces the kinds of its registry in `hello`, so
 * the control plane only offers work it has a handler for. A handler declares its payload schema
 * and the storage locations a payload would touch; the runner checks both before anything runs.
 */
import type { JobOffer } from "@lakesmith/shared/protocol";
import type { Logger } from "pino";
import type { z } from "zod";

/** What a running job gets from the agent. */
export interface JobContext<P> {
  job: JobOffer;
  /** The payload, parsed by the handler's schema. */
  payload: P;
  /** Aborted when the job must stop: cancelled, refused by the control plane, lease lost, drained. */
  signal: AbortSignal;
  /** An empty folder for this job alone, removed when it ends. */
  scratchDir: string;
  /** Reports progress; each report also extends the lease. Reports are coalesced. */
  progress(progress: Record<string, unknown>): void;
  /**
   * Sends a piece of the job's output (the protocol's `part`) and resolves with the plane's reply
   * once the plane has applied it; sent again after a reconnect until answered. One at a time:
   * call again only once the last call resolved. Rejects when the job stops.
   */
  part(part: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
  log: Logger;
}

export interface JobHandler<S extends z.ZodType = z.ZodType> {
  kind: string;
  /** Capabilities the agent must have for this kind (`s3`); kinds missing one are not announced. */
  requires?: readonly string[];
  payload: S;
  /** Every storage URI the job would touch, checked against the allow list before it runs. */
  locations(payload: z.infer<S>): string[];
  /**
   * URIs in the payload the job only compares against and never reads or writes (the tables an
   * analysis maps scans to): left out of the allow-list check of the payload's URIs. A URI also in
   * `locations` is checked all the same.
   */
  references?(payload: z.infer<S>): string[];
  /** Every catalog or metastore endpoint the job would talk to, checked likewise (none by default). */
  endpoints?(payload: z.infer<S>): string[];
  /** Runs the job; resolves with its result, or throws (a `JobError` says whether to retry). */
  run(ctx: JobContext<z.infer<S>>): Promise<Record<string, unknown> | undefined>;
}

/** Keeps the payload type of a handler literal, for handlers written as object literals. */
export function defineHandler<S extends z.ZodType>(handler: JobHandler<S>): JobHandler<S> {
  return handler;
}

/** A job failure. `retryable: false` fails the job at once instead of using another attempt. */
export class JobError extends Error {
  override readonly name = "JobError";
  readonly retryable: boolean;

  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable ?? true;
  }
}

export class HandlerRegistry {
  private readonly handlers = new Map<string, JobHandler>();

  constructor(handlers: readonly JobHandler[] = []) {
    for (const handler of handlers) this.register(handler);
  }

  register(handler: JobHandler): void {
    if (this.handlers.has(handler.kind))
      throw new Error(`a handler for '${handler.kind}' is already registered; register each kind once`);
    this.handlers.set(handler.kind, handler);
  }

  get(kind: string): JobHandler | undefined {
    return this.handlers.get(kind);
  }

  /** Kinds whose required capabilities are all in `capabilities`; the others are left out. */
  runnableKinds(capabilities: readonly string[]): { kinds: string[]; missing: Map<string, string[]> } {
    const kinds: string[] = [];
    const missing = new Map<string, string[]>();
    for (const handler of this.handlers.values()) {
      const lacking = (handler.requires ?? []).filter((c) => !capabilities.includes(c));
      if (lacking.length) missing.set(handler.kind, lacking);
      else kinds.push(handler.kind);
    }
    return { kinds: kinds.sort(), missing };
  }
}
