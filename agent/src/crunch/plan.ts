/**
 * Crunch planning: which files of which partitions get rewritten, in which bins. Pure: it sees the
 * table's active files (from the Delta snapshot) and the job's options, and touches nothing.
 *
 * A file is a candidate when it is small (under half the target size), or, for a full crunch, when
 * Lakesmith did not write it (its codec and layout are someone else's choice, so it is probably
 * badly compressed). A partition whose files are all in shape is skipped with the reason, and so is
 * one whose only candidate is a single small file Lakesmith wrote (there is nothing to merge it with).
 * Candidates are split into bins of at most `maxBinBytes` of input, balanced so the last bin is not a
 * sliver: a bin is the unit of download, rewrite and validation, so it bounds disk and memory. A job
 * of a fanned-out crunch (payload `partition`) plans only its own partition's files.
 */
import type { CrunchKind, CrunchPartitionRef, DateRange } from "@lakesmith/shared/jobs";
import { partitionPath } from "./partition-path.ts";

/** The tag Lakesmith puts on files it writes: the settings they were written with. */
export const WRITTEN_BY_TAG = "lakesmith.settings";

/** A file is small below this fraction of the target size. */
export const SMALL_FRACTION = 0.5;

export interface PlanFile {
  path: string;
  size: number;
  partitionValues: Record<string, string | null>;
  stats?: { minValues?: Record<string, unknown>; maxValues?: Record<string, unknown> } | null;
  tags?: Record<string, string> | null;
}

export interface PlanOptions {
  mode: CrunchKind;
  targetBytes: number;
  partitionColumns: readonly string[];
  /** The column `dateRange` applies to: a partition column, or a data column with statistics. */
  dateColumn?: string | null;
  dateRange?: DateRange;
  /** The most input bytes one bin may hold. */
  maxBinBytes: number;
  /**
   * The one partition of a fanned-out job: only its files are planned. Its columns must be
   * partition columns (`partitionRefusal`).
   */
  partition?: CrunchPartitionRef;
}

export interface PartitionPlan<F extends PlanFile = PlanFile> {
  /** `col=value/...` in partition-column order; `""` for an unpartitioned table. */
  partition: string;
  /** Every file of the partition the job's range selects. */
  files: F[];
  /** Bins of candidates; empty when the partition is skipped. */
  bins: F[][];
  /** Why the partition is skipped; absent when it has bins. */
  skipReason?: string;
}

export interface CrunchPlan<F extends PlanFile = PlanFile> {
  partitions: PartitionPlan<F>[];
  /** Files the range selected, across partitions. */
  selectedFiles: number;
}

/** Plans a crunch or optimize pass over `files`; partitions come out in key order. */
export function planCrunch<F extends PlanFile>(files: readonly F[], options: PlanOptions): CrunchPlan<F> {
  const byPartition = new Map<string, F[]>();
  let selectedFiles = 0;
  for (const file of files) {
    if (!inRange(file, options) || (options.partition && !inPartition(file, options.partition))) continue;
    selectedFiles++;
    const key = partitionPath(file.partitionValues, options.partitionColumns);
    const list = byPartition.get(key);
    if (list) list.push(file);
    else byPartition.set(key, [file]);
  }
  const partitions = [...byPartition.keys()].sort().map((partition) => {
    const partFiles = (byPartition.get(partition) ?? []).sort((a, b) => a.path.localeCompare(b.path));
    return planPartition(partition, partFiles, options);
  });
  return { partitions, selectedFiles };
}

function planPartition<F extends PlanFile>(
  partition: string,
  files: F[],
  options: PlanOptions,
): PartitionPlan<F> {
  const small = (f: PlanFile) => f.size < options.targetBytes * SMALL_FRACTION;
  const ours = (f: PlanFile) => Boolean(f.tags?.[WRITTEN_BY_TAG]);
  const candidates = files.filter((f) => small(f) || (options.mode === "crunch" && !ours(f)));
  if (candidates.length === 0) return { partition, files, bins: [], skipReason: "already in shape" };
  if (candidates.length === 1 && (options.mode === "optimize" || ours(candidates[0] as F)))
    return { partition, files, bins: [], skipReason: "one small file and nothing to merge it with" };
  return { partition, files, bins: balancedBins(candidates, options.maxBinBytes) };
}

/** Splits files (in order) into the fewest bins of at most `maxBytes`, each near the average. */
export function balancedBins<F extends { size: number }>(files: readonly F[], maxBytes: number): F[][] {
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const count = Math.max(1, Math.ceil(total / maxBytes));
  const goal = total / count;
  const bins: F[][] = [];
  let bin: F[] = [];
  let bytes = 0;
  for (const file of files) {
    if (bin.length > 0 && (bytes + file.size > maxBytes || (bytes >= goal && bins.length < count - 1))) {
      bins.push(bin);
      bin = [];
      bytes = 0;
    }
    bin.push(file);
    bytes += file.size;
  }
  if (bin.length > 0) bins.push(bin);
  return bins;
}

/**
 * Why a fanned-out job can't be planned on this table: its partition's columns are not (or no
 * longer) partition columns, so its files can't be told apart from other partitions' (the job's
 * lock covers its partition only). Null when it can.
 */
export function partitionRefusal(
  partition: CrunchPartitionRef,
  partitionColumns: readonly string[],
): string | null {
  const missing = [partition.column, partition.hour_column].filter(
    (c): c is string => c !== undefined && !partitionColumns.includes(c),
  );
  if (missing.length === 0) return null;
  return `the job covers one partition, but the table is not partitioned by ${missing.join(", ")} (partition columns: ${partitionColumns.join(", ") || "none"}); trigger the crunch again`;
}

/**
 * Whether a file is in the job's partition: its date column's day, and the hour (of the hour
 * column, else of the date column's timestamp value) when the job is hourly.
 */
function inPartition(file: PlanFile, partition: CrunchPartitionRef): boolean {
  const value = file.partitionValues[partition.column];
  if (value === null || value === undefined || dayOf(value) !== partition.value) return false;
  if (partition.hour === undefined) return true;
  const hour =
    partition.hour_column === undefined ? value.slice(11, 13) : file.partitionValues[partition.hour_column];
  return hour !== null && hour !== undefined && /^\d{1,2}$/.test(hour) && Number(hour) === partition.hour;
}

/** The `YYYY-MM-DD` of a date partition value (`YYYY-MM-DD...` or `YYYYMMDD`). */
function dayOf(value: string): string {
  return /^\d{8}$/.test(value)
    ? `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`
    : value.slice(0, 10);
}

/**
 * Whether the job's date range selects the file. On a partition column the value's date part is
 * compared (`YYYY-MM-DD...` or `YYYYMMDD`); on a data column the file's min/max statistics must overlap the range. A file without
 * statistics is selected: rewriting a file outside the range costs work, never data.
 */
function inRange(file: PlanFile, options: PlanOptions): boolean {
  const { dateColumn, dateRange } = options;
  if (!dateRange || !dateColumn) return true;
  if (options.partitionColumns.includes(dateColumn)) {
    const value = file.partitionValues[dateColumn];
    if (value === null || value === undefined) return false;
    const day = dayOf(value);
    return day >= dateRange.start && day <= dateRange.end;
  }
  const min = file.stats?.minValues?.[dateColumn];
  const max = file.stats?.maxValues?.[dateColumn];
  if (typeof min !== "string" || typeof max !== "string") return true;
  return min.slice(0, 10) <= dateRange.end && max.slice(0, 10) >= dateRange.start;
}
