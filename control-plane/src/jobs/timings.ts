/** Lease, offer, retry and answer timings of jobs, and the retry backoff they imply. */
import { type SQL, sql } from "drizzle-orm";
import { jobs } from "../db/schema.ts";

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
  /**
   * How long a request that asks for a job's answer (a partition expiration validate) waits for
   * the job to end before it answers 202 with the job instead (`jobs/wait.ts`).
   */
  preflightWaitMs: number;
}

export const DEFAULT_LEASE_TIMINGS: LeaseTimings = {
  leaseMs: 60_000,
  offerTimeoutMs: 10_000,
  heartbeatMs: 20_000,
  retryBaseMs: 30_000,
  retryMaxMs: 30 * 60_000,
  preflightWaitMs: 5_000,
};

/** `retryBaseMs * 2^(attempt-1)`, capped; SQLite's shift does the power of two. */
export function backoffSql(timings: LeaseTimings): SQL {
  return sql`min(${timings.retryBaseMs} << min(max(${jobs.attempt} - 1, 0), 20), ${timings.retryMaxMs})`;
}
