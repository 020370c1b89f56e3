/**
 * The seam between the agent's jobs and a table format (Delta today; Iceberg and Hive plug in the
 * same way). A job asks a format for what every job needs and nothing format-specific:
 *
 * - `load`: the current snapshot as live data files (key, size, rows, partition values, column
 *   statistics, tags), the columns as DuckDB reads them, and enough history to answer below.
 * - `writeRefusal`: why the agent must not rewrite the table (a reason a person can read), or null.
 * - `earlierResult`: the result an earlier attempt of the same job committed, so a retry reports
 *   it instead of committing twice.
 * - `commitRewrite`: replace files by files in one commit carrying the job id and its result,
 *   through the format's own protocol; a concurrent writer that invalidated the rewrite surfaces as
 *   `ConflictError` (the caller reloads and keeps what the winner left alone).
 *
 * Invariants every format keeps: files outside the table's root never appear in `files` (someone
 * else's data is never rewritten); a commit is all or nothing; nothing is ever deleted by a commit.
 */
import type { CatalogRef, CrunchResult, CrunchSettings, SupersededFolder } from "@lakesmith/shared/jobs";
import type { Clock } from "@lakesmith/shared/time";
import type { DeltaStats, Engine, TableColumn } from "../engine/index.ts";
import type { ObjectStore } from "../store/index.ts";

export type TableFormatName = "delta" | "iceberg" | "hive";

/** One live data file of the table, under the table's root. */
export interface TableFile {
  /** The object's key relative to the store's root. */
  key: string;
  /** The file's identity in the format's own metadata (conflict checks compare it). */
  path: string;
  size: number;
  /** Rows, where the metadata states them. */
  rows: number | undefined;
  /** Partition values as strings (`null` for a null partition), keyed by partition column. */
  partitionValues: Record<string, string | null>;
  /** Column bounds where the metadata has them: a date range on a data column uses them. */
  stats?: { minValues?: Record<string, unknown>; maxValues?: Record<string, unknown> } | null;
  /** Tags the file carries (Lakesmith tags the files it writes with their settings). */
  tags?: Record<string, string> | null;
}

/**
 * A loaded table: one snapshot as the jobs see it, with what they may do with it. A format keeps
 * its own records (a Delta `add`, an Iceberg manifest entry) behind it, found by `path`.
 */
export interface Table {
  readonly format: TableFormatName;
  /** The snapshot's version (Delta: the log version; Iceberg: the sequence number). */
  readonly version: number;
  readonly files: readonly TableFile[];
  /** Data (non-partition) columns in schema order, as DuckDB reads them. */
  readonly columns: readonly TableColumn[];
  readonly partitionColumns: readonly string[];
  /** `columns` as a rewrite of one partition's files reads them (with `fill` where files may lack a column). */
  columnsFor(partitionValues: Record<string, string | null>): readonly TableColumn[];
  /**
   * Whether the table's readers match file columns to the declared schema by name and ignore any
   * other (Hive). A rewrite writes the declared columns only, so a column that only the files hold
   * would be dropped from them: the crunch refuses such a partition instead.
   */
  readonly readsDeclaredColumnsOnly?: boolean;
  /**
   * The type of a column or partition column in the recipe's words (`string`, `date`, `timestamp`,
   * `timestamp_ntz`, `integer`, `long`, `struct`, ...), as onboarding's inference reads them.
   */
  typeOf(column: string): string;
  /** The folder (key prefix, `""` or ending in `/`) a rewrite writes a partition's new files to. */
  dataFolder(partitionValues: Record<string, string | null>): string;
  /**
   * Parquet field ids for the files a rewrite writes, as DuckDB's `FIELD_IDS` option value
   * (`{id: 1, point: {__duckdb_field_id: 2, x: 3}}`), where the format identifies columns by id.
   */
  readonly parquetFieldIds: string | null;
  /** Why the agent must not rewrite the table, in words a person can act on; null when it may. */
  writeRefusal(): string | null;
  /** When another writer (not a Lakesmith job) last committed, in ms since the epoch; null if unknown. */
  lastForeignCommitAt(): number | null;
  /** The newest crunch settings a recent commit recorded as measured (not reused), with its version. */
  measuredSettings(): { settings: CrunchSettings; version: number } | null;
  /** The result an earlier attempt of the job committed, or null when it has no commit. */
  earlierResult(jobId: string): Promise<CrunchResult | null>;
  /**
   * Commits the rewrite against this snapshot; returns the committed version (and, for a format
   * that commits by moving locations, the folders nothing reads any more). Throws `ConflictError`
   * when another writer invalidated it (reload and re-plan).
   */
  commitRewrite(rewrite: Rewrite): Promise<CommittedRewrite>;
}

/** What a commit did: its version, and the folders it moved the table's data away from (Hive). */
export interface CommittedRewrite {
  version: number;
  superseded?: SupersededFolder[];
}

/** A file a rewrite wrote and uploaded, to be added by the commit. */
export interface NewFile {
  key: string;
  size: number;
  rows: number;
  stats: DeltaStats;
  partitionValues: Record<string, string | null>;
}

/** One rewrite to commit: every file in `replaced` is swapped for the files in `added`. */
export interface Rewrite {
  jobId: string;
  replaced: readonly TableFile[];
  added: readonly NewFile[];
  /** Tags to put on every added file, where the format has tags. */
  tags: Record<string, string> | null;
  /** The job's result as it stands before the commit (recorded in the commit for a retry). */
  result: CrunchResult;
  /** The date range the job worked on, for the commit's description. */
  predicate: string;
}

export interface FormatContext {
  store: ObjectStore;
  /** The catalog that tracks the table, where one does (Iceberg REST, Hive Metastore): load and commit through it. */
  catalog?: CatalogRef | undefined;
  engine: Engine;
  /** A folder the format may use for its own files (log copies, checkpoints). */
  scratchDir: string;
  clock: Clock;
  log: { warn(details: object, message: string): void };
}

export interface TableFormat {
  readonly name: TableFormatName;
  load(ctx: FormatContext): Promise<Table>;
}
