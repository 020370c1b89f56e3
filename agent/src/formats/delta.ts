/**
 * Delta tables behind the format seam (`types.ts`): the snapshot from the log (`delta/`), the
 * protocol's refusals, the job's own earlier commit found by its id in `commitInfo`, and a rewrite
 * committed as `remove` (dataChange false) of every replaced file and `add` of every new one, with
 * the job's result in `commitInfo`. A concurrent append is merged by `delta/commit.ts`; a winner
 * that removed one of our inputs is a `ConflictError`.
 */

import { join } from "node:path";
import { type CrunchResult, CrunchResultSchema, type CrunchSettings } from "@lakesmith/shared/jobs";
import { partitionFolder } from "../crunch/partition-path.ts";
import {
  type AddFile,
  addFor,
  commit,
  DeltaLogError,
  dataFileLocation,
  duckdbColumns,
  findJobCommit,
  JOB_ID_FIELD,
  JOB_RESULT_FIELD,
  loadSnapshot,
  OWN_COMMIT_LOOKBACK,
  recordedJobResult,
  removeFor,
  type Snapshot,
  writeRefusal,
} from "../delta/index.ts";
import type { TableColumn } from "../engine/index.ts";
import { JobError } from "../registry.ts";
import type { CommittedRewrite, FormatContext, Rewrite, Table, TableFile, TableFormat } from "./types.ts";

export const deltaFormat: TableFormat = {
  name: "delta",
  async load(ctx: FormatContext): Promise<Table> {
    const snapshot = await loadSnapshot(ctx.store, ctx.engine, {
      scratchDir: join(ctx.scratchDir, "log"),
    }).catch((err: unknown) => {
      throw permanentLogError(err, ctx.store.uri);
    });
    return new DeltaTable(ctx, snapshot);
  },
};

/** One Delta snapshot behind the seam; `snapshot` is the log as `delta/` read it. */
export class DeltaTable implements Table {
  readonly format = "delta";
  readonly version: number;
  readonly files: readonly TableFile[];
  readonly columns: Table["columns"];
  readonly partitionColumns: readonly string[];
  /** The `add` action of each file in `files`, by path: a `remove` repeats its fields. */
  private readonly adds = new Map<string, AddFile>();

  constructor(
    private readonly ctx: FormatContext,
    readonly snapshot: Snapshot,
  ) {
    this.version = snapshot.version;
    const partitionColumns = snapshot.metadata.partitionColumns;
    this.partitionColumns = partitionColumns;
    this.columns = duckdbColumns(snapshot.metadata.schema, partitionColumns);
    // Files outside the table's root (a shallow clone's source) are someone else's: never listed.
    this.files = snapshot.files.flatMap((add): TableFile[] => {
      const location = dataFileLocation(ctx.store, add);
      if (!("key" in location)) return [];
      this.adds.set(add.path, add);
      return [
        {
          key: location.key,
          path: add.path,
          size: add.size,
          rows: add.stats?.numRecords,
          partitionValues: add.partitionValues,
          stats: add.stats ?? null,
          tags: add.tags ?? null,
        },
      ];
    });
  }

  readonly parquetFieldIds = null;

  columnsFor(): readonly TableColumn[] {
    return this.columns;
  }

  dataFolder(partitionValues: Record<string, string | null>): string {
    return partitionFolder(partitionValues, this.partitionColumns);
  }

  typeOf(column: string): string {
    const type = this.snapshot.metadata.schema.fields.find((f) => f.name === column)?.type;
    if (!type) return "string";
    if (type.kind === "primitive") return type.name;
    return type.kind === "unsupported" ? type.name : type.kind;
  }

  writeRefusal(): string | null {
    return writeRefusal(this.snapshot);
  }

  lastForeignCommitAt(): number | null {
    return lastForeignCommitAt(this.snapshot);
  }

  measuredSettings(): { settings: CrunchSettings; version: number } | null {
    return latestMeasuredSettings(this.snapshot);
  }

  async earlierResult(jobId: string): Promise<CrunchResult | null> {
    const { store } = this.ctx;
    const version = await findJobCommit(store, this.snapshot, jobId, {
      sinceVersion: Math.max(0, this.snapshot.version - OWN_COMMIT_LOOKBACK),
    });
    if (version === null) return null;
    return {
      ...(await recordedJobResult(store, this.snapshot, version, CrunchResultSchema)),
      committed_version: version,
    };
  }

  async commitRewrite(rewrite: Rewrite): Promise<CommittedRewrite> {
    const { ctx } = this;
    const now = ctx.clock.now().getTime();
    const actions = [
      ...rewrite.replaced.map((f) => ({ remove: removeFor(this.addOf(f), now) })),
      ...rewrite.added.map((a) => ({
        add: addFor({
          key: a.key,
          size: a.size,
          modificationTime: now,
          partitionValues: a.partitionValues,
          stats: a.stats,
          tags: rewrite.tags,
        }),
      })),
    ];
    const { result } = rewrite;
    const { version } = await commit(ctx.store, this.snapshot, actions, {
      jobId: rewrite.jobId,
      operation: "OPTIMIZE",
      operationParameters: { pass: result.job_type, predicate: rewrite.predicate },
      operationMetrics: {
        numRemovedFiles: String(result.files_before),
        numAddedFiles: String(result.files_after),
        numRemovedBytes: String(result.bytes_before),
        numAddedBytes: String(result.bytes_after),
      },
      commitInfo: { [JOB_RESULT_FIELD]: { ...result, committed_version: null } },
      engine: ctx.engine,
      scratchDir: join(ctx.scratchDir, "commit"),
      clock: ctx.clock,
      log: ctx.log,
    });
    return { version };
  }

  private addOf(file: TableFile): AddFile {
    const add = this.adds.get(file.path);
    if (!add) throw new Error(`${file.path} is not a file of Delta version ${this.version}`);
    return add;
  }
}

/**
 * A log error that no later attempt changes, as a permanent failure: no Delta log at the URI (not a
 * Delta table, or the URI names another folder) or a log written with what the agent does not read.
 * A missing commit or a log without metadata may be a writer's cleanup in flight: left retryable.
 */
function permanentLogError(err: unknown, uri: string): unknown {
  if (!(err instanceof DeltaLogError)) return err;
  const table = uri.replace(/\/$/, "");
  if (err.code === "not_a_table")
    return new JobError(
      `${table} is not a Delta table: ${err.message}. Point the table's URI at the folder that holds _delta_log/`,
      { retryable: false, cause: err },
    );
  if (err.code === "unsupported")
    return new JobError(`the Delta log of ${table} can't be read: ${err.message}`, {
      retryable: false,
      cause: err,
    });
  return err;
}

/**
 * When another writer last committed: the newest commit read after the checkpoint that no Lakesmith
 * job made, else (every such commit is ours, or the checkpoint is the latest version) the snapshot's
 * own time when its latest commit is not ours.
 */
function lastForeignCommitAt(snapshot: Snapshot): number | null {
  const foreign = snapshot.commits.findLast((c) => !c.commitInfo?.[JOB_ID_FIELD]);
  if (foreign) return foreign.timestamp;
  return snapshot.commits.length === 0 ? snapshot.timestamp : null;
}

/** The newest measured (not reused) settings a crunch recorded among the commits the snapshot read. */
function latestMeasuredSettings(snapshot: Snapshot): { settings: CrunchSettings; version: number } | null {
  for (const c of [...snapshot.commits].reverse()) {
    const parsed = CrunchResultSchema.safeParse(c.commitInfo?.[JOB_RESULT_FIELD]);
    if (!parsed.success || parsed.data.job_type !== "crunch") continue;
    const settings = parsed.data.settings;
    if (settings?.tuned_with && settings.reused_from_version === undefined)
      return { settings, version: c.version };
  }
  return null;
}
