/**
 * What onboarding reports about a table (its recipe), inferred from facts the inspection gathered:
 * the partition columns with the values seen in the log, and a profile of each data column measured
 * on a bounded sample. Pure, so every rule is tested on its own.
 *
 * - Partition pattern: per column, the shape of its values (`date=YYYY-MM-DD`, `year=YYYY/month=MM`,
 *   `region=<value>`), joined with `/`; null for an unpartitioned table.
 * - Date filter column: a partition column holding dates, else a date or timestamp data column, else
 *   a text column whose sampled values are all dates (tables written from CSV often keep dates as
 *   text); null when there is none.
 * - Enumerated columns: few distinct values (at most `ENUM_MAX_DISTINCT`, and rare relative to the
 *   sampled rows), the ones a sort or a dictionary packs best.
 * - Cluster columns: the sort order a crunch tries first: up to two enumerated columns, fewest values
 *   first, then the date filter column when it is a data column. Crunch measures it against no sort
 *   on a sample before using it, so a poor guess costs nothing but a trial.
 */
import type { OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import type { ColumnProfile } from "../engine/profile.ts";

export const ENUM_MAX_DISTINCT = 100;
/** An enumerated column's distinct values are at most this fraction of its non-null sampled values. */
export const ENUM_MAX_FRACTION = 0.1;
export const MAX_CLUSTER_COLUMNS = 3;

export interface PartitionFacts {
  name: string;
  /** The column's Delta type (`string`, `date`, `integer`, ...). */
  type: string;
  /** Distinct values seen in the log (a bounded set); null is a null partition. */
  values: readonly (string | null)[];
}

export interface ColumnFacts {
  name: string;
  /** The column's Delta type; nested types (`struct`, `array`, `map`) are never chosen. */
  type: string;
  /** Approximate distinct non-null values in the sample. */
  distinct: number;
  /** Non-null values in the sample. */
  nonNull: number;
  /** Sampled minimum and maximum as text, where the type has an order. */
  min?: string | null;
  max?: string | null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}/;
const COMPACT_DATE = /^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/;
const CALENDAR_PARTS: Record<string, { digits: string; max: number }> = {
  year: { digits: "YYYY", max: 9999 },
  month: { digits: "MM", max: 12 },
  day: { digits: "DD", max: 31 },
  hour: { digits: "HH", max: 23 },
};

/** Facts from the engine's column profiles; `deltaTypeOf` names each column's Delta type. */
export function columnFacts(
  profiles: readonly ColumnProfile[],
  deltaTypeOf: (column: string) => string,
): ColumnFacts[] {
  return profiles.map((p) => ({
    name: p.name,
    type: deltaTypeOf(p.name),
    distinct: p.approxDistinct,
    nonNull: Math.round(p.sampleRows * (1 - p.nullFraction)),
    min: p.min,
    max: p.max,
  }));
}

export function inferRecipe(
  partitions: readonly PartitionFacts[],
  columns: readonly ColumnFacts[],
): OnboardingRecipeResult {
  const partitionDate = partitions.find((p) => isDateLike(p.type, p.values));
  const dataDate =
    columns.find((c) => c.type === "date" || c.type === "timestamp" || c.type === "timestamp_ntz") ??
    columns.find((c) => c.type === "string" && c.nonNull > 0 && isDateText(c.min) && isDateText(c.max));
  const dateColumn = partitionDate?.name ?? dataDate?.name ?? null;

  const enumerated = columns
    .filter((c) => isScalar(c.type) && c.nonNull > 0 && c.distinct <= ENUM_MAX_DISTINCT)
    .filter((c) => c.distinct <= Math.max(2, c.nonNull * ENUM_MAX_FRACTION))
    .sort((a, b) => a.distinct - b.distinct || a.name.localeCompare(b.name));

  const cluster = enumerated
    .filter((c) => c.distinct > 1 && c.name !== dateColumn)
    .slice(0, 2)
    .map((c) => c.name);
  if (dataDate && !partitionDate) cluster.push(dataDate.name);

  return {
    partition_columns: partitions.map((p) => p.name),
    partition_pattern: partitions.length ? partitions.map(patternOf).join("/") : null,
    date_filter_column: dateColumn,
    cluster_columns: cluster.slice(0, MAX_CLUSTER_COLUMNS),
    enumerated_columns: enumerated.map((c) => c.name),
  };
}

/** One partition column's piece of the pattern, from its type, name and values. */
export function patternOf(partition: PartitionFacts): string {
  const values = partition.values.filter((v): v is string => v !== null);
  const all = (re: RegExp) => values.length > 0 && values.every((v) => re.test(v));
  if (partition.type === "date" || all(DATE)) return `${partition.name}=YYYY-MM-DD`;
  if (partition.type.startsWith("timestamp") || all(TIMESTAMP))
    return `${partition.name}=YYYY-MM-DD HH:MM:SS`;
  if (all(COMPACT_DATE)) return `${partition.name}=YYYYMMDD`;
  const part = CALENDAR_PARTS[partition.name.toLowerCase()];
  if (part && all(/^\d+$/) && values.every((v) => Number(v) <= part.max)) {
    const padded = values.every((v) => v.length === part.digits.length);
    return `${partition.name}=${padded ? part.digits : part.digits[0]}`;
  }
  if (all(/^-?\d+$/)) return `${partition.name}=<integer>`;
  return `${partition.name}=<value>`;
}

function isDateLike(type: string, values: readonly (string | null)[]): boolean {
  if (type === "date" || type.startsWith("timestamp")) return true;
  const present = values.filter((v): v is string => v !== null);
  return present.length > 0 && present.every((v) => DATE.test(v) || COMPACT_DATE.test(v));
}

function isDateText(value: string | null | undefined): boolean {
  return typeof value === "string" && (DATE.test(value) || TIMESTAMP.test(value));
}

function isScalar(type: string): boolean {
  return !["struct", "array", "map", "binary"].includes(type) && !type.startsWith("{");
}
