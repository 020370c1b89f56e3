/**
 * The rewrite settings of a crunch: measured on a sample of the first bin (`engine/tune.ts`), or
 * reused from the table's latest crunch that measured them while they still hold
 * (`reuseSettings`), or fixed for an optimize pass. Also how they are named on the files written
 * with them (`settingsTag`) and what a reader is told when the cluster columns were not applied.
 */
import type { CrunchSettings, Layout } from "@lakesmith/shared/jobs";
import {
  clusterNotApplied,
  describeSort,
  type Engine,
  reuseSettings,
  sortSettingsOf,
} from "../engine/index.ts";
import type { Table, TableFile } from "../formats/index.ts";
import { sum } from "../numbers.ts";

/** The settings of an optimize pass: bin-packing with DuckDB's defaults and zstd, no sort, no trials. */
export const OPTIMIZE_SETTINGS: CrunchSettings = {
  compression: "zstd",
  compression_level: null,
  row_group_size: 122_880,
  sort_columns: [],
  parquet_version: "v1",
  reason: "optimize pass: small files merged with zstd at default settings, without re-sorting or trials",
  trials: [],
};

/** What settings are measured for (or an earlier measurement must have been made for). */
export type Measure = Omit<Parameters<typeof reuseSettings>[1], "binRows" | "threads" | "memoryLimitMb">;

/**
 * The settings of this table's latest crunch that measured them, as `reuseSettings` adapts them to
 * `bin`; null when there is none, it no longer holds, or the bin's row count is not in the metadata.
 */
export async function reuseEarlier(
  engine: Engine,
  table: Table,
  bin: readonly TableFile[],
  measure: Measure,
): Promise<CrunchSettings | null> {
  const earlier = table.measuredSettings();
  if (!earlier) return null;
  const rows = bin.map((f) => f.rows);
  if (rows.some((n) => n === undefined)) return null;
  return reuseSettings(
    { settings: earlier.settings, version: earlier.version },
    {
      ...measure,
      binRows: sum(rows as number[]),
      threads: await engine.threads(),
      memoryLimitMb: engine.memoryLimitMb,
    },
  );
}

/**
 * The settings as the short tag files written with them carry (`zstd:3;rg=122880;sort=none;v1`; a
 * Z-order reads `sort=zorder(a,b)`).
 */
export function settingsTag(s: CrunchSettings): string {
  return [
    `${s.compression}${s.compression_level === null ? "" : `:${s.compression_level}`}`,
    `rg=${s.row_group_size}`,
    `sort=${describeSort(s)}`,
    ...(s.dictionary_encoding === false
      ? ["plain-encoding"]
      : s.dictionary_size_limit !== undefined
        ? [`dict=${s.dictionary_size_limit}`]
        : []),
    s.parquet_version,
  ].join(";");
}

/** What a reader is told when the job's layout was not applied (an optimize pass never sorts). */
export function layoutNotApplied(layout: Layout, why: string): string {
  return `layout ${describeSort(sortSettingsOf(layout))} not applied (files left unsorted): ${why}`;
}

/** Why the chosen settings do not sort by the cluster columns, when they don't; null when they do. */
export function clusterNote(cluster: readonly string[], settings: CrunchSettings): string | null {
  if (cluster.length === 0) return null;
  const sorted = settings.sort_columns;
  if (sorted.length >= cluster.length && cluster.every((c, i) => sorted[i] === c)) return null;
  // The tuner states a refusal first in its reason; settings reused from an earlier crunch repeat it.
  const refusal = /cluster columns [^;]* not applied[^;]*/.exec(settings.reason)?.[0];
  return (
    refusal ??
    clusterNotApplied(
      cluster,
      `the settings chosen sort by ${sorted.join(", ") || "nothing"}: ${settings.reason}`,
    )
  );
}
