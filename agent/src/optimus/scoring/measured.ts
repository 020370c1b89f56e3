/**
 * The workload replayed against the table's real files: the skipping an engine gets today from the
 * files' statistics, overall and per UTC day of the workload. Pure.
 *
 * Rules:
 * - A partition column's value is both the file's min and max in it (a null partition: only
 *   nulls). Any other column's bounds are the file's statistics (`TableFile.stats` min/max; a null
 *   count equal to the file's rows means only nulls); a file without statistics for a column, or
 *   with one that can't be read in the column's type, can't be skipped on it.
 * - Timestamp maxima are raised by 999 µs: Delta statistics keep milliseconds, cut down.
 * - A file weighs its rows where every file states them, else its bytes.
 * - Per day, each set weighs its volume of that day (bytes, or queries where the day logged none).
 * - Null, overall and per day, where no file has a bound for any filtered column.
 */
import type { TableFile } from "../../formats/index.ts";
import { type Bounds, type FileBounds, skipFractions, type Volume, weighted } from "./replay.ts";
import { readValue, type Value, type ValueKind } from "./values.ts";
import type { TypedFilterSet } from "./workload.ts";

export interface MeasuredSkipping {
  overall: number | null;
  days: (Volume & { day: string; measured_skip_fraction: number | null })[];
}

export function measureSkipping(
  files: readonly TableFile[],
  partitionColumns: readonly string[],
  columns: ReadonlyMap<string, ValueKind>,
  sets: readonly TypedFilterSet[],
): MeasuredSkipping {
  const bounds = realBounds(files, partitionColumns, columns);
  const known = bounds.some((f) => Object.keys(f.columns).length > 0);
  const fractions = known
    ? skipFractions(
        sets.map((s) => s.predicates),
        bounds,
      )
    : [];
  const dayNames = [...new Set(sets.flatMap((s) => Object.keys(s.days)))].sort();
  return {
    overall: known
      ? weighted(
          fractions,
          sets.map((s) => s.volume),
        )
      : null,
    days: dayNames.map((day) => {
      const volumes = sets.map((s) => s.days[day] ?? { queries: 0, bytes_scanned: 0 });
      return {
        day,
        queries: volumes.reduce((n, v) => n + v.queries, 0),
        bytes_scanned: volumes.reduce((n, v) => n + v.bytes_scanned, 0),
        measured_skip_fraction: known ? weighted(fractions, volumes) : null,
      };
    }),
  };
}

/** The files as the replay sees them; a column without a known bound is left out of `columns`. */
export function realBounds(
  files: readonly TableFile[],
  partitionColumns: readonly string[],
  columns: ReadonlyMap<string, ValueKind>,
): FileBounds[] {
  const byRows = files.every((f) => f.rows !== undefined);
  return files.map((file) => {
    const out: Record<string, Bounds> = {};
    const stats = file.stats as
      | (TableFile["stats"] & { nullCount?: Record<string, unknown>; numRecords?: unknown })
      | null
      | undefined;
    for (const [column, kind] of columns) {
      if (partitionColumns.includes(column) && column in file.partitionValues) {
        const value = file.partitionValues[column];
        if (value === null || value === undefined) out[column] = { onlyNulls: true };
        else {
          const v = readValue(kind, value);
          if (v !== undefined) out[column] = { min: v, max: v };
        }
        continue;
      }
      const nulls = stats?.nullCount?.[column];
      if (typeof nulls === "number" && file.rows !== undefined && nulls === file.rows && nulls > 0) {
        out[column] = { onlyNulls: true };
        continue;
      }
      const min = readValue(kind, stats?.minValues?.[column]);
      const max = widen(kind, readValue(kind, stats?.maxValues?.[column]));
      if (min !== undefined || max !== undefined) out[column] = { min, max };
    }
    return { weight: byRows ? (file.rows as number) : file.size, columns: out };
  });
}

function widen(kind: ValueKind, max: Value | undefined): Value | undefined {
  return kind === "timestamp" && typeof max === "bigint" ? max + 999n : max;
}
