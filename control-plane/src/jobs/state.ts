/**
 * The job state machine (architecture.md, "Jobs and leases"), stated once. Every move is one
 * conditional UPDATE keyed on the job's id, status and fence, so two callers racing on the same job
 * can't both win; the modules of the engine take their `from` statuses from `MOVES`:
 *
 *   queued ──offer──▶ offered ──ack──▶ running ──result──▶ succeeded | failed | cancelled
 *     ▲                  │                │  └──cancel──▶ cancelling ──result/lapse──▶ cancelled
 *     ├──reject/timeout──┘                └──lease lapses / retryable failure──▶ queued (backoff)
 *     └──refuse (the agent may not take it: the next agent gets it; an attempt is counted)
 *
 * - The fence is bumped on every offer; a message that names an older fence changes nothing.
 * - A job ends (succeeded, failed, cancelled) once; its kind's finish hook runs in the batch that
 *   ends it (`complete.ts`), or right after for ends the engine decides alone (cancel, reap).
 */
import type { JobStatus } from "../db/schema.ts";

export const TERMINAL_STATUSES: readonly JobStatus[] = ["succeeded", "failed", "cancelled"];

/** Statuses in which a job may still write (the overlap rules count these at enqueue). */
export const ACTIVE_STATUSES: JobStatus[] = ["queued", "offered", "running", "cancelling"];

/** Statuses in which a job holds an agent's attention: offered, leased, or being cancelled. */
export const HELD_STATUSES: JobStatus[] = ["offered", "running", "cancelling"];

/** Each move of the machine and the statuses it starts from. */
export const MOVES = {
  offer: ["queued"],
  ack: ["offered"],
  reject: ["offered"],
  refuse: ["offered"],
  extend: ["running", "cancelling"],
  release: ["running", "cancelling"],
  complete: ["running", "cancelling"],
  cancelUnstarted: ["queued", "offered"],
  cancelRunning: ["running", "cancelling"],
  reapOffer: ["offered"],
  reapLease: ["running"],
  reapCancel: ["cancelling"],
  lapse: ["running", "cancelling"],
} as const satisfies Record<string, readonly JobStatus[]>;

export type Move = keyof typeof MOVES;

/** The statuses `move` starts from, as a mutable list for `inArray`. */
export const from = (move: Move): JobStatus[] => [...MOVES[move]];
