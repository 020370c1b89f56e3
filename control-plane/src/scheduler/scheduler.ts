/**
 * The scheduler: one runtime-neutral `tick(now)` that turns due schedules into jobs and runs the
 * job reaper. Node calls it from a timer (`adapter/node-server.ts`), Workers from a Cron Trigger
 * (`worker.ts`, `scheduled`); both may run at once, and ticks may overlap, come late or repeat.
 *
 * Algorithm, per tick:
 * 1. Read due schedules from the `(enabled, next_run_at)` index, oldest first, in chunks of
 *    `chunkSize`, joined to their tables. A schedule is due when `next_run_at <= now`.
 * 2. For each, pick its slot: daily, the latest UTC date whose run time is at or before now
 *    (`latestDueSlot`); backfill, its column and range. A slot that already fired (`last_slot`) is
 *    not fired again, only moved on.
 * 3. Per chunk, insert one job per slot with the dedupe key `schedule:<id>:<slot>`
 *    (`ON CONFLICT DO NOTHING`, so a second tick or a second control plane inserts nothing), then
 *    move each schedule's `next_run_at` on (the next date's run time; null after a backfill),
 *    guarded by the `next_run_at` read, so a concurrent edit of the schedule wins.
 * 4. Reap lapsed offers and leases (`JobService.reap`).
 *
 * Bounds: cost follows the due schedules, not the total: each chunk is one indexed read and two
 * statements whatever the chunk size, because the rows travel as one JSON parameter
 * (`json_each`), which also keeps D1's limit of 100 bound parameters per statement out of the way.
 * A schedule whose chunk update is lost to a concurrent edit is not read twice in the same tick.
 */
import type { Clock } from "@lakesmith/shared";
import { newId } from "@lakesmith/shared";
import { backfillSlot, type ScheduledJobPayload, scheduleDedupeKey, uriScheme } from "@lakesmith/shared/jobs";
import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { lakeTables, schedules } from "../db/schema.ts";
import type { JobService } from "../jobs/service.ts";
import { addDays, latestDueSlot, lookbackRange, slotInstant } from "../schedules/timing.ts";

export interface TickResult {
  /** Due schedules read. */
  due: number;
  /** Jobs this tick inserted (a slot another tick already fired counts in neither). */
  fired: number;
  reaped: { offers: number; leases: number; cancelled: number };
}

type DueRow = Awaited<ReturnType<typeof dueChunk>>[number];

interface JobRow {
  id: string;
  kind: string;
  table_id: string;
  priority: string;
  payload: ScheduledJobPayload;
  requires: string[];
  dedupe_key: string;
  schedule_id: string;
}

export class Scheduler {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly chunkSize = 1000,
  ) {}

  /** Fires every due schedule once per slot, then reaps lapsed job leases. */
  async tick(now: Date = this.clock.now()): Promise<TickResult> {
    let due = 0;
    let fired = 0;
    const seen = new Set<string>();
    for (;;) {
      const rows = (await dueChunk(this.db, now, this.chunkSize)).filter((r) => !seen.has(r.id));
      if (rows.length === 0) break;
      for (const row of rows) seen.add(row.id);
      due += rows.length;
      fired += await this.fire(rows, now);
    }
    if (fired > 0) this.jobs.notifyWork();
    const reaped = await this.jobs.reap();
    return { due, fired, reaped };
  }

  /** Inserts the chunk's jobs and moves its schedules on; returns how many jobs it inserted. */
  private async fire(rows: DueRow[], now: Date): Promise<number> {
    const jobs: JobRow[] = [];
    const moves: { id: string; due: number; slot: string | null; next: number | null }[] = [];
    for (const row of rows) {
      const plan = this.plan(row, now);
      if (!plan) {
        // Not a schedule the API could have written; disarm it rather than read it every tick.
        moves.push({ id: row.id, due: (row.nextRunAt as Date).getTime(), slot: row.lastSlot, next: null });
        continue;
      }
      moves.push({ id: row.id, due: (row.nextRunAt as Date).getTime(), slot: plan.slot, next: plan.next });
      if (plan.slot === row.lastSlot) continue;
      jobs.push({
        id: newId("job"),
        kind: row.jobType,
        table_id: row.tableId,
        priority: row.priority,
        payload: {
          table_id: row.tableId,
          uri: row.uri,
          format: row.format,
          schedule_id: row.id,
          date_range: plan.range,
          slot: plan.slot,
          target_file_size_mb: row.targetFileSizeMb,
          recipe: row.recipe ?? null,
          ...(row.scheduleType === "backfill" ? { backfill_col: row.backfillCol as string } : {}),
        },
        requires: [uriScheme(row.uri)],
        dedupe_key: scheduleDedupeKey(row.id, plan.slot),
        schedule_id: row.id,
      });
    }
    const t = now.getTime();
    // Jobs first, then the schedules: if the tick dies between the two, the schedule is still due
    // and the next tick finds the job's dedupe key taken. (D1 cannot batch raw SQL statements.)
    const inserted =
      jobs.length === 0
        ? []
        : await this.db.all<{ id: string }>(sql`
        insert into jobs (id, kind, table_id, priority, payload, requires, dedupe_key, trigger, schedule_id,
                          not_before, created_at, updated_at)
        select json_extract(j.value, '$.id'), json_extract(j.value, '$.kind'),
               json_extract(j.value, '$.table_id'), json_extract(j.value, '$.priority'),
               json_extract(j.value, '$.payload'), json_extract(j.value, '$.requires'),
               json_extract(j.value, '$.dedupe_key'), 'schedule', json_extract(j.value, '$.schedule_id'),
               ${t}, ${t}, ${t}
        from json_each(${JSON.stringify(jobs)}) as j
        where true
        on conflict (dedupe_key) do nothing
        returning id`);
    await this.db.run(sql`
        update schedules
        set last_slot = json_extract(m.value, '$.slot'), next_run_at = json_extract(m.value, '$.next'),
            updated_at = ${t}
        from json_each(${JSON.stringify(moves)}) as m
        where schedules.id = json_extract(m.value, '$.id')
          and schedules.next_run_at = json_extract(m.value, '$.due')`);
    return inserted.length;
  }

  /** The slot a due schedule fires now, the dates it covers, and when it is due next. */
  private plan(row: DueRow, now: Date) {
    if (row.scheduleType === "daily") {
      if (!row.runTimeUtc || row.lookbackStart === null || row.lookbackEnd === null) return undefined;
      const slot = latestDueSlot(row.runTimeUtc, now);
      return {
        slot,
        range: lookbackRange(slot, row.lookbackStart, row.lookbackEnd),
        next: slotInstant(addDays(slot, 1), row.runTimeUtc).getTime(),
      };
    }
    if (!row.backfillCol || !row.backfillStartDate || !row.backfillEndDate) return undefined;
    return {
      slot: backfillSlot(row.backfillCol, row.backfillStartDate, row.backfillEndDate),
      range: { start: row.backfillStartDate, end: row.backfillEndDate },
      next: null,
    };
  }
}

/** Due schedules with what their jobs need of the table, oldest due first. */
function dueChunk(db: Db, now: Date, limit: number) {
  return db
    .select({
      id: schedules.id,
      tableId: schedules.tableId,
      jobType: schedules.jobType,
      scheduleType: schedules.scheduleType,
      lookbackStart: schedules.lookbackStart,
      lookbackEnd: schedules.lookbackEnd,
      runTimeUtc: schedules.runTimeUtc,
      backfillCol: schedules.backfillCol,
      backfillStartDate: schedules.backfillStartDate,
      backfillEndDate: schedules.backfillEndDate,
      nextRunAt: schedules.nextRunAt,
      lastSlot: schedules.lastSlot,
      uri: lakeTables.uri,
      format: lakeTables.format,
      priority: lakeTables.priority,
      targetFileSizeMb: lakeTables.targetFileSizeMb,
      recipe: lakeTables.recipe,
    })
    .from(schedules)
    .innerJoin(lakeTables, eq(lakeTables.id, schedules.tableId))
    .where(and(eq(schedules.enabled, true), lte(schedules.nextRunAt, now)))
    .orderBy(asc(schedules.nextRunAt))
    .limit(limit);
}
