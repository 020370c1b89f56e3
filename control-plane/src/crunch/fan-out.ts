/**
 * Crunch fan-out (issue 20, "Scale out"): a crunch over a date range of a table partitioned by date
 * becomes one job per partition, so any allowed agent takes any of them and a customer adds agents
 * to go faster. Pure: the caller queues the jobs (`crunch/service.ts`, the policy engine).
 *
 * - Fanned out: a range on a date column that is a partition column of the recipe (the backfill
 *   column, else the recipe's date filter column). One job per day of the range; 24 per-hour jobs
 *   per day when the table is partitioned by hour (an `hour` partition column, or timestamp values
 *   in the date column) and its average daily partition size is above the
 *   `hourly_fanout_min_partition_size_gb` setting (GB of 10^9 bytes; `partition-size.ts` says
 *   where the average comes from; unknown: daily jobs).
 * - One job, as before: no range (whole table), no recipe, a date column that is not a partition
 *   column, or a range of more than `MAX_FAN_OUT` days. Hourly jobs fall back to daily ones past
 *   `MAX_FAN_OUT` jobs, so one request never queues more than that.
 * - Each job keeps the request's payload with the day as its range and its `partition`; it locks
 *   that partition only (`kind.ts`). Its dedupe key is the request's plus the partition's label.
 */
import {
  type CrunchKind,
  type CrunchPartitionRef,
  type CrunchPayload,
  crunchPartitionLabel,
} from "@lakesmith/shared/jobs";
import type { Priority } from "../db/schema.ts";
import { jobOnTable, type NewJob } from "../jobs/enqueue.ts";
import { addDays } from "../schedules/timing.ts";

/** The most jobs one crunch request fans out to. */
export const MAX_FAN_OUT = 500;
const GB = 1e9;
const HOURS = 24;

/** What is asked: the whole request's payload, and how its jobs are queued (`NewJob`'s fields). */
export interface CrunchRequest extends Omit<NewJob, "kind" | "payload" | "tableId"> {
  kind: CrunchKind;
  payload: CrunchPayload;
}

export interface FanOutSettings {
  /** The platform setting; null never splits a day into hours. */
  hourly_fanout_min_partition_size_gb: number | null;
  /** The table's average daily partition size in bytes (`averageDailyPartitionBytes`); null: unknown. */
  average_daily_partition_bytes: number | null;
}

/**
 * The partitions a crunch request fans out to, in order; `[]` when it stays one job.
 *
 * @example crunchPartitions(payload, settings) // [{ column: "event_date", value: "2026-01-01" }, ...]
 */
export function crunchPartitions(payload: CrunchPayload, settings: FanOutSettings): CrunchPartitionRef[] {
  const range = payload.date_range;
  const recipe = payload.recipe;
  const column = payload.backfill_col ?? recipe?.date_filter_column ?? null;
  if (!range || !recipe || column === null || !recipe.partition_columns.includes(column)) return [];
  const days: string[] = [];
  for (let day = range.start; day <= range.end && days.length <= MAX_FAN_OUT; day = addDays(day, 1))
    days.push(day);
  if (days.length > MAX_FAN_OUT) return [];
  const hours = hourly(payload, column, settings, days.length);
  return days.flatMap((value) =>
    hours === null
      ? [{ column, value }]
      : Array.from({ length: HOURS }, (_, hour) => ({
          column,
          value,
          hour,
          ...(hours.hourColumn ? { hour_column: hours.hourColumn } : {}),
        })),
  );
}

/**
 * The jobs of a crunch request, ready for the job service (`enqueue`, `enqueueExclusive`, or one
 * batch of `insertStatement`s): one per partition, or the request itself as one job.
 *
 * @example for (const job of crunchJobs(table, { kind: "crunch", payload, trigger: "policy" }, settings)) await jobs.enqueue(job);
 */
export function crunchJobs(
  table: { id: string; priority: Priority },
  request: CrunchRequest,
  settings: FanOutSettings,
): (NewJob & { tableId: string })[] {
  const job = (payload: CrunchPayload, dedupeKey: string | null) =>
    jobOnTable(table, { ...request, payload, dedupeKey });
  const partitions = crunchPartitions(request.payload, settings);
  if (partitions.length === 0) return [job(request.payload, request.dedupeKey ?? null)];
  return partitions.map((partition) =>
    job(
      { ...request.payload, date_range: { start: partition.value, end: partition.value }, partition },
      request.dedupeKey ? `${request.dedupeKey}:${crunchPartitionLabel(partition)}` : null,
    ),
  );
}

/**
 * Whether days split into hours, and where the hour is: null for daily jobs. Hourly needs the
 * setting, a known average above it, an hour in the partitioning, and at most `MAX_FAN_OUT` jobs.
 */
function hourly(
  payload: CrunchPayload,
  dateColumn: string,
  settings: FanOutSettings,
  days: number,
): { hourColumn: string | null } | null {
  const threshold = settings.hourly_fanout_min_partition_size_gb;
  const average = settings.average_daily_partition_bytes;
  if (threshold === null || average === null || average <= threshold * GB) return null;
  if (days * HOURS > MAX_FAN_OUT) return null;
  const pieces = (payload.recipe?.partition_pattern ?? "").split("/");
  const columns = payload.recipe?.partition_columns ?? [];
  const hourColumn = columns.find(
    (c) => c.toLowerCase() === "hour" && (pieces.includes(`${c}=HH`) || pieces.includes(`${c}=H`)),
  );
  if (hourColumn) return { hourColumn };
  if (pieces.includes(`${dateColumn}=YYYY-MM-DD HH:MM:SS`)) return { hourColumn: null };
  return null;
}
