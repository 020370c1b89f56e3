/**
 * The scheduler's Optimus step (`scheduler/scheduler.ts` runs it every tick). Checks are the
 * 15-minute marks of the UTC day (00:00, 00:15, ...): a tick acts as the latest check at or before
 * it, so a submission fires at the first check at or after its `daily_sync_time_utc` (10:07 fires at
 * 10:15), or, after downtime, at the first tick later that day. Nothing is stored about checks: the
 * marks are the same for every tick and every control plane, and restarts change nothing.
 *
 * Each active submission whose time is at or before the check and that has no scheduled run for the
 * check's UTC day queues one (the service's `queueScheduled`: dedupe key and a unique slot per
 * submission and day), so it fires at most once per UTC day across ticks, restarts and control
 * planes. An inactive (paused) submission never fires. At most `SUBMISSIONS_PER_TICK` a tick, the
 * earliest time first; the rest at the next tick.
 */
import { utcDay } from "@lakesmith/shared/optimus";
import { and, asc, lte, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { optimusSubmissions } from "../db/schema.ts";
import type { OptimusService } from "./service.ts";

export const CHECK_INTERVAL_MS = 15 * 60_000;
const SUBMISSIONS_PER_TICK = 100;

/** The latest 15-minute check at or before `now`. */
export const checkAt = (now: Date) =>
  new Date(Math.floor(now.getTime() / CHECK_INTERVAL_MS) * CHECK_INTERVAL_MS);

export class OptimusSchedule {
  constructor(
    private readonly db: Db,
    private readonly optimus: OptimusService,
  ) {}

  /** Queues the runs due at this tick's check; returns how many. */
  async tick(now: Date): Promise<number> {
    const check = checkAt(now);
    const day = utcDay(check);
    const time = check.toISOString().slice(11, 16);
    const outer = sql.raw(`"optimus_submissions"."id"`);
    const due = await this.db
      .select()
      .from(optimusSubmissions)
      .where(
        and(
          // A literal, so the partial index `optimus_submissions_due_idx` (active = 1) serves it.
          sql`${optimusSubmissions.active} = 1`,
          lte(optimusSubmissions.dailySyncTimeUtc, time),
          sql`not exists (select 1 from optimus_runs r where r.submission_id = ${outer} and r.slot_day = ${day})`,
        ),
      )
      .orderBy(asc(optimusSubmissions.dailySyncTimeUtc))
      .limit(SUBMISSIONS_PER_TICK);
    let queued = 0;
    for (const submission of due) if (await this.optimus.queueScheduled(submission, day)) queued++;
    return queued;
  }
}
