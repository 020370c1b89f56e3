/**
 * Slots: each `run_time_utc` minute (HH:MM) is a slot that holds at most `schedules_per_slot`
 * enabled daily schedules (a platform setting), so scheduled work spreads over the day instead of
 * piling up at 00:00. Disabled schedules and backfills (which have no run time) take no capacity.
 */
import { and, count, eq } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { SCHEDULE_JOB_TYPES, type ScheduleJobType, schedules } from "../db/schema.ts";

export interface SlotUsage {
  run_time_utc: string;
  capacity: number;
  scheduled: number;
  remaining: number;
  by_job_type: Record<ScheduleJobType, number>;
}

export class SlotService {
  constructor(
    private readonly db: Db,
    private readonly config: ConfigService,
  ) {}

  async usage(runTimeUtc: string): Promise<SlotUsage> {
    const [rows, config] = await Promise.all([
      this.db
        .select({ jobType: schedules.jobType, n: count() })
        .from(schedules)
        .where(and(eq(schedules.runTimeUtc, runTimeUtc), eq(schedules.enabled, true)))
        .groupBy(schedules.jobType),
      this.config.get(),
    ]);
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
