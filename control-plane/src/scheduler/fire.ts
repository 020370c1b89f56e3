/**
 * The two statements that fire one chunk of due schedules, written as set-based SQL so no schedule
 * row travels to JavaScript and back: a tick's cost is the database's own work per due schedule.
 * The scheduler runs them as one batch (one transaction, on libSQL and D1 alike).
 *
 * `due` (a CTE) is up to `limit` due schedules, read from the `(enabled, next_run_at)` index,
 * with the slot each fires (daily: the latest UTC date whose run time has passed; backfill:
 * `backfillSlot`) and when it is due next. Both statements read the same chunk: the same index
 * walk with the same limit, in one transaction. (An ORDER BY to pin that down made libSQL sort
 * every due schedule per chunk.)
 *
 * 1. `insertJobs`: one queued job per due schedule whose slot has not fired (`last_slot`), with the
 *    dedupe key `scheduleDedupeKey(id, slot)`; a key that exists already is skipped, so a second
 *    tick or a second control plane inserts nothing.
 *    A catalog-managed table's job is held (`CATALOG_HOLD`) until `linked.ts` adds its catalog
 *    reference, in the same tick.
 * 2. `moveOn`: sets `last_slot` and `next_run_at` of the same schedules. After (1) in the same
 *    transaction every slot of the chunk has its job (inserted now, or by a tick before), so no
 *    schedule is moved past a slot without its job. It reads no table row, only that it exists.
 *
 * The payload, dedupe key, slot and `requires` written here must equal what the shared helpers
 * (`@lakesmith/shared/jobs`) describe, and the routing columns (`locations`, `exclusion`, `locks`)
 * what each kind's declaration derives (`scheduledRouting`); the scheduler tests compare them.
 */
import { SCHEDULED_JOB_KINDS, type ScheduledJobKind } from "@lakesmith/shared/jobs";
import { and, eq, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { lakeTables, schedules } from "../db/schema.ts";
import type { JobKindRegistry } from "../jobs/kinds.ts";

const DAY_MS = 86_400_000;

/**
 * A fresh job id per row, made by SQLite: `job_` and 20 hex digits (80 random bits), the same
 * width as `newId("job")` and within its alphabet. Made in JavaScript, 100,000 ids took about
 * 0.6 s on their own, more than half of the tick's budget.
 */
const jobId = sql.raw("'job_' || lower(hex(randomblob(10)))");

/** Columns the job's payload needs besides the slot; `moveOn` reads none of them. */
const PAYLOAD_COLUMNS = sql.raw(`s.table_id, s.job_type, s.schedule_type, s.lookback_start, s.lookback_end,
           s.backfill_col, s.backfill_start_date, s.backfill_end_date,
           t.uri, t.location_key, t.format, t.priority, t.target_file_size_mb, t.parquet_v2, t.recipe,
           t.catalog_connection_id,`);

/**
 * The `not_before` of a catalog-managed table's scheduled job until `linked.ts` gives it its
 * catalog reference (decrypted credentials: not made in SQL): no offer picks it before then.
 */
export const CATALOG_HOLD = new Date(Date.UTC(9999, 11, 31));

/**
 * A whole number or a `YYYY-MM-DD` date written into the SQL text, not bound: drizzle's D1 batch
 * cannot bind the parameters of a raw statement, and the two statements run as one batch.
 */
function literal(value: number | string): SQL {
  if (typeof value === "number" && Number.isSafeInteger(value)) return sql.raw(String(value));
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) return sql.raw(`'${value}'`);
  throw new Error(`not a whole number or a date: ${value}`);
}

function dueCte(now: Date, limit: number, payload: boolean): SQL {
  const ms = now.getTime();
  const t = literal(ms);
  const midnight = literal(ms - (ms % DAY_MS));
  const tomorrow = literal(ms - (ms % DAY_MS) + DAY_MS);
  const today = literal(new Date(ms - (ms % DAY_MS)).toISOString().slice(0, 10));
  const yesterday = literal(new Date(ms - (ms % DAY_MS) - DAY_MS).toISOString().slice(0, 10));
  const minutes = sql`(cast(substr(s.run_time_utc, 1, 2) as integer) * 60 + cast(substr(s.run_time_utc, 4, 2) as integer))`;
  const runsToday = sql`(${midnight} + ${minutes} * 60000 <= ${t})`;
  return sql`due as materialized (
    select s.rowid as rid, s.id, s.last_slot, ${payload ? PAYLOAD_COLUMNS : sql``}
           case
             when s.schedule_type = 'daily' and s.run_time_utc is not null
                  and s.lookback_start is not null and s.lookback_end is not null
               then case when ${runsToday} then ${today} else ${yesterday} end
             when s.schedule_type = 'backfill' and s.backfill_col is not null
                  and s.backfill_start_date is not null and s.backfill_end_date is not null
               then 'backfill:' || s.backfill_col || ':' || s.backfill_start_date || '..' || s.backfill_end_date
           end as slot,
           case when s.schedule_type = 'daily' and s.run_time_utc is not null
             then case when ${runsToday} then ${tomorrow} else ${midnight} end + ${minutes} * 60000
           end as next
    -- CROSS JOIN keeps schedules the outer loop, read from the due index; no ORDER BY, so a chunk
    -- never sorts every due schedule (all of them fire in this tick anyway).
    from schedules s cross join tables t on t.id = s.table_id
    where s.enabled = 1 and s.next_run_at <= ${t}
    limit ${literal(limit)}
  )`;
}

/**
 * Platform settings a scheduled job's payload carries, read once per tick: a crunch's mutation
 * interval (null: unset) and the retention of a partition expiration.
 */
export interface FireSettings {
  mutationIntervalMinutes: number | null;
  partitionRetentionDays: number;
}

/**
 * The kind-specific fields of a payload, added to the common ones with `json_set`: crunch gets
 * the table's Parquet v2 choice and the mutation interval when one is set (the agent takes
 * cluster columns from the recipe);
 * partition expiration its retention and the day it counts back from, the slot's date (a
 * backfill's slot is no date: the agent's day then).
 */
function kindFields(payload: SQL, settings: FireSettings): SQL {
  const withV2 = sql`json_set(${payload}, '$.parquet_v2', json(case when due.parquet_v2 then 'true' else 'false' end))`;
  const crunch =
    settings.mutationIntervalMinutes === null
      ? withV2
      : sql`json_set(${withV2}, '$.mutation_interval_minutes', ${literal(settings.mutationIntervalMinutes)})`;
  const expiration = sql`json_set(${payload}, '$.retention_days', ${literal(settings.partitionRetentionDays)},
      '$.as_of', case when due.schedule_type = 'daily' then due.slot end)`;
  return sql`case due.job_type when 'crunch' then ${crunch} when 'partition_expiration' then ${expiration} else ${payload} end`;
}

/**
 * The exclusivity group of each kind a schedule fires, from the kinds' declarations. Every such
 * kind holds its table's scope (`tableScope`), so the locks are the table's.
 */
export type ScheduledRouting = Record<ScheduledJobKind, string | null>;

export function scheduledRouting(kinds: JobKindRegistry): ScheduledRouting {
  const routing = {} as ScheduledRouting;
  for (const kind of SCHEDULED_JOB_KINDS) {
    const exclusive = kinds.of(kind).exclusive;
    if (exclusive && exclusive.grain !== "table")
      throw new Error(`scheduled kind '${kind}' must exclude at table grain; it declares ${exclusive.grain}`);
    routing[kind] = exclusive?.group ?? null;
  }
  return routing;
}

/** A kind's group as SQL text; group names are the declarations' own lower-case words. */
function groupLiteral(group: string | null): SQL {
  if (group === null) return sql.raw("null");
  if (!/^[a-z_]+$/.test(group)) throw new Error(`not a group name: ${group}`);
  return sql.raw(`'${group}'`);
}

/** Queues the jobs of the chunk's unfired slots. */
export function insertJobs(now: Date, limit: number, settings: FireSettings, routing: ScheduledRouting): SQL {
  const t = literal(now.getTime());
  const daily = sql`due.schedule_type = 'daily'`;
  const common = sql`json_object(
      'table_id', due.table_id, 'uri', due.uri, 'format', due.format, 'schedule_id', due.id,
      'date_range', json_object(
        'start', case when ${daily} then date(due.slot, '-' || due.lookback_start || ' days') else due.backfill_start_date end,
        'end', case when ${daily} then date(due.slot, '-' || due.lookback_end || ' days') else due.backfill_end_date end),
      'slot', due.slot, 'target_file_size_mb', due.target_file_size_mb, 'recipe', json(due.recipe))`;
  const payload = kindFields(
    sql`case when ${daily} then ${common} else json_set(${common}, '$.backfill_col', due.backfill_col) end`,
    settings,
  );
  const exclusion = sql.join(
    SCHEDULED_JOB_KINDS.map((kind) => sql`when ${sql.raw(`'${kind}'`)} then ${groupLiteral(routing[kind])}`),
    sql` `,
  );
  return sql`with ${dueCte(now, limit, true)}
    insert into jobs (id, kind, table_id, priority, payload, requires, locations, exclusion, locks,
                      dedupe_key, trigger, schedule_id, not_before, created_at, updated_at)
    select ${jobId}, due.job_type, due.table_id, due.priority, ${payload},
           json_array(lower(substr(due.uri, 1, instr(due.uri, '://') - 1))),
           json_array(due.location_key),
           case due.job_type ${exclusion} end,
           json_array('table:' || due.table_id || '/'),
           'schedule:' || due.id || ':' || due.slot, 'schedule', due.id,
           case when due.catalog_connection_id is null then ${t} else ${literal(CATALOG_HOLD.getTime())} end, ${t}, ${t}
    from due
    where due.slot is not null and due.slot is not due.last_slot
    on conflict (dedupe_key) do nothing`;
}

/** Moves the chunk's schedules on (run after `insertJobs` in the same batch); disarms rows with no slot. */
export function moveOn(now: Date, limit: number): SQL {
  return sql`with ${dueCte(now, limit, false)}
    update schedules
    set last_slot = coalesce(due.slot, schedules.last_slot), next_run_at = due.next, updated_at = ${literal(now.getTime())}
    from due
    where schedules.rowid = due.rid`;
}

/** Whether any schedule is due now: one probe of the due index, so an idle tick writes nothing. */
export async function anyDue(db: Db, now: Date): Promise<boolean> {
  const rows = await db
    .select({ one: sql`1` })
    .from(schedules)
    .innerJoin(lakeTables, eq(lakeTables.id, schedules.tableId))
    .where(and(eq(schedules.enabled, true), lte(schedules.nextRunAt, now)))
    .limit(1);
  return rows.length > 0;
}
