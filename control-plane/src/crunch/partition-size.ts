/**
 * A table's average daily partition size, which decides hourly fan-out (`fan-out.ts`). It comes from
 * what the table's own crunches measured: every crunch result lists each partition it looked at
 * with its bytes after the job (`CrunchResult.partitions`, crunched or skipped alike).
 *
 * - Read: the table's latest `RECENT_JOBS` succeeded crunch and optimize jobs, newest first; a
 *   partition's size is its newest figure. Partitions are summed per day of the date column (24
 *   hourly partitions make one day) and the days averaged.
 * - Null when no crunch of the table measured a partition of that column yet: the first crunch of
 *   a table fans out daily, and hourly once a crunch has shown its days to be large.
 * - Bounds: one read of at most `RECENT_JOBS` rows through the `(table_id, kind, created_at)` index.
 */
import { CRUNCH_KINDS, type CrunchPayload, CrunchResultSchema } from "@lakesmith/shared/jobs";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { jobs } from "../db/schema.ts";
import type { FanOutSettings } from "./fan-out.ts";

/** How many of the table's latest crunches are read. */
export const RECENT_JOBS = 100;

/**
 * The fan-out settings of a crunch request on a table: the hourly setting (the configuration's
 * `hourly_fanout_min_partition_size_gb`) and, only when it is set, the table's measured average.
 *
 * @example crunchJobs(table, request, await fanOutSettings(db, values.hourly_fanout_min_partition_size_gb, table.id, payload))
 */
export async function fanOutSettings(
  db: Db,
  hourlyFanoutMinPartitionSizeGb: number | null,
  tableId: string,
  payload: CrunchPayload,
): Promise<FanOutSettings> {
  const dateColumn = payload.backfill_col ?? payload.recipe?.date_filter_column ?? null;
  return {
    hourly_fanout_min_partition_size_gb: hourlyFanoutMinPartitionSizeGb,
    average_daily_partition_bytes:
      hourlyFanoutMinPartitionSizeGb === null || dateColumn === null
        ? null
        : await averageDailyPartitionBytes(db, tableId, dateColumn),
  };
}

/**
 * Bytes per day of `dateColumn`, averaged over the days the table's recent crunches measured; null
 * when none did.
 *
 * @example await averageDailyPartitionBytes(db, table.id, "event_date") // 41_300_000_000
 */
export async function averageDailyPartitionBytes(
  db: Db,
  tableId: string,
  dateColumn: string,
): Promise<number | null> {
  const rows = await db
    .select({ result: jobs.result })
    .from(jobs)
    .where(
      and(eq(jobs.tableId, tableId), inArray(jobs.kind, [...CRUNCH_KINDS]), eq(jobs.status, "succeeded")),
    )
    .orderBy(desc(jobs.createdAt))
    .limit(RECENT_JOBS);
  const sizes = new Map<string, number>();
  for (const row of rows) {
    const parsed = CrunchResultSchema.safeParse(row.result);
    if (!parsed.success) continue;
    for (const p of parsed.data.partitions)
      if (!sizes.has(p.partition)) sizes.set(p.partition, p.bytes_after);
  }
  return dailyAverage(sizes, dateColumn);
}

/**
 * The mean per day of partition sizes keyed by their labels (`col=value/...`); partitions without
 * a date in `dateColumn` are left out.
 *
 * @example dailyAverage(new Map([["d=2026-01-01/hour=00", 5], ["d=2026-01-01/hour=01", 7]]), "d") // 12
 */
export function dailyAverage(sizes: ReadonlyMap<string, number>, dateColumn: string): number | null {
  const perDay = new Map<string, number>();
  for (const [label, bytes] of sizes) {
    const day = dayOf(label, dateColumn);
    if (day !== null) perDay.set(day, (perDay.get(day) ?? 0) + bytes);
  }
  if (perDay.size === 0) return null;
  let total = 0;
  for (const bytes of perDay.values()) total += bytes;
  return total / perDay.size;
}

/** The `YYYY-MM-DD` of the label's `dateColumn` value (ISO, timestamp or `YYYYMMDD`), if any. */
function dayOf(label: string, dateColumn: string): string | null {
  const prefix = `${dateColumn}=`;
  const piece = label.split("/").find((p) => p.startsWith(prefix));
  const value = piece?.slice(prefix.length) ?? "";
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  if (/^\d{8}$/.test(value)) return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
  return null;
}
