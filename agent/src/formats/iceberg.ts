/**
 * Iceberg tables behind the format seam (`types.ts`), for path-based tables (`metadata/vN.metadata.json`
 * beside the data, on `file://` or `s3://`):
 *
 * - Load: the current metadata and the current snapshot's live files (`iceberg/`). Jobs see the
 *   data files of the default partition spec whose path lies under the table; files of an older
 *   spec are left as they are (a rewrite could not keep their partition tuple).
 * - Partition values are the transforms' human strings (`ts_day=2026-01-01`), so date ranges and
 *   folder names read as they do on Delta; the typed tuple is kept to write the new manifest.
 * - Commit: a `replace` snapshot (`iceberg/commit.ts`) written as `vN+1.metadata.json` only if
 *   absent. A lost race is a `ConflictError`: the crunch reloads and keeps the bins whose files
 *   are still live. The job id, its result and the version it commits as go into the snapshot's
 *   summary, so a retry finds its own commit and files Lakesmith wrote are known by the snapshot
 *   that added them.
 */
import { type CrunchResult, CrunchResultSchema, type CrunchSettings } from "@lakesmith/shared/jobs";
import { partitionFolder, partitionPath } from "../crunch/partition-path.ts";
import { WRITTEN_BY_TAG } from "../crunch/plan.ts";
import { sqlString, type TableColumn } from "../engine/index.ts";
import {
  commitReplace,
  currentSchema,
  duckdbColumns,
  encodeValue,
  humanString,
  IcebergError,
  type IcebergTable as IcebergMetadata,
  type IcebergSchema,
  type IcebergValue,
  icebergRefusals,
  isPrimitive,
  loadIcebergTable,
  type ManifestEntry,
  metadataVersion,
  type NewDataFile,
  type PartitionSpec,
  partitionSpecById,
  readSnapshotFiles,
  resultType,
  type SnapshotFiles,
} from "../iceberg/index.ts";
import { JobError } from "../registry.ts";
import { ConflictError } from "./conflict.ts";
import { type IcebergCatalog, icebergCatalog } from "./iceberg-catalog.ts";
import { boundValue, dateText, fieldIdsLiteral, recipeType } from "./iceberg-values.ts";
import type {
  CommittedRewrite,
  FormatContext,
  NewFile,
  Rewrite,
  Table,
  TableFile,
  TableFormat,
} from "./types.ts";

/** Snapshot summary keys Lakesmith writes. */
export const SUMMARY_JOB_ID = "lakesmith.job-id";
export const SUMMARY_RESULT = "lakesmith.result";
export const SUMMARY_VERSION = "lakesmith.version";
export const SUMMARY_SETTINGS = "lakesmith.settings";

export const icebergFormat: TableFormat = {
  name: "iceberg",
  async load(ctx: FormatContext): Promise<Table> {
    const catalog = ctx.catalog ? icebergCatalog(ctx.catalog) : null;
    const metadata = await (catalog ? catalog.load(ctx.store) : loadIcebergTable(ctx.store)).catch(
      (err: unknown) => {
        throw permanentIcebergError(err, ctx.store.uri);
      },
    );
    const files =
      metadata.metadata.currentSnapshotId === null ? null : await readSnapshotFiles(ctx.store, metadata);
    return new IcebergTable(ctx, metadata, files, catalog);
  },
};

/** One Iceberg snapshot behind the seam. */
export class IcebergTable implements Table {
  readonly format = "iceberg";
  readonly version: number;
  readonly files: readonly TableFile[];
  readonly columns: Table["columns"];
  readonly partitionColumns: readonly string[];
  readonly parquetFieldIds: string | null;
  private readonly schema: IcebergSchema;
  private readonly spec: PartitionSpec;
  /** Why the table can't be rewritten, found while loading it. */
  private readonly refusals: string[];
  /** The manifest entry of each file in `files`, by path. */
  private readonly entries = new Map<string, ManifestEntry>();
  /** The typed partition tuple of each partition label of `files`. */
  private readonly tuples = new Map<string, Map<number, IcebergValue | null>>();

  constructor(
    private readonly ctx: FormatContext,
    readonly metadata: IcebergMetadata,
    readonly snapshot: SnapshotFiles | null,
    /** The catalog that tracks the table; null for a table found by its folder. */
    private readonly catalog: IcebergCatalog | null = null,
  ) {
    const meta = metadata.metadata;
    this.schema = currentSchema(metadata);
    this.spec = partitionSpecById(metadata, meta.defaultSpecId);
    this.partitionColumns = this.spec.fields.map((f) => f.name);
    this.refusals = icebergRefusals(metadata, snapshot?.entries ?? null, ctx.store.uri);
    const version = catalog ? catalogVersion(meta) : metadataVersion(metadata);
    if (version === null)
      this.refusals.push(
        `its metadata file ${metadata.metadataKey} is named by a catalog, not as vN.metadata.json: register the table through its catalog`,
      );
    this.version = version ?? 0;
    let columns: Table["columns"] = [];
    try {
      columns = duckdbColumns(this.schema);
    } catch (err) {
      this.refusals.push((err as Error).message);
    }
    this.columns = columns;
    this.parquetFieldIds = fieldIdsLiteral(this.schema);
    const ours = lakesmithSnapshots(meta.snapshots);
    this.files = (snapshot?.entries ?? []).flatMap((entry): TableFile[] => {
      if (entry.content !== "data" || entry.key === null || entry.specId !== this.spec.specId) return [];
      const partitionValues = this.partitionValues(entry);
      this.entries.set(entry.path, entry);
      this.tuples.set(partitionPath(partitionValues, this.partitionColumns), entry.partitionById);
      const settings = ours.get(entry.snapshotId);
      return [
        {
          key: entry.key,
          path: entry.path,
          size: entry.fileSizeInBytes,
          rows: entry.recordCount,
          partitionValues,
          stats: this.dateBounds(entry),
          tags: settings ? { [WRITTEN_BY_TAG]: settings } : null,
        },
      ];
    });
  }

  /**
   * Identity partitions' source columns filled from the partition value where a file lacks them:
   * some writers keep an identity partition's value in the metadata only (the spec lets readers
   * take it from there), and a rewrite must write it into the new files, not NULL.
   */
  columnsFor(partitionValues: Record<string, string | null>): readonly TableColumn[] {
    const fills = new Map<string, string>();
    for (const field of this.spec.fields) {
      const value = partitionValues[field.name];
      const source = this.schema.fields.find((f) => f.id === field.sourceId);
      if (field.transform.kind === "identity" && source && value !== null && value !== undefined)
        fills.set(source.name, sqlString(value));
    }
    return this.columns.map((c) => (fills.has(c.name) ? { ...c, fill: fills.get(c.name) as string } : c));
  }

  dataFolder(partitionValues: Record<string, string | null>): string {
    return `data/${partitionFolder(partitionValues, this.partitionColumns)}`;
  }

  typeOf(column: string): string {
    const partition = this.spec.fields.find((f) => f.name === column);
    if (partition) {
      const source = this.schema.fields.find((f) => f.id === partition.sourceId);
      return source ? recipeType(resultType(partition.transform, source.type)) : "string";
    }
    const field = this.schema.fields.find((f) => f.name === column);
    return field ? recipeType(field.type) : "string";
  }

  writeRefusal(): string | null {
    return this.refusals.length > 0 ? this.refusals.join("; ") : null;
  }

  lastForeignCommitAt(): number | null {
    const foreign = this.metadata.metadata.snapshots.filter((s) => !s.summary[SUMMARY_JOB_ID]);
    return foreign.length > 0 ? Math.max(...foreign.map((s) => s.timestampMs)) : null;
  }

  measuredSettings(): { settings: CrunchSettings; version: number } | null {
    const snapshots = [...this.metadata.metadata.snapshots].sort((a, b) => b.timestampMs - a.timestampMs);
    for (const s of snapshots) {
      const result = recordedResult(s.summary);
      if (result?.job_type !== "crunch") continue;
      const settings = result.settings;
      if (settings?.tuned_with && settings.reused_from_version === undefined)
        return { settings, version: Number(s.summary[SUMMARY_VERSION] ?? 0) };
    }
    return null;
  }

  async earlierResult(jobId: string): Promise<CrunchResult | null> {
    const mine = this.metadata.metadata.snapshots.find((s) => s.summary[SUMMARY_JOB_ID] === jobId);
    if (!mine) return null;
    const result = recordedResult(mine.summary);
    const version = Number(mine.summary[SUMMARY_VERSION]);
    if (!result || !Number.isInteger(version))
      throw new JobError(
        `this job already committed snapshot ${mine.snapshotId}, without a readable result`,
        {
          retryable: false,
        },
      );
    return { ...result, committed_version: version };
  }

  async commitRewrite(rewrite: Rewrite): Promise<CommittedRewrite> {
    if (!this.snapshot) throw new Error("an Iceberg table without a snapshot has nothing to rewrite");
    const next = this.version + 1;
    const removed = rewrite.replaced.map((f) => {
      const entry = this.entries.get(f.path);
      if (!entry) throw new Error(`${f.path} is not a live file of this snapshot`);
      return entry;
    });
    const change = {
      base: this.snapshot,
      removed,
      added: rewrite.added.map((file) => this.newDataFile(file)),
      summary: {
        [SUMMARY_JOB_ID]: rewrite.jobId,
        [SUMMARY_RESULT]: JSON.stringify({ ...rewrite.result, committed_version: null }),
        [SUMMARY_VERSION]: String(next),
        ...(rewrite.tags?.[WRITTEN_BY_TAG] ? { [SUMMARY_SETTINGS]: rewrite.tags[WRITTEN_BY_TAG] } : {}),
      },
      nowMs: this.ctx.clock.now().getTime(),
    };
    if (this.catalog) {
      const outcome = await this.catalog.commit(this.ctx.store, this.metadata, change);
      if (!outcome.committed)
        throw new ConflictError(
          `the catalog refused the commit: ${outcome.message}; re-plan from a fresh snapshot`,
          next,
        );
      return { version: next };
    }
    const outcome = await commitReplace(this.ctx.store, this.metadata, change);
    if (!outcome.committed)
      throw new ConflictError(
        `another writer committed metadata version ${next} first (${outcome.reason}); re-plan from a fresh snapshot`,
        next,
      );
    return { version: outcome.version };
  }

  /** A written file as the manifest records it: its partition tuple and its column metrics by field id. */
  private newDataFile(file: NewFile): NewDataFile {
    const tuple = this.tuples.get(partitionPath(file.partitionValues, this.partitionColumns));
    if (!tuple) throw new Error(`no live file has the partition of ${file.key}`);
    const valueCounts = new Map<number, bigint>();
    const nullValueCounts = new Map<number, bigint>();
    const lowerBounds = new Map<number, Buffer>();
    const upperBounds = new Map<number, Buffer>();
    for (const field of this.schema.fields) {
      if (!isPrimitive(field.type)) continue;
      valueCounts.set(field.id, BigInt(file.rows));
      const nulls = file.stats.nullCount[field.name];
      if (typeof nulls === "number") nullValueCounts.set(field.id, BigInt(nulls));
      const lower = boundValue(field.type, file.stats.minValues[field.name]);
      const upper = boundValue(field.type, file.stats.maxValues[field.name]);
      if (lower !== null) lowerBounds.set(field.id, encodeValue(field.type, lower));
      if (upper !== null) upperBounds.set(field.id, encodeValue(field.type, upper));
    }
    return {
      key: file.key,
      fileSizeInBytes: file.size,
      recordCount: file.rows,
      specId: this.spec.specId,
      partition: tuple,
      valueCounts,
      nullValueCounts,
      lowerBounds,
      upperBounds,
    };
  }

  private partitionValues(entry: ManifestEntry): Record<string, string | null> {
    const values: Record<string, string | null> = {};
    for (const field of this.spec.fields) {
      const value = entry.partitionById.get(field.fieldId) ?? null;
      const source = this.schema.fields.find((f) => f.id === field.sourceId)?.type;
      values[field.name] =
        value === null || !source || !isPrimitive(source)
          ? null
          : humanString(field.transform, source, value);
    }
    return values;
  }

  /** Date and timestamp bounds as text, which a date range on a data column compares. */
  private dateBounds(entry: ManifestEntry): TableFile["stats"] {
    const minValues: Record<string, unknown> = {};
    const maxValues: Record<string, unknown> = {};
    for (const field of this.schema.fields) {
      const text = (v: IcebergValue | undefined) => (v === undefined ? undefined : dateText(field.type, v));
      const min = text(entry.lowerBounds.get(field.id));
      const max = text(entry.upperBounds.get(field.id));
      if (min !== undefined) minValues[field.name] = min;
      if (max !== undefined) maxValues[field.name] = max;
    }
    return { minValues, maxValues };
  }
}

/**
 * A catalog-tracked table's version: its last sequence number (v2), or its snapshot count (v1, which
 * has none). Either grows by one with every snapshot committed.
 */
function catalogVersion(meta: IcebergMetadata["metadata"]): number {
  return meta.formatVersion >= 2 ? meta.lastSequenceNumber : meta.snapshots.length;
}

/** The settings tag of every snapshot a Lakesmith crunch made, by snapshot id. */
function lakesmithSnapshots(
  snapshots: readonly { snapshotId: bigint; summary: Record<string, string> }[],
): Map<bigint, string> {
  const ours = new Map<bigint, string>();
  for (const s of snapshots)
    if (s.summary[SUMMARY_JOB_ID]) ours.set(s.snapshotId, s.summary[SUMMARY_SETTINGS] ?? "");
  return ours;
}

function recordedResult(summary: Record<string, string>): CrunchResult | null {
  const text = summary[SUMMARY_RESULT];
  if (!text) return null;
  try {
    const parsed = CrunchResultSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Metadata no later attempt can read, as a permanent failure with the reason: any `IcebergError`
 * but a missing snapshot (a writer's cleanup may be in flight). Anything else (the store failing)
 * is returned as it is. Every Iceberg job reads metadata errors through this.
 */
export function permanentIcebergError(err: unknown, uri: string): unknown {
  if (!(err instanceof IcebergError) || err.code === "missing_snapshot") return err;
  const table = uri.replace(/\/$/, "");
  if (err.code === "not_a_table")
    return new JobError(
      `${table} is not an Iceberg table: ${err.message}. Point the table's URI at the folder that holds metadata/`,
      { retryable: false, cause: err },
    );
  return new JobError(`the Iceberg metadata of ${table} can't be read: ${err.message}`, {
    retryable: false,
    cause: err,
  });
}
