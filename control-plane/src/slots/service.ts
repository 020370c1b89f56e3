/**
 * Slots: each `run_time_utc` minute (HH:MM) is a slot that holds at most `schedules_per_slot`
 * enabled daily schedules (a platform setting), so scheduled work spreads over the day instead of
 * piling up at 00:00. Disabled schedules and backfills (which have no run time) take no capacity.
 */
import { and, count, eq, sql } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { SCHEDULE_JOB_TYPES, type ScheduleJobType, schedules } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";

export interface SlotUsage {
  run_time_utc: string;
  capacity: number;
  scheduled: number;
  remaining: number;
  by_job_type: Record<ScheduleJobType, number>;
}

export class SlotService {
  private readonly counts;

  constructor(
    db: Db,
    private readonly config: ConfigService,
  ) {
    this.counts = preparedSelect(
      db,
      db
        .select({ jobType: schedules.jobType, n: count() })
        .from(schedules)
        .where(and(eq(schedules.runTimeUtc, sql.placeholder("runTimeUtc")), eq(schedules.enabled, true)))
        .groupBy(schedules.jobType),
    );
  }

  async usage(runTimeUtc: string): Promise<SlotUsage> {
    const [rows, config] = await Promise.all([this.counts.all({ runTimeUtc }), this.config.get()]);
    const byJobType = Object.fromEntries(SCHEDULE_JOB_TYPES.map((t) => [t, 0])) as Record<
      ScheduleJobType,
      number
    >;
    for (const row of rows) byJobType[row.jobType] = row.n;
    const scheduled = rows.reduce((sum, r) => sum + r.n, 0);
    const capacity = config.values.schedules_per_slot;
    return {
      run_time_utc: runTimeUtc,
      capacity,
      scheduled,
      remaining: Math.max(0, capacity - scheduled),
      by_job_type: byJobType,
    };
  }
}
