/**
 * A clock for end-to-end tests that keeps running but can be moved: real time plus an offset that
 * `set` and `advance` change. A control plane on it keeps its leases, heartbeats and timers moving
 * as usual, and a test jumps it to a policy's or schedule's time instead of waiting for it.
 *
 * Rule: move it only while no job is running: a lease granted before a jump of more than the lease
 * time lapses at the next reap.
 */
import type { Clock } from "@lakesmith/shared";

export class OffsetClock implements Clock {
  private offsetMs = 0;

  constructor(start?: Date) {
    if (start) this.set(start);
  }

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** From now on, `now()` reads `date` plus the real time passed since. */
  set(date: Date): void {
    this.offsetMs = date.getTime() - Date.now();
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
