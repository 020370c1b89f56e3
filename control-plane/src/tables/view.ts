/**
 * The wire form of a table (`TableSchema`), built by SQLite as JSON text. A page of 100 tables is
 * then one row to read instead of 100 tables and their schedules: the driver's per-row cost, not
 * the query, was what a list request spent its time on. Every route that returns a table uses this
 * one mapping (`tableRows`); embedded schedules must equal `scheduleToWire` (a test compares them).
 *
 * Each job type's schedule comes from its own left join on the unique `(table_id, job_type)`
 * index: one probe per job type, and the schedule's JSON reaches the table's `json_object` as
 * JSON. A correlated subquery (one read of all the table's schedules) returned its JSON as text,
 * which had to be parsed again, and cost about a fifth more per page.
 */
import { type AnyColumn, and, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/index.ts";
import { lakeTables, SCHEDULE_JOB_TYPES, type ScheduleJobType, schedules } from "../db/schema.ts";

/**
 * Epoch milliseconds as `Date.toISOString()` writes them; null stays null. `datetime` with
 * `subsec` writes the same digits as `strftime('%Y-%m-%dT%H:%M:%fZ', ...)` at about half the cost
 * (a fifth of a 100-table page's SQL time).
 */
const iso = (ms: AnyColumn) => sql`(replace(datetime(${ms} / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')`;

type ScheduleAlias = ReturnType<typeof alias<typeof schedules, string>>;
const scheduleOf = Object.fromEntries(
  SCHEDULE_JOB_TYPES.map((t) => [t, alias(schedules, `schedule_${t}`)]),
) as Record<ScheduleJobType, ScheduleAlias>;

/** One joined schedule as its `ScheduleSchema` JSON, or null when the table has none of that type. */
function scheduleObject(s: ScheduleAlias): SQL {
  return sql`case when ${s.id} is null then null else json_object(
  'id', ${s.id}, 'table_id', ${s.tableId}, 'job_type', ${s.jobType}, 'schedule_type', ${s.scheduleType},
  'lookback_start', ${s.lookbackStart}, 'lookback_end', ${s.lookbackEnd}, 'run_time_utc', ${s.runTimeUtc},
  'backfill_col', ${s.backfillCol}, 'backfill_start_date', ${s.backfillStartDate},
  'backfill_end_date', ${s.backfillEndDate}, 'enabled', json(case when ${s.enabled} then 'true' else 'false' end),
  'next_run_at', ${iso(s.nextRunAt)}, 'last_slot', ${s.lastSlot},
  'created_at', ${iso(s.createdAt)}, 'updated_at', ${iso(s.updatedAt)}) end`;
}

/** One row of `tables` (joined as in `tableRows`) as the JSON text of its `TableSchema`. */
const tableJson: SQL<string> = sql<string>`json_object(
  'id', ${lakeTables.id}, 'name', ${lakeTables.name}, 'uri', ${lakeTables.uri}, 'format', ${lakeTables.format},
  'priority', ${lakeTables.priority}, 'target_file_size_mb', ${lakeTables.targetFileSizeMb},
  'inventory_report_uri', ${lakeTables.inventoryReportUri}, 'onboarding_status', ${lakeTables.onboardingStatus},
  'onboarding_error', ${lakeTables.onboardingError}, 'onboarding_job_id', ${lakeTables.onboardingJobId},
  'recipe', json(${lakeTables.recipe}), 'onboarded_at', ${iso(lakeTables.onboardedAt)},
  'schedule', json_object(${sql.join(
    SCHEDULE_JOB_TYPES.map((t) => sql`${t}, ${scheduleObject(scheduleOf[t])}`),
    sql`, `,
  )}),
  'created_at', ${iso(lakeTables.createdAt)}, 'updated_at', ${iso(lakeTables.updatedAt)})`;

/**
 * The tables that match `where`, each as `item`, the JSON text of its `TableSchema`.
 *
 * @example
 * const [row] = await tableRows(db, eq(lakeTables.id, id));
 */
export function tableRows(db: Db, where: SQL | undefined) {
  let rows = db
    .select({ item: sql<string>`${tableJson}`.as("item") })
    .from(lakeTables)
    .$dynamic();
  for (const t of SCHEDULE_JOB_TYPES)
    rows = rows.leftJoin(
      scheduleOf[t],
      and(eq(scheduleOf[t].tableId, lakeTables.id), eq(scheduleOf[t].jobType, t)),
    );
  return rows.where(where);
}
