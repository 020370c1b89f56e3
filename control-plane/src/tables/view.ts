/**
 * The wire form of a table (`TableSchema`), as JSON text made by SQLite. A page of 100 tables is
 * then one row to read instead of 100 tables and their schedules: the driver's per-row cost, not
 * the query, was what a list request spent its time on. Every route that returns a table uses this
 * one mapping (`tableRows`); embedded schedules must equal `scheduleToWire` (a test compares them).
 *
 * Most of the JSON is not built here but read: each table and schedule row carries its own fields
 * as JSON text in `wire`, copied by triggers from the views `table_wire` and `schedule_wire`
 * (migrations 0005 and 0006), which define those fields. Building it on every read was about two
 * thirds of a page's SQL time. What is added here is what `wire` leaves out: a schedule's `next_run_at`, `last_slot` and `updated_at` (the scheduler moves them
 * on every run, and rewriting `wire` then would slow every tick) and the closing braces.
 *
 * Each job type's schedule comes from its own left join on the unique `(table_id, job_type)`
 * index: one probe per job type.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/index.ts";
import { isoJson } from "../db/json-text.ts";
import { lakeTables, SCHEDULE_JOB_TYPES, type ScheduleJobType, schedules } from "../db/schema.ts";

type ScheduleAlias = ReturnType<typeof alias<typeof schedules, string>>;
const scheduleOf = Object.fromEntries(
  SCHEDULE_JOB_TYPES.map((t) => [t, alias(schedules, `schedule_${t}`)]),
) as Record<ScheduleJobType, ScheduleAlias>;

/** One joined schedule as the JSON text of its `ScheduleSchema`, or `null` when the table has none of that type. */
function scheduleJson(s: ScheduleAlias): SQL {
  return sql`case when ${s.id} is null then 'null' else ${s.wire}
    || ',"next_run_at":' || ${isoJson(s.nextRunAt)} || ',"last_slot":' || json_quote(${s.lastSlot})
    || ',"updated_at":' || ${isoJson(s.updatedAt)} || '}' end`;
}

/** One row of `tables` (joined as in `tableRows`) as the JSON text of its `TableSchema`. */
const tableJson: SQL<string> = sql<string>`${lakeTables.wire} || ',"schedule":{' || ${sql.join(
  SCHEDULE_JOB_TYPES.map((t) => sql`'"${sql.raw(t)}":' || ${scheduleJson(scheduleOf[t])}`),
  sql` || ',' || `,
)} || '}}'`;

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
