/**
 * The wire form of a table (`TableSchema`), built by SQLite as JSON text. A page of 100 tables is
 * then one row to read instead of 100 tables and their schedules: the driver's per-row cost, not
 * the query, was what a list request spent its time on. Every route that returns a table uses this
 * one mapping; embedded schedules must equal `scheduleToWire` (a test compares them).
 */
import { type SQL, sql } from "drizzle-orm";
import { lakeTables, SCHEDULE_JOB_TYPES } from "../db/schema.ts";

/** Epoch milliseconds as `Date.toISOString()` writes them; null stays null. */
const iso = (ms: SQL | string) => sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${ms} / 1000.0, 'unixepoch')`;

const scheduleObject = sql`json_object(
  'id', s.id, 'table_id', s.table_id, 'job_type', s.job_type, 'schedule_type', s.schedule_type,
  'lookback_start', s.lookback_start, 'lookback_end', s.lookback_end, 'run_time_utc', s.run_time_utc,
  'backfill_col', s.backfill_col, 'backfill_start_date', s.backfill_start_date,
  'backfill_end_date', s.backfill_end_date, 'enabled', json(case when s.enabled then 'true' else 'false' end),
  'next_run_at', ${iso(sql.raw("s.next_run_at"))}, 'last_slot', s.last_slot,
  'created_at', ${iso(sql.raw("s.created_at"))}, 'updated_at', ${iso(sql.raw("s.updated_at"))})`;

/**
 * The table's schedules as `{crunch, vacuum, partition_expiration}`, null where it has none: one
 * indexed read of its schedules (at most one per job type, so `max` picks that one). `json()`
 * because not every SQLite keeps a JSON value's type across a subquery.
 */
const schedulesJson: SQL = sql`json((select json_object(${sql.join(
  SCHEDULE_JOB_TYPES.map((t) => sql`${t}, json(max(case when s.job_type = ${t} then ${scheduleObject} end))`),
  sql`, `,
)}) from schedules s where s.table_id = ${lakeTables.id}))`;

/** One table row of `tables` as the JSON text of its `TableSchema`. */
export const tableJson: SQL<string> = sql<string>`json_object(
  'id', ${lakeTables.id}, 'name', ${lakeTables.name}, 'uri', ${lakeTables.uri}, 'format', ${lakeTables.format},
  'priority', ${lakeTables.priority}, 'target_file_size_mb', ${lakeTables.targetFileSizeMb},
  'inventory_report_uri', ${lakeTables.inventoryReportUri}, 'onboarding_status', ${lakeTables.onboardingStatus},
  'onboarding_error', ${lakeTables.onboardingError}, 'onboarding_job_id', ${lakeTables.onboardingJobId},
  'recipe', json(${lakeTables.recipe}), 'onboarded_at', ${iso(sql`${lakeTables.onboardedAt}`)},
  'schedule', ${schedulesJson},
  'created_at', ${iso(sql`${lakeTables.createdAt}`)}, 'updated_at', ${iso(sql`${lakeTables.updatedAt}`)})`;
