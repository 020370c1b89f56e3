/**
 * Schedules of a table (document 1, "Schedule"): at most one per table and job type, created only
 * once the table's onboarding is active. The service keeps `next_run_at` right, so the scheduler
 * tick only reads what is due:
 *
 * - daily: the next `run_time_utc` at or after the change, skipping the date that already fired;
 *   recomputed when the time changes or the schedule is enabled again.
 * - backfill: due at once, and null after it fired; re-armed when its column or range changes.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { backfillSlot } from "@lakesmith/shared/jobs";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type LakeTable, type Schedule, type ScheduleJobType, schedules } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import { ApiError, conflict, type FieldError, notFound } from "../http/problem.ts";
import type { SlotService } from "../slots/service.ts";
import type { TableService } from "../tables/service.ts";
import { vacuumKind } from "../vacuum/kind.ts";
import {
  BACKFILL_FIELDS,
  DAILY_FIELDS,
  rangeIssues,
  type ScheduleCreate,
  type ScheduleUpdate,
} from "./schemas.ts";
import { nextOccurrence } from "./timing.ts";

/** Table formats each job type works on (document 1, section 1). */
const FORMATS_OF: Record<ScheduleJobType, readonly string[]> = {
  crunch: ["delta", "iceberg", "hive"],
  vacuum: ["delta", "iceberg"],
  partition_expiration: ["delta"],
};

export class ScheduleService {
  private readonly byKey;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly tables: TableService,
    private readonly slots: SlotService,
  ) {
    const key = and(
      eq(schedules.tableId, sql.placeholder("tableId")),
      eq(schedules.jobType, sql.placeholder("jobType")),
    );
    this.byKey = preparedSelect(db, db.select().from(schedules).where(key));
  }

  async get(tableId: string, jobType: ScheduleJobType): Promise<Schedule> {
    const [table, schedule] = await Promise.all([this.table(tableId), this.byKey.get({ tableId, jobType })]);
    if (!schedule) throw noSchedule(table, jobType);
    return schedule;
  }

  async create(tableId: string, jobType: ScheduleJobType, body: ScheduleCreate): Promise<Schedule> {
    const table = await this.table(tableId);
    if (table.onboardingStatus !== "active")
      throw conflict(
        `Table '${table.name}' onboarding is '${table.onboardingStatus}'; a schedule can be created only once onboarding is active. ` +
          `Check GET /api/v1/onboarding/${table.id}/status${table.onboardingStatus === "failed" ? " and retry it" : ""}.`,
      );
    if (!FORMATS_OF[jobType].includes(table.format))
      throw new ApiError(
        422,
        `job_type: ${jobType} works on ${FORMATS_OF[jobType].join(" or ")} tables; '${table.name}' is ${table.format}.`,
        [{ path: "job_type", message: `not available for ${table.format} tables` }],
      );
    const refusal = jobType === "vacuum" ? vacuumKind.precondition?.(table) : undefined;
    if (refusal) throw conflict(refusal.message);
    if (body.schedule_type === "daily" && body.enabled) await this.checkSlot(body.run_time_utc as string);
    const now = this.clock.now();
    const daily = body.schedule_type === "daily";
    const [created] = await this.db
      .insert(schedules)
      .values({
        id: newId("sch"),
        tableId,
        jobType,
        scheduleType: body.schedule_type,
        lookbackStart: daily ? (body.lookback_start ?? null) : null,
        lookbackEnd: daily ? (body.lookback_end ?? null) : null,
        runTimeUtc: daily ? (body.run_time_utc ?? null) : null,
        backfillCol: daily ? null : (body.backfill_col ?? null),
        backfillStartDate: daily ? null : (body.backfill_start_date ?? null),
        backfillEndDate: daily ? null : (body.backfill_end_date ?? null),
        enabled: body.enabled,
        nextRunAt: daily ? nextOccurrence(body.run_time_utc as string, now) : now,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: [schedules.tableId, schedules.jobType] })
      .returning()
      .catch((err: unknown) => {
        // The table was deleted between the read above and this insert.
        if (err instanceof Error && /FOREIGN KEY/.test(`${err.message} ${String(err.cause)}`))
          throw notFound("Table", tableId);
        throw err;
      });
    if (!created)
      throw conflict(
        `Table '${table.name}' already has a ${jobType} schedule (one per table and job type); ` +
          `change it with PUT /api/v1/tables/${table.id}/schedule?job_type=${jobType} or delete it first.`,
      );
    return created;
  }

  async update(tableId: string, jobType: ScheduleJobType, patch: ScheduleUpdate): Promise<Schedule> {
    const current = await this.get(tableId, jobType);
    const daily = current.scheduleType === "daily";
    const foreign = (daily ? BACKFILL_FIELDS : DAILY_FIELDS).filter((f) => patch[f] !== undefined);
    const problems: FieldError[] = foreign.map((path) => ({
      path,
      message: `not allowed on a ${current.scheduleType} schedule`,
    }));
    const merged = {
      lookback_start: patch.lookback_start ?? current.lookbackStart,
      lookback_end: patch.lookback_end ?? current.lookbackEnd,
      run_time_utc: patch.run_time_utc ?? current.runTimeUtc,
      backfill_col: patch.backfill_col ?? current.backfillCol,
      backfill_start_date: patch.backfill_start_date ?? current.backfillStartDate,
      backfill_end_date: patch.backfill_end_date ?? current.backfillEndDate,
      enabled: patch.enabled ?? current.enabled,
    };
    if (problems.length === 0) problems.push(...rangeIssues(merged));
    if (problems.length > 0)
      throw new ApiError(422, problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems);

    const now = this.clock.now();
    let nextRunAt = current.nextRunAt;
    if (daily) {
      const runTime = merged.run_time_utc as string;
      const moved = runTime !== current.runTimeUtc;
      const reEnabled = merged.enabled && !current.enabled;
      if (merged.enabled && (moved || reEnabled)) await this.checkSlot(runTime);
      if (moved || reEnabled) nextRunAt = nextOccurrence(runTime, now, current.lastSlot);
    } else {
      const slot = backfillSlot(
        merged.backfill_col as string,
        merged.backfill_start_date as string,
        merged.backfill_end_date as string,
      );
      nextRunAt = slot === current.lastSlot ? null : (current.nextRunAt ?? now);
    }
    const [updated] = await this.db
      .update(schedules)
      .set({
        ...(daily
          ? {
              lookbackStart: merged.lookback_start,
              lookbackEnd: merged.lookback_end,
              runTimeUtc: merged.run_time_utc,
            }
          : {
              backfillCol: merged.backfill_col,
              backfillStartDate: merged.backfill_start_date,
              backfillEndDate: merged.backfill_end_date,
            }),
        enabled: merged.enabled,
        nextRunAt,
        updatedAt: now,
      })
      .where(eq(schedules.id, current.id))
      .returning();
    if (!updated) throw notFound("Schedule", current.id);
    return updated;
  }

  async delete(tableId: string, jobType: ScheduleJobType): Promise<void> {
    const table = await this.table(tableId);
    const deleted = await this.db
      .delete(schedules)
      .where(this.key(tableId, jobType))
      .returning({ id: schedules.id });
    if (deleted.length === 0) throw noSchedule(table, jobType);
  }

  private async table(tableId: string): Promise<LakeTable> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    return table;
  }

  /**
   * 409 when the slot is full. Checked before the write, so two writers racing for the last place
   * can both get it; the slot is a load-spreading guide, not a hard limit of the system.
   */
  private async checkSlot(runTimeUtc: string): Promise<void> {
    const usage = await this.slots.usage(runTimeUtc);
    if (usage.remaining > 0) return;
    throw new ApiError(
      409,
      `The ${runTimeUtc} UTC slot is full (${usage.scheduled} of ${usage.capacity} schedules); pick another run_time_utc (GET /api/v1/slots/{run_time_utc} shows what is left) or raise the schedules_per_slot setting.`,
      [{ path: "run_time_utc", message: "slot is full" }],
    );
  }

  private key(tableId: string, jobType: ScheduleJobType) {
    return and(eq(schedules.tableId, tableId), eq(schedules.jobType, jobType));
  }
}

function noSchedule(table: LakeTable, jobType: ScheduleJobType) {
  return new ApiError(
    404,
    `Table '${table.name}' has no ${jobType} schedule; create one with POST /api/v1/tables/${table.id}/schedule?job_type=${jobType}.`,
  );
}
