/**
 * The calendar date of each value of a date partition column, or why the column is not one:
 *
 * - `date`: the value itself (`2026-01-31`).
 * - `timestamp`, `timestamp_ntz`: its date part (`2026-01-31 12:00:00` → `2026-01-31`); an ISO value
 *   with a zone (`2026-01-31T23:30:00-02:00`) is moved to UTC first.
 * - `string`: only when every value is a `YYYY-MM-DD` calendar date (tables loaded from CSV keep
 *   dates as text); the first value that is not one is named.
 *
 * Null partition values (null, or `""`, which Delta reads as null) have no date and never expire.
 * Pure: it sees the schema, the partition columns and the live files' values.
 *
 * @example
 * const dates = partitionDates(snapshot.metadata, snapshot.files, "event_date");
 * if ("reason" in dates) return cannotRun(dates.reason);
 * dates.dateOf.get("2026-01-31"); // "2026-01-31"
 */
import { IsoDateSchema } from "@lakesmith/shared/jobs";
import type { AddFile, Metadata } from "../delta/index.ts";

export type PartitionDates = { dateOf: Map<string, string> } | { reason: string };

const DATE_PART = /^(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DAY_MS = 86_400_000;

/** The date of every distinct non-null value of `column` among `files`, or why there is none. */
export function partitionDates(
  metadata: Pick<Metadata, "schema" | "partitionColumns">,
  files: readonly Pick<AddFile, "partitionValues">[],
  column: string,
): PartitionDates {
  if (!metadata.partitionColumns.includes(column))
    return {
      reason:
        metadata.partitionColumns.length === 0
          ? `'${column}' is not a partition column: the table is not partitioned`
          : `'${column}' is not a partition column (the table is partitioned by ${metadata.partitionColumns.join(", ")})`,
    };
  const field = metadata.schema.fields.find((f) => f.name === column);
  const type = field?.type.kind === "primitive" ? field.type.name : (field?.type.kind ?? "unknown");
  if (type !== "date" && type !== "timestamp" && type !== "timestamp_ntz" && type !== "string")
    return { reason: `partition column '${column}' has type ${type}, not a date, timestamp or date text` };

  const dateOf = new Map<string, string>();
  for (const file of files) {
    const value = file.partitionValues[column];
    if (value == null || value === "" || dateOf.has(value)) continue;
    const date = type === "string" || type === "date" ? calendarDate(value) : timestampDate(value);
    if (date === undefined)
      return {
        reason:
          type === "string"
            ? `partition column '${column}' holds text that is not a YYYY-MM-DD date: '${value}'`
            : `partition column '${column}' (${type}) holds a value the agent can't read as a date: '${value}'`,
      };
    dateOf.set(value, date);
  }
  return { dateOf };
}

/** Whether a partition value is null for Delta: such a partition has no date and never expires. */
export function isNullPartition(value: string | null | undefined): boolean {
  return value == null || value === "";
}

/** `as_of - days`, as `YYYY-MM-DD` (UTC calendar arithmetic). */
export function daysBefore(asOf: string, days: number): string {
  return new Date(Date.parse(`${asOf}T00:00:00Z`) - days * DAY_MS).toISOString().slice(0, 10);
}

/** The UTC date of an instant, as `YYYY-MM-DD`. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function calendarDate(value: string): string | undefined {
  return IsoDateSchema.safeParse(value).success ? value : undefined;
}

function timestampDate(value: string): string | undefined {
  const match = DATE_PART.exec(value.trim());
  if (!match || calendarDate(match[1] as string) === undefined) return undefined;
  if (!match[2] || match[2] === "Z") return match[1];
  const at = Date.parse(value.trim().replace(" ", "T"));
  return Number.isNaN(at) ? undefined : utcDate(at);
}
