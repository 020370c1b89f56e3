/**
 * Payloads and results of the jobs that delete data (document 1, "Vacuum", "Partition expiration",
 * "Pending deletions"). Nothing is ever deleted in one step:
 *
 * 1. `vacuum` lists files no snapshot needs any more (Delta: tombstones older than the retention;
 *    Iceberg: files only expired snapshots referenced, after it has committed their expiry; in full
 *    mode also orphans: referenced by no log or metadata and older than three days) and reports them.
 *    `partition_expiration` commits `remove` actions for the files of expired date partitions and
 *    reports them. The control plane turns every reported file into a PENDING_DELETE record.
 * 2. `recover` puts the files of PENDING_DELETE records of an expired partition back into the table
 *    with a new commit (a vacuum record needs no commit: recovering it only keeps its file). A Hive
 *    crunch's records (a folder the crunch moved a partition away from) are recovered a folder at a
 *    time, by moving the partition's location back in the metastore.
 * 3. `hard_delete` deletes the files of expired PENDING_DELETE records, re-checking each against the
 *    current snapshot right before: a file referenced again is kept and reported `retained`.
 *
 * Paths are store keys relative to the table's root (`date=2026-01-01/part-0.parquet`), decoded.
 *
 * @example
 * const payload = VacuumPayloadSchema.parse(offer.payload);
 * if (payload.mode === "full") console.log("orphans too");
 */
import { z } from "zod";
import { CatalogRefSchema, DateRangeSchema, IsoDateSchema, OnboardingRecipeSchema } from "./jobs.ts";

export const VACUUM_KIND = "vacuum";
export const PARTITION_EXPIRATION_KIND = "partition_expiration";
export const RECOVER_KIND = "recover";
export const HARD_DELETE_KIND = "hard_delete";

export const VACUUM_MODES = ["lite", "full"] as const;
export type VacuumMode = (typeof VACUUM_MODES)[number];

/** Delta's default `delta.deletedFileRetentionDuration`: 7 days. */
export const DEFAULT_DELETED_FILE_RETENTION_HOURS = 168;
/** Iceberg's default `history.expire.max-snapshot-age-ms`: 5 days. */
export const DEFAULT_SNAPSHOT_RETENTION_HOURS = 120;
/** Full-mode vacuum never proposes an orphan younger than this (an in-flight write looks like one). */
export const ORPHAN_MIN_AGE_HOURS = 72;
/** Default retention of partition expiration (the platform's default policy value). */
export const DEFAULT_PARTITION_RETENTION_DAYS = 30;

const tableRef = {
  table_id: z.string().min(1),
  uri: z.string().min(1),
  format: z.enum(["delta", "iceberg", "hive"]),
  /** Set on scheduled runs (a schedule's payload carries these and more; extra keys are ignored). */
  schedule_id: z.string().min(1).optional(),
  slot: z.string().min(1).optional(),
};

// ---------------------------------------------------------------------------------------------
// vacuum

export const VacuumPayloadSchema = z.object({
  ...tableRef,
  mode: z.enum(VACUUM_MODES).default("lite"),
  /**
   * Tombstones (Delta) or snapshots (Iceberg) younger than this are kept. Absent: the table's
   * `delta.deletedFileRetentionDuration` (7 days by default), or Iceberg's
   * `history.expire.max-snapshot-age-ms` (5 days by default; a branch's own `max-snapshot-age-ms`
   * still wins). A value below the table's own retention was asked for explicitly; the result
   * records it (`retention_shortened`).
   */
  retention_hours: z.number().nonnegative().optional(),
  /**
   * Never go below the table's own retention: `retention_hours` applies only where it is longer. A
   * policy sets this unless it says `shorten_retention` (no policy shortens a table's retention silently).
   */
  keep_table_retention: z.boolean().default(false),
  dry_run: z.boolean().default(false),
  /** Paths never to propose: files whose earlier pending deletion was recovered (kept on purpose). */
  keep: z.array(z.string()).default([]),
});
export type VacuumPayload = z.infer<typeof VacuumPayloadSchema>;

export const VacuumFileSchema = z.object({
  path: z.string(),
  size: z.number().nonnegative(),
  /** `expired_snapshot`: an Iceberg file that only snapshots this vacuum expired referenced. */
  reason: z.enum(["tombstone", "orphan", "expired_snapshot"]),
  /**
   * Tombstones: when the file was removed from the table (the remove's `deletionTimestamp`, ms).
   * Expired snapshots: the time of the newest expired snapshot that referenced the file (it left
   * the table after that).
   */
  removed_at: z.number().nullable().optional(),
  /** Orphans: the object's last-modified time (ms). */
  modified_at: z.number().nullable().optional(),
});
export type VacuumFile = z.infer<typeof VacuumFileSchema>;

export const VacuumResultSchema = z.object({
  mode: z.enum(VACUUM_MODES),
  dry_run: z.boolean(),
  /** The snapshot (Delta) or metadata version (Iceberg `vN.metadata.json`) the plan was made against. */
  table_version: z.number().int().nonnegative(),
  /** The retention applied, and the table's own. */
  retention_hours: z.number().nonnegative(),
  table_retention_hours: z.number().nonnegative(),
  retention_shortened: z.boolean(),
  orphan_min_age_hours: z.number().nonnegative(),
  /** Files the plan proposes for deletion: each becomes one PENDING_DELETE record (not on a dry run). */
  files: z.array(VacuumFileSchema),
  files_count: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  /** What the plan looked at and kept, with counts: tombstones within retention, young orphans, ... */
  kept: z.record(z.string(), z.number().int().nonnegative()),
  objects_listed: z.number().int().nonnegative(),
  /** Iceberg: the snapshots the vacuum expired (or would, on a dry run), ids as decimal strings. */
  expired_snapshots: z.array(z.string()).optional(),
  /** Iceberg: the branches and tags dropped with them (older than their `max-ref-age-ms`). */
  expired_refs: z.array(z.string()).optional(),
  /** Iceberg: the metadata version that committed the expiry; null on dry runs and when nothing expired. */
  committed_version: z.number().int().nonnegative().nullable().optional(),
  duration_ms: z.number().nonnegative(),
});
export type VacuumResult = z.infer<typeof VacuumResultSchema>;

// ---------------------------------------------------------------------------------------------
// partition expiration

export const PartitionExpirationPayloadSchema = z.object({
  ...tableRef,
  /** A date partition column; absent: the recipe's date filter column. */
  partition_column: z.string().min(1).optional(),
  retention_days: z.number().int().positive().default(DEFAULT_PARTITION_RETENTION_DAYS),
  /** The day the retention counts back from (UTC); partitions before `as_of - retention_days` expire. */
  as_of: IsoDateSchema.optional(),
  dry_run: z.boolean().default(false),
  /** A preflight (`.../validate`): never writes, and a policy that can't run is an answer, not a failure. */
  validate: z.boolean().default(false),
  recipe: OnboardingRecipeSchema.nullable().optional(),
  /** Scheduled payloads carry one; expiration does not use it. */
  date_range: DateRangeSchema.optional(),
});
export type PartitionExpirationPayload = z.infer<typeof PartitionExpirationPayloadSchema>;

/** What a pending deletion needs to put an expired file back: its `add` action, less the path. */
export const ExpiredFileSchema = z.object({
  path: z.string(),
  size: z.number().nonnegative(),
  partition_values: z.record(z.string(), z.string().nullable()),
  modification_time: z.number(),
  /** The add's `stats` JSON string, as it was. */
  stats: z.string().nullable(),
  tags: z.record(z.string(), z.string()).nullable(),
});
export type ExpiredFile = z.infer<typeof ExpiredFileSchema>;

export const ExpiredPartitionSchema = z.object({
  /** `col=value` of the expiring column (other partition columns are not part of the key). */
  partition: z.string(),
  value: z.string(),
  files: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  rows: z.number().int().nonnegative().nullable(),
});
export type ExpiredPartition = z.infer<typeof ExpiredPartitionSchema>;

export const PartitionExpirationResultSchema = z.object({
  dry_run: z.boolean(),
  validate: z.boolean(),
  /** False when the policy can't run on this table; `reason` says why. */
  can_run: z.boolean(),
  reason: z.string().nullable(),
  table_version: z.number().int().nonnegative().nullable(),
  partition_column: z.string().nullable(),
  retention_days: z.number().int().positive(),
  /** Partitions whose date is before this expire. */
  cutoff_date: IsoDateSchema,
  partitions: z.array(ExpiredPartitionSchema),
  files: z.array(ExpiredFileSchema),
  files_count: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  /** The version of the commit that removed the files; null on dry runs and when nothing expired. */
  committed_version: z.number().int().nonnegative().nullable(),
  /** When the removes were committed (ms), the start of the files' retention; null when not committed. */
  committed_at: z.number().nullable(),
  /** The table's `delta.deletedFileRetentionDuration` in hours: how long readers may still need the files. */
  table_retention_hours: z.number().nonnegative(),
  duration_ms: z.number().nonnegative(),
});
export type PartitionExpirationResult = z.infer<typeof PartitionExpirationResultSchema>;

// ---------------------------------------------------------------------------------------------
// recover

/**
 * What a Hive crunch's pending deletion records of its old folder (the record's `file`): where the
 * partition was (`previous_location`) and where the crunch moved it (`location`).
 */
export const SupersededRefSchema = z.object({
  /** The partition's values in partition-column order; `[]` for an unpartitioned table. */
  values: z.array(z.string()),
  previous_location: z.string(),
  location: z.string(),
});
export type SupersededRef = z.infer<typeof SupersededRefSchema>;

export const RecoverPayloadSchema = z
  .object({
    ...tableRef,
    /** Delta: the expired files to put back, each with its pending deletion's id. */
    files: z.array(ExpiredFileSchema.extend({ deletion_id: z.string().min(1) })).default([]),
    /** Hive: the folders to move partitions back to, each with the ids of its files' records. */
    folders: z
      .array(
        SupersededRefSchema.extend({
          deletion_ids: z.array(z.string().min(1)).min(1),
          paths: z.array(z.string().min(1)).min(1),
        }),
      )
      .default([]),
    /** Hive: the metastore the table is registered in. */
    catalog: CatalogRefSchema.optional(),
  })
  .refine((p) => p.files.length + p.folders.length > 0, { message: "nothing to recover", path: ["files"] });
export type RecoverPayload = z.infer<typeof RecoverPayloadSchema>;

export const RecoverResultSchema = z.object({
  /** The version of the commit that added the files back; null when all were live already. */
  committed_version: z.number().int().nonnegative().nullable(),
  files: z.array(
    z.object({
      deletion_id: z.string(),
      path: z.string(),
      outcome: z.enum(["restored", "already_live"]),
    }),
  ),
  duration_ms: z.number().nonnegative(),
});
export type RecoverResult = z.infer<typeof RecoverResultSchema>;

// ---------------------------------------------------------------------------------------------
// hard delete

export const HardDeletePayloadSchema = z.object({
  ...tableRef,
  files: z.array(z.object({ deletion_id: z.string().min(1), path: z.string().min(1) })).min(1),
});
export type HardDeletePayload = z.infer<typeof HardDeletePayloadSchema>;

export const HARD_DELETE_OUTCOMES = ["deleted", "absent", "retained", "failed"] as const;

export const HardDeleteResultSchema = z.object({
  /** The snapshot (Delta) or metadata version (Iceberg) each file was checked against. */
  table_version: z.number().int().nonnegative(),
  files: z.array(
    z.object({
      deletion_id: z.string(),
      path: z.string(),
      /**
       * deleted; absent (already gone); retained (referenced by the current snapshot, or for
       * Iceberg by any snapshot the metadata still holds: kept); failed.
       */
      outcome: z.enum(HARD_DELETE_OUTCOMES),
      detail: z.string().nullable(),
    }),
  ),
  deleted: z.number().int().nonnegative(),
  retained: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
});
export type HardDeleteResult = z.infer<typeof HardDeleteResultSchema>;
