/**
 * Payloads and results of the jobs the control plane enqueues for tables: onboarding inspection,
 * and the crunch, vacuum and partition-expiration runs its schedules fire. The control plane
 * builds them; the agent parses them with these schemas before it starts work.
 *
 * @example
 * const payload = ScheduledJobPayloadSchema.parse(offer.payload);
 * console.log(payload.date_range.start, payload.date_range.end);
 */
import { z } from "zod";
import { LocationError, parseLocation } from "./locations.ts";

export const ONBOARDING_KIND = "onboarding";
/** Job kinds a table schedule can fire; the schedule's `job_type` is the job's kind. */
export const SCHEDULED_JOB_KINDS = ["crunch", "vacuum", "partition_expiration"] as const;
export type ScheduledJobKind = (typeof SCHEDULED_JOB_KINDS)[number];

/** A calendar date, `YYYY-MM-DD`, that exists (no 2026-02-30). */
export const IsoDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "a date as YYYY-MM-DD", abort: true })
  .refine((s) => {
    const at = Date.parse(`${s}T00:00:00Z`);
    return !Number.isNaN(at) && new Date(at).toISOString().startsWith(s);
  }, "not a calendar date");

/** Inclusive range of partition dates a job works on; `start` is never after `end`. */
export const DateRangeSchema = z
  .object({ start: IsoDateSchema, end: IsoDateSchema })
  .refine((r) => r.start <= r.end, { message: "start must not be after end", path: ["start"] });
export type DateRange = z.infer<typeof DateRangeSchema>;

/**
 * The Iceberg REST catalog a table is committed through (Polaris, Nessie, Unity's Iceberg endpoint):
 * with one, the agent loads the table's metadata from the catalog and commits through it instead
 * of writing metadata files. Credentials travel only inside a job's payload.
 */
export const IcebergRestCatalogRefSchema = z.object({
  type: z.literal("iceberg_rest"),
  /** The catalog's base URL, the part before `/v1/...`. */
  uri: z.string().url(),
  warehouse: z.string().min(1).optional(),
  namespace: z.array(z.string().min(1)).min(1),
  table: z.string().min(1),
  /** A static bearer token, or OAuth client credentials (token URL defaults to `<uri>/v1/oauth/tokens`). */
  token: z.string().min(1).optional(),
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional(),
  token_url: z.string().url().optional(),
  scope: z.string().min(1).optional(),
});
export type IcebergRestCatalogRef = z.infer<typeof IcebergRestCatalogRefSchema>;

/**
 * The Hive Metastore a table is registered in: the agent reads the table (and its partitions) from
 * the metastore and commits by swapping locations there (a Hive table's partitions; an Iceberg
 * table's `metadata_location`), under a metastore lock. The password travels only inside a job's
 * payload.
 */
export const HiveMetastoreTableRefSchema = z.object({
  type: z.literal("hive_metastore"),
  /** `thrift://host:port`. */
  uri: z.string().regex(/^thrift:\/\/[^/:]+(:\d+)?\/?$/, "a thrift://host:port URI"),
  database: z.string().min(1),
  table: z.string().min(1),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  /** The metastore's Thrift transport; default buffered. */
  transport: z.enum(["buffered", "framed"]).optional(),
});
export type HiveMetastoreTableRef = z.infer<typeof HiveMetastoreTableRefSchema>;

/** Where a catalog-managed table is loaded from and committed through. */
export const CatalogRefSchema = z.discriminatedUnion("type", [
  IcebergRestCatalogRefSchema,
  HiveMetastoreTableRefSchema,
]);
export type CatalogRef = z.infer<typeof CatalogRefSchema>;

const tableRef = {
  table_id: z.string().min(1),
  /** `<scheme>://<bucket>/<path>` of the table's data. */
  uri: z.string().min(1),
  format: z.enum(["delta", "iceberg", "hive"]),
  /** Tables a catalog tracks (an Iceberg REST catalog, a Hive Metastore): where to load and commit them. */
  catalog: CatalogRefSchema.optional(),
};

/** Onboarding: inspect the table at `uri` and report its recipe. */
export const OnboardingPayloadSchema = z.object(tableRef);
export type OnboardingPayload = z.infer<typeof OnboardingPayloadSchema>;

/**
 * What onboarding found, reported as the job's `result` on success; the control plane stores it as
 * the table's recipe. A failure is reported as the job's `error` (the reason shown to the user).
 */
export const OnboardingRecipeSchema = z.object({
  partition_columns: z.array(z.string()),
  /** How partition values are laid out, for example `date=YYYY-MM-DD/hour=HH`; null if unpartitioned. */
  partition_pattern: z.string().nullable(),
  /** The column date ranges filter on; null when the table has none. */
  date_filter_column: z.string().nullable(),
  cluster_columns: z.array(z.string()),
  /** Low-cardinality columns whose values were enumerated. */
  enumerated_columns: z.array(z.string()),
});
export type OnboardingRecipeResult = z.infer<typeof OnboardingRecipeSchema>;

/**
 * A crunch, vacuum or partition-expiration job fired by a schedule. Daily schedules cover
 * `[slot - lookback_start, slot - lookback_end]`, where the slot is the UTC date the run belongs
 * to; a backfill covers its configured dates on `backfill_col`, once.
 */
export const ScheduledJobPayloadSchema = z.object({
  ...tableRef,
  schedule_id: z.string().min(1),
  date_range: DateRangeSchema,
  /** Present on backfill runs only: the partition column the range applies to. */
  backfill_col: z.string().min(1).optional(),
  /** The slot this run belongs to (`YYYY-MM-DD` for daily runs); part of the job's dedupe key. */
  slot: z.string().min(1).optional(),
  /** The table's target file size, for crunch. */
  target_file_size_mb: z.number().int().positive().optional(),
  /** What onboarding found (partition pattern, date filter column, ...), so the agent need not look again. */
  recipe: OnboardingRecipeSchema.nullable().optional(),
});
export type ScheduledJobPayload = z.infer<typeof ScheduledJobPayloadSchema>;

/** The idempotency key of a schedule's run: one job per schedule and slot, ever. */
export function scheduleDedupeKey(scheduleId: string, slot: string): string {
  return `schedule:${scheduleId}:${slot}`;
}

/**
 * The slot of a backfill run: its column and range, so a backfill fires once per range and fires
 * again only when its range or column is changed.
 *
 * @example backfillSlot("event_date", "2026-01-01", "2026-01-31") // "backfill:event_date:2026-01-01..2026-01-31"
 */
export function backfillSlot(column: string, start: string, end: string): string {
  return `backfill:${column}:${start}..${end}`;
}

/**
 * The URI scheme a job on a table requires of its agent (agents announce the schemes their allow
 * list permits as capabilities): the canonical one of `parseLocation`, so every spelling of a store
 * asks for the capability its agents announce; a URI it can't read keeps its own scheme.
 *
 * @example uriScheme("s3://lake/sales/orders") // "s3"
 * @example uriScheme("abfss://raw@acct.dfs.core.windows.net/t") // "azure"
 */
export function uriScheme(uri: string): string {
  try {
    return parseLocation(uri).scheme;
  } catch (err) {
    if (!(err instanceof LocationError)) throw err;
    return uri.slice(0, Math.max(0, uri.indexOf("://"))).toLowerCase();
  }
}

/** The two crunch passes: `crunch` rewrites (re-sorts, recompresses); `optimize` only bin-packs. */
export const CRUNCH_KINDS = ["crunch", "optimize"] as const;
export type CrunchKind = (typeof CRUNCH_KINDS)[number];

/** Default target file size when neither the table nor the trigger sets one. */
export const DEFAULT_TARGET_FILE_SIZE_MB = 128;

export const LAYOUT_TYPES = ["linear", "zorder"] as const;

/**
 * How a crunch lays rows out in the files it writes. `linear` sorts by the columns in order (the
 * first column clusters best, later ones only within its runs); `zorder` sorts by a Z-value, the
 * interleaved bits of an order-preserving key of each of 2-4 columns, so that each column clusters
 * about as well as the others and a filter on any one of them (or several) skips files.
 */
export const LayoutSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("linear"), columns: z.array(z.string().min(1)).min(1).max(8) }),
  z.object({
    type: z.literal("zorder"),
    columns: z
      .array(z.string().min(1))
      .min(2)
      .max(4)
      .refine((c) => new Set(c).size === c.length, "Z-order columns must be distinct"),
  }),
]);
export type Layout = z.infer<typeof LayoutSchema>;

/**
 * The one partition a fanned-out crunch job works on (`control-plane/src/crunch/fan-out.ts`): the
 * day `value` of the date partition column `column` and, for an hourly job, its `hour`, held in
 * `hour_column` (a `hour=HH` partition column) or, without it, in the date column's own timestamp
 * values. The job plans and commits only this partition's files, and locks only it.
 */
export const CrunchPartitionRefSchema = z
  .object({
    column: z.string().min(1),
    value: IsoDateSchema,
    hour: z.number().int().min(0).max(23).optional(),
    hour_column: z.string().min(1).optional(),
  })
  .refine((p) => p.hour_column === undefined || p.hour !== undefined, {
    message: "hour_column needs an hour",
    path: ["hour"],
  });
export type CrunchPartitionRef = z.infer<typeof CrunchPartitionRefSchema>;

/**
 * The partition's label in locks, dedupe keys and views: `col=YYYY-MM-DD`, and `/hour=HH` for an
 * hourly job, whichever column holds the hour.
 *
 * @example crunchPartitionLabel({ column: "event_date", value: "2026-01-02", hour: 5 }) // "event_date=2026-01-02/hour=05"
 */
export function crunchPartitionLabel(partition: CrunchPartitionRef): string {
  const day = `${partition.column}=${partition.value}`;
  return partition.hour === undefined ? day : `${day}/hour=${String(partition.hour).padStart(2, "0")}`;
}

/**
 * A crunch or optimize job: a manual trigger (`POST /tables/{id}/crunch`) or a schedule's run.
 * `date_range` selects the partitions (or, for an unpartitioned table, the files whose statistics
 * overlap it) of `date_column`, which defaults to the recipe's date filter column; without a range
 * the whole table is worked on.
 */
export const CrunchPayloadSchema = z.object({
  ...tableRef,
  schedule_id: z.string().min(1).optional(),
  slot: z.string().min(1).optional(),
  date_range: DateRangeSchema.optional(),
  /** Backfill runs name the column their range applies to. */
  backfill_col: z.string().min(1).optional(),
  target_file_size_mb: z.number().int().positive().optional(),
  /** Sort order of the rewrite (crunch only); defaults to the recipe's cluster columns. */
  cluster_columns: z.array(z.string().min(1)).optional(),
  /** The rewrite's layout (crunch only): wins over `cluster_columns` and the recipe's, and over tuning. */
  layout: LayoutSchema.optional(),
  recipe: OnboardingRecipeSchema.nullable().optional(),
  /**
   * With a value, a crunch whose table had a commit from another writer within this many minutes
   * runs as the lighter optimize pass instead (the mutation interval setting).
   */
  mutation_interval_minutes: z.number().int().positive().nullable().optional(),
  /** Parquet v2 data pages and encodings: only where every reader of the table accepts them. */
  parquet_v2: z.boolean().optional(),
  /** One partition of a fanned-out crunch: the job plans, commits and locks only it. */
  partition: CrunchPartitionRefSchema.optional(),
});
export type CrunchPayload = z.infer<typeof CrunchPayloadSchema>;

/** One partition's outcome; `partition` is `col=value/...`, or `""` for an unpartitioned table. */
export const CrunchPartitionSchema = z.object({
  partition: z.string(),
  status: z.enum(["crunched", "skipped"]),
  /** Why a partition was skipped (for example "already in shape"). */
  reason: z.string().optional(),
  files_before: z.number().int().nonnegative(),
  files_after: z.number().int().nonnegative(),
  bytes_before: z.number().nonnegative(),
  bytes_after: z.number().nonnegative(),
  rows: z.number().nonnegative(),
});
export type CrunchPartition = z.infer<typeof CrunchPartitionSchema>;

/**
 * What a crunch's settings were measured for. A later crunch of the table reuses them only while all
 * of it still holds (see the agent's `engine/tune.ts`, `reuseSettings`).
 */
export const CrunchTunedWithSchema = z.object({
  /** The table's data columns and their types, as the rewrite read them (`name TYPE, ...`). */
  columns: z.string(),
  cluster_columns: z.array(z.string()),
  /** The layout the job asked for, when it asked for one (it decides the sort, not the trials). */
  layout: LayoutSchema.optional(),
  enumerated_columns: z.array(z.string()),
  parquet_v2: z.boolean(),
  /** The sample's in-memory bytes per row, from which the row-group size is sized to each bin. */
  bytes_per_row: z.number().nonnegative(),
});
export type CrunchTunedWith = z.infer<typeof CrunchTunedWithSchema>;

/** The rewrite settings a crunch chose, with the measurements behind the choice. */
export const CrunchSettingsSchema = z.object({
  compression: z.string(),
  compression_level: z.number().int().nullable(),
  row_group_size: z.number().int().positive(),
  sort_columns: z.array(z.string()),
  /** `zorder`: rows are sorted by the Z-value of `sort_columns`; absent or `linear`: by the columns in order. */
  sort_layout: z.enum(LAYOUT_TYPES).optional(),
  parquet_version: z.enum(["v1", "v2"]),
  /** False: values are written plainly, without dictionaries (smaller for some high-cardinality data). */
  dictionary_encoding: z.boolean().optional(),
  /**
   * Entries a column chunk's dictionary may hold before the writer falls back to plain values.
   * Absent: DuckDB's default, a twentieth of the row-group size (settings recorded before it existed).
   */
  dictionary_size_limit: z.number().int().nonnegative().optional(),
  reason: z.string(),
  /**
   * Candidate settings tried on a sample, the bytes each produced and the CPU milliseconds its write
   * took (CPU, not wall time, so that a busy machine does not skew the choice).
   */
  trials: z
    .array(
      z.object({
        settings: z.string(),
        bytes: z.number().nonnegative(),
        ms: z.number().nonnegative().optional(),
      }),
    )
    .default([]),
  /** What the trials were measured for; absent on settings that were not measured (optimize). */
  tuned_with: CrunchTunedWithSchema.optional(),
  /** Set when the settings are an earlier crunch's, reused: the version that crunch committed. */
  reused_from_version: z.number().int().nonnegative().optional(),
});
export type CrunchSettings = z.infer<typeof CrunchSettingsSchema>;

/**
 * A Hive partition's (or unpartitioned table's) folder that a crunch swapped for a new one: the
 * metastore now names `location`; `files` were the old folder's data files (paths relative to the
 * table's root), which nothing references any more.
 */
export const SupersededFolderSchema = z.object({
  /** `col=value/...`, `""` for an unpartitioned table. */
  partition: z.string(),
  /** The partition's values in partition-column order, as the metastore keys it; `[]` unpartitioned. */
  values: z.array(z.string()),
  previous_location: z.string(),
  location: z.string(),
  files: z.array(z.object({ path: z.string(), size: z.number().nonnegative() })),
});
export type SupersededFolder = z.infer<typeof SupersededFolderSchema>;

/**
 * A crunch's result, reported with the job and aggregated by `GET /crunch/{id}/metrics`. DRR is the
 * percentage of the rewritten files' bytes saved: `100 * (1 - bytes_after / bytes_before)`.
 */
export const CrunchResultSchema = z.object({
  job_type: z.enum(CRUNCH_KINDS),
  /** Why a crunch ran as optimize (mutation interval), when it did. */
  job_type_reason: z.string().optional(),
  table_version_before: z.number().int().nonnegative(),
  /** The Delta version this job committed; null when there was nothing to do. */
  committed_version: z.number().int().nonnegative().nullable(),
  files_before: z.number().int().nonnegative(),
  files_after: z.number().int().nonnegative(),
  bytes_before: z.number().nonnegative(),
  bytes_after: z.number().nonnegative(),
  drr: z.number(),
  rows_in: z.number().nonnegative(),
  rows_out: z.number().nonnegative(),
  partitions: z.array(CrunchPartitionSchema),
  partitions_crunched: z.number().int().nonnegative(),
  partitions_skipped: z.number().int().nonnegative(),
  settings: CrunchSettingsSchema.nullable(),
  duration_ms: z.number().nonnegative(),
  /**
   * What a reader of the result should know beyond the figures: no file fell in the date range (and
   * which range), or the cluster columns were not applied (and why).
   */
  notes: z.array(z.string()).optional(),
  /** Where the time went: loading the log, choosing settings, rewriting and validating, uploading, committing. */
  phases_ms: z.record(z.string(), z.number().nonnegative()).optional(),
  /**
   * Hive tables: the folders the commit moved partitions (or the table) away from. Their files are
   * no longer read by anyone and become pending deletions; recovering them moves the location back.
   */
  superseded: z.array(SupersededFolderSchema).optional(),
});
export type CrunchResult = z.infer<typeof CrunchResultSchema>;
