/**
 * Waiting for a job's end inside a request, for answers a user waits for (a partition expiration
 * validate): up to `preflightWaitMs`, then the caller answers with the job as it stands.
 *
 * - Polls the job by id, one read at a time and never inside a transaction: the end may be
 *   recorded by another process (on Workers the `AgentHub` Durable Object runs the hub, not the
 *   Worker serving the request). Polls start at `FIRST_POLL_MS` and double up to `MAX_POLL_MS`,
 *   so a 5 s wait costs at most about 25 reads.
 * - Wakes at once when this process records the end (`JobService.complete` signals it), so on Node,
 *   where the hub shares the process, a fast answer is not delayed by the poll interval.
 * - Time here is wall-clock time: it bounds how long a request is held, not a time of the domain.
 */
import type { Job } from "../db/schema.ts";
import { type Engine, getJob } from "./engine.ts";
import { TERMINAL_STATUSES } from "./state.ts";

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

/** Lets a waiter be woken when this process ends a job. */
export class JobEnds {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Calls `wake` once when `jobId` ends in this process; returns the unsubscribe function. */
  on(jobId: string, wake: () => void): () => void {
    let set = this.waiters.get(jobId);
    if (!set) {
      set = new Set();
      this.waiters.set(jobId, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.waiters.delete(jobId);
    };
  }

  ended(jobId: string): void {
    for (const wake of this.waiters.get(jobId) ?? []) wake();
  }
}

/**
 * The job once it ended, or as it is when `ms` ran out or `signal` aborted (the client left).
 * Undefined only for an unknown id.
 */
export async function waitForEnd(
  engine: Engine,
  ends: JobEnds,
  jobId: string,
  ms: number,
  signal?: AbortSignal,
): Promise<Job | undefined> {
  const deadline = Date.now() + ms;
  let pollMs = FIRST_POLL_MS;
  let job = await getJob(engine, jobId);
  while (job && !TERMINAL_STATUSES.includes(job.status) && !signal?.aborted) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await pause(Math.min(pollMs, left), ends, jobId, signal);
    pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
    job = await getJob(engine, jobId);
  }
  return job;
}

/** Resolves after `ms`, or earlier when the job ends in this process or the signal aborts. */
function pause(ms: number, ends: JobEnds, jobId: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const off = ends.on(jobId, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}
