/**
 * The scheduler: one runtime-neutral `tick(now)` that turns due schedules into jobs and runs the
 * job reaper. Node calls it from a timer (`adapter/node-server.ts`), Workers from a Cron Trigger
 * (`worker.ts`, `scheduled`); both may run at once, and ticks may overlap, come late or repeat.
 *
 * Algorithm, per tick:
 * 1. Take up to `chunkSize` due schedules (`enabled` and `next_run_at <= now`, from the
 *    `(enabled, next_run_at)` index) and pick each one's slot: daily, the latest UTC date whose
 *    run time is at or before now (a late tick fires the day it missed, once);
 *    backfill, its column and range.
 * 2. In one transaction, insert one job per slot that has not fired, keyed `schedule:<id>:<slot>`
 *    (`ON CONFLICT DO NOTHING`: a second tick or a second control plane inserts nothing), and move
 *    the schedules on (`next_run_at` to the next date's run time; null after a backfill). See
 *    `fire.ts`.
 * 3. Repeat while a chunk was full; then the policy engine's step (`policies/engine.ts`) queues the
 *    runs of managed tables whose time has come; then give the held jobs of catalog-managed tables their
 *    catalog reference and release them (`linked.ts`), and release the actions held for their
 *    table's onboarding (`table-actions/hold.ts`).
 * 4. Catalog connections' step (`catalog-connections/scheduled.ts`): a full sync for each
 *    active connection whose interval has passed since its latest sync was asked for (at most 100
 *    a tick, each keyed so two ticks queue one), and a cancel for connection tests no agent took.
 *    It decrypts credentials, so it runs in JavaScript, one connection at a time.
 * 5. Object maintenance's discovery step (`object-maintenance/discovery/scheduled.ts`): an attempt
 *    for each inventory location whose cadence has passed since its latest attempt began.
 * 6. Object maintenance's conversion step (`object-maintenance/conversion/scheduled.ts`): each
 *    active prefix policy whose next slot has passed queues its conversion (and removal of
 *    converted inputs).
 * 7. Optimus' step (`optimus/scheduled.ts`): each active submission whose daily time has come at
 *    this tick's 15-minute check queues its run of the UTC day, once.
 * 8. Reap lapsed offers and leases (`JobService.reap`).
 *
 * Bounds: the work follows the due schedules, not the total: a tick with nothing due is one index
 * probe (`anyDue`) and writes nothing. Each chunk is one batch of two statements whatever its size
 * (no per-row parameters, so D1's limit of 100 bound parameters is never near). With
 * `schedules_per_slot` capping daily schedules per minute, a tick that runs every minute sees at
 * most that many daily schedules due.
 */
import type { Clock } from "@lakesmith/shared";
import type { CatalogTick } from "../catalog-connections/scheduled.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import type { JobService } from "../jobs/service.ts";
import type { PolicyTick } from "../policies/engine.ts";
import type { HoldTick } from "../table-actions/hold.ts";
import {
  anyDue,
  type FireSettings,
  insertJobs,
  moveOn,
  type ScheduledRouting,
  scheduledRouting,
} from "./fire.ts";
import type { LinkedTick } from "./linked.ts";

export interface TickResult {
  /** Due schedules moved on by this tick. */
  due: number;
  /** Jobs this tick queued (a slot another tick already fired counts in neither). */
  fired: number;
  /** The policy engine's step: catalogs resolved again, managed tables looked at, jobs queued, tables onboarded. */
  policies: PolicyTick;
  /** Scheduled catalog syncs queued, and connection tests cancelled for want of an agent. */
  catalogs: CatalogTick;
  /** Held jobs of catalog-managed tables released with their catalog reference, or cancelled. */
  linked: LinkedTick;
  /** Actions released once their table's onboarding succeeded, or cancelled when it failed. */
  onboardingHold: HoldTick;
  /** Discoveries queued at their location's cadence. */
  discoveries: number;
  /** Prefix conversions and removals queued at their policy's schedule. */
  conversions: number;
  /** Optimus submissions' daily runs queued. */
  optimus: number;
  reaped: { offers: number; leases: number; cancelled: number };
}

export interface SchedulerOptions {
  /**
   * Due schedules per transaction. Each commit of a big chunk also runs a WAL checkpoint on
   * Node, so fewer, larger chunks made a 95,000-schedule tick about a quarter faster than 5,000;
   * a chunk holds the Node event loop for about half a second, only in such catch-up ticks.
   */
  chunkSize?: number;
  /** The catalog connections' step; none when absent. */
  catalogs?: { tick(now: Date): Promise<CatalogTick> };
  /** The release of catalog-managed tables' held jobs; none when absent. */
  linked?: { tick(now: Date): Promise<LinkedTick> };
  /** The release of actions held for their table's onboarding; none when absent. */
  onboardingHold?: { tick(now: Date): Promise<HoldTick> };
  /** The discovery step; none when absent. */
  discovery?: { tick(now: Date): Promise<number> };
  /** The prefix conversion step; none when absent. */
  conversions?: { tick(now: Date): Promise<number> };
  /** The Optimus submissions' step; none when absent. */
  optimus?: { tick(now: Date): Promise<number> };
  /** The policy engine's step (`policies/engine.ts`); none when absent. */
  policies?: { tick(now: Date): Promise<PolicyTick> };
}

export class Scheduler {
  private readonly routing: ScheduledRouting;
  private readonly chunkSize: number;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly config: ConfigService,
    private readonly options: SchedulerOptions = {},
  ) {
    this.routing = scheduledRouting(jobs.kinds);
    this.chunkSize = options.chunkSize ?? 20_000;
  }

  /** Fires every due schedule once per slot, reaps lapsed job leases, and asks for a dispatch round. */
  async tick(now: Date = this.clock.now()): Promise<TickResult> {
    let due = 0;
    let fired = 0;
    if (await anyDue(this.db, now)) {
      const { values } = await this.config.get();
      const settings: FireSettings = {
        mutationIntervalMinutes: values.mutation_interval_threshold_minutes,
        partitionRetentionDays: values.default_partition_expiration_days,
      };
      for (;;) {
        // One transaction per chunk: the jobs and the schedules' move on commit together, so a tick
        // that dies leaves the chunk due and the next tick fires it; a concurrent tick waits for
        // the commit and then finds the chunk moved on.
        const [inserted, moved] = await this.db.batch([
          this.db.run(insertJobs(now, this.chunkSize, settings, this.routing)),
          this.db.run(moveOn(now, this.chunkSize)),
        ]);
        fired += changes(inserted);
        due += changes(moved);
        if (changes(moved) < this.chunkSize) break;
      }
    }
    const policies = (await this.options.policies?.tick(now)) ?? {
      resolved: 0,
      due: 0,
      queued: 0,
      onboarded: 0,
      scanChecks: 0,
    };
    const linked = (await this.options.linked?.tick(now)) ?? { released: 0, cancelled: 0 };
    const onboardingHold = (await this.options.onboardingHold?.tick(now)) ?? { released: 0, cancelled: 0 };
    const catalogs = (await this.options.catalogs?.tick(now)) ?? { syncs: 0, expiredTests: 0 };
    const discoveries = (await this.options.discovery?.tick(now)) ?? 0;
    const conversions = (await this.options.conversions?.tick(now)) ?? 0;
    const optimus = (await this.options.optimus?.tick(now)) ?? 0;
    const reaped = await this.jobs.reap();
    // Always: besides what this tick fired or reaped, jobs whose retry backoff ended since the last
    // tick are offerable now, and on Workers nothing else would tell the hub.
    this.jobs.notifyWork();
    return {
      due,
      fired,
      policies,
      catalogs,
      linked,
      onboardingHold,
      discoveries,
      conversions,
      optimus,
      reaped,
    };
  }
}

/** Rows a statement changed: libSQL reports `rowsAffected`, D1 `meta.changes`. */
function changes(result: unknown): number {
  const r = result as { rowsAffected?: number; meta?: { changes?: number } };
  return r.rowsAffected ?? r.meta?.changes ?? 0;
}
