/**
 * The partition expiration job on a Delta table: remove from the table every file of a date
 * partition older than the retention, in one commit. Nothing is deleted physically: the files
 * become tombstones, the control plane records each as a pending deletion, and `recover` can put
 * them back until `hard_delete` runs.
 *
 * 1. Load the snapshot. A retried job whose earlier attempt committed reports that commit's result.
 * 2. Decide whether the policy can run: a Delta table the agent may write, not append-only, and a
 *    date partition column (`partition-dates.ts`). A validate preflight answers `can_run: false`
 *    with the reason; a run fails for good with it.
 * 3. Plan: `cutoff_date = (as_of ?? today, UTC) - retention_days`; every live file whose partition
 *    date is before it expires, grouped by partition value. Validate and dry run stop here.
 * 4. Commit once: a `remove` per file (`dataChange: true`: rows leave the table), operation DELETE
 *    with the predicate, and the result's summary in commitInfo; a retry reports the same files
 *    (the commit's removes, as the version before held them). Another
 *    writer's conflicting commit (a crunch that replaced the files) means re-loading and re-planning.
 */
import { join } from "node:path";
import {
  DEFAULT_DELETED_FILE_RETENTION_HOURS,
  type ExpiredFile,
  type ExpiredPartition,
  type PartitionExpirationPayload,
  type PartitionExpirationResult,
  PartitionExpirationResultSchema,
} from "@lakesmith/shared/maintenance";
import {
  type AddFile,
  ConflictError,
  commit,
  DeltaLogError,
  findJobCommit,
  JOB_RESULT_FIELD,
  loadSnapshot,
  OWN_COMMIT_LOOKBACK,
  type RemoveFile,
  readCommit,
  recordedJobResult,
  type Snapshot,
  writeRefusal,
} from "../delta/index.ts";
import type { Engine } from "../engine/index.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { daysBefore, isNullPartition, partitionDates, utcDate } from "./partition-dates.ts";
import {
  comparePaths,
  keyOfFile,
  loadTable,
  type MaintenanceOptions,
  nowOf,
  tableRetentionHours,
  withEngine,
} from "./table.ts";

const MAX_COMMIT_ATTEMPTS = 3;

export interface ExpirationPlan {
  column: string;
  cutoffDate: string;
  tableRetentionHours: number;
  partitions: ExpiredPartition[];
  files: ExpiredFile[];
  /** The live files the commit removes, as the snapshot holds them. */
  adds: AddFile[];
}

export async function runPartitionExpiration(
  ctx: JobContext<PartitionExpirationPayload>,
  options: MaintenanceOptions,
): Promise<PartitionExpirationResult> {
  const started = Date.now();
  const { payload, log } = ctx;
  const store = options.store;
  const column = payload.partition_column ?? payload.recipe?.date_filter_column ?? null;
  const cutoffDate = daysBefore(payload.as_of ?? utcDate(nowOf(options)), payload.retention_days);
  const writes = !payload.validate && !payload.dry_run;

  const resultOf = (
    plan: ExpirationPlan | null,
    snapshot: Snapshot | null,
    extra: Partial<PartitionExpirationResult> = {},
  ): PartitionExpirationResult => ({
    dry_run: payload.dry_run,
    validate: payload.validate,
    can_run: true,
    reason: null,
    table_version: snapshot?.version ?? null,
    partition_column: column,
    retention_days: payload.retention_days,
    cutoff_date: cutoffDate,
    partitions: plan?.partitions ?? [],
    files: plan?.files ?? [],
    files_count: plan?.files.length ?? 0,
    bytes: plan?.files.reduce((n, f) => n + f.size, 0) ?? 0,
    committed_version: null,
    committed_at: null,
    table_retention_hours: plan?.tableRetentionHours ?? DEFAULT_DELETED_FILE_RETENTION_HOURS,
    duration_ms: Date.now() - started,
    ...extra,
  });
  /** A policy that can't run: an answer to a preflight, a permanent failure of a run. */
  const cannotRun = (reason: string, snapshot: Snapshot | null) => {
    if (payload.validate) return resultOf(null, snapshot, { can_run: false, reason });
    throw new JobError(`partition expiration can't run: ${reason}`, { retryable: false });
  };

  if (payload.format !== "delta")
    return cannotRun(`partition expiration works on Delta tables only, not ${payload.format}`, null);

  return withEngine(ctx.scratchDir, options.memoryLimitMb, async (engine) => {
    ctx.progress({ phase: "loading" });
    let snapshot: Snapshot;
    try {
      snapshot = await loadTable(store, engine, ctx.scratchDir);
    } catch (err) {
      if (err instanceof DeltaLogError && payload.validate) return cannotRun(err.message, null);
      throw err;
    }
    if (writes) {
      const earlier = await findJobCommit(store, snapshot, ctx.job.id, {
        sinceVersion: Math.max(0, snapshot.version - OWN_COMMIT_LOOKBACK),
      });
      if (earlier !== null) {
        log.info({ version: earlier }, "this job committed in an earlier attempt; reporting that commit");
        return earlierResult(store, engine, ctx.scratchDir, snapshot, earlier);
      }
    }

    const planned = planExpiration(store, snapshot, column, cutoffDate);
    if ("reason" in planned) return cannotRun(planned.reason, snapshot);
    log.info(
      { partitions: planned.partitions.length, files: planned.files.length, cutoff: cutoffDate },
      "expiration planned",
    );
    if (!writes || planned.files.length === 0) return resultOf(planned, snapshot);

    ctx.progress({ phase: "committing", files: planned.files.length });
    return commitPlan(ctx, options, engine, snapshot, planned, resultOf);
  });
}

/** What expires on `snapshot`, or why the policy can't run there. Pure. */
export function planExpiration(
  store: ObjectStore,
  snapshot: Snapshot,
  column: string | null,
  cutoffDate: string,
): ExpirationPlan | { reason: string } {
  const refusal = writeRefusal(snapshot);
  if (refusal) return { reason: refusal };
  if (snapshot.metadata.configuration["delta.appendOnly"]?.toLowerCase() === "true")
    return { reason: "the table is append-only (delta.appendOnly = true): its files can't be removed" };
  if (column === null)
    return { reason: "no partition column: the policy names none and the table's recipe has no date column" };
  let retentionHours: number;
  try {
    retentionHours = tableRetentionHours(snapshot.metadata);
  } catch (err) {
    return { reason: (err as Error).message };
  }
  const dates = partitionDates(snapshot.metadata, snapshot.files, column);
  if ("reason" in dates) return dates;

  const adds = snapshot.files
    .filter((f) => {
      const value = f.partitionValues[column];
      return !isNullPartition(value) && (dates.dateOf.get(value as string) as string) < cutoffDate;
    })
    .sort((a, b) => comparePaths(a.path, b.path));
  const byValue = new Map<string, AddFile[]>();
  for (const file of adds) {
    const value = file.partitionValues[column] as string;
    const list = byValue.get(value);
    if (list) list.push(file);
    else byValue.set(value, [file]);
  }
  const partitions = [...byValue.entries()]
    .sort(([a], [b]) => comparePaths(a, b))
    .map(([value, files]) => ({
      partition: `${column}=${value}`,
      value,
      files: files.length,
      bytes: files.reduce((n, f) => n + f.size, 0),
      rows: files.every((f) => f.stats?.numRecords !== undefined)
        ? files.reduce((n, f) => n + (f.stats?.numRecords ?? 0), 0)
        : null,
    }));
  return {
    column,
    cutoffDate,
    tableRetentionHours: retentionHours,
    partitions,
    adds,
    files: adds.map((f) => expiredFile(store, f)),
  };
}

async function commitPlan(
  ctx: JobContext<PartitionExpirationPayload>,
  options: MaintenanceOptions,
  engine: Engine,
  first: Snapshot,
  firstPlan: ExpirationPlan,
  resultOf: (
    plan: ExpirationPlan | null,
    snapshot: Snapshot | null,
    extra?: Partial<PartitionExpirationResult>,
  ) => PartitionExpirationResult,
): Promise<PartitionExpirationResult> {
  const store = options.store;
  let snapshot = first;
  let plan = firstPlan;
  for (let attempt = 1; ; attempt++) {
    const now = nowOf(options);
    const result = resultOf(plan, snapshot, { committed_at: now });
    try {
      const done = await commit(
        store,
        snapshot,
        plan.adds.map((add) => ({ remove: expiredRemove(add, now) })),
        {
          jobId: ctx.job.id,
          operation: "DELETE",
          operationParameters: { predicate: [`${sqlName(plan.column)} < '${plan.cutoffDate}'`] },
          operationMetrics: {
            numRemovedFiles: plan.files.length,
            numRemovedBytes: result.bytes,
            numAddedFiles: 0,
            numCopiedRows: 0,
            ...(plan.partitions.every((p) => p.rows !== null)
              ? { numDeletedRows: plan.partitions.reduce((n, p) => n + (p.rows ?? 0), 0) }
              : {}),
          },
          // The result less its file list, which may name thousands of files: the commit's removes
          // name them, and a retry reads their add actions from the version before (`earlierResult`).
          commitInfo: { [JOB_RESULT_FIELD]: { ...result, files: [] } },
          engine,
          scratchDir: join(ctx.scratchDir, "commit"),
          clock: { now: () => new Date(now) },
          log: ctx.log,
        },
      );
      if (done.alreadyCommitted) return earlierResult(store, engine, ctx.scratchDir, snapshot, done.version);
      return resultOf(plan, snapshot, { committed_at: now, committed_version: done.version });
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= MAX_COMMIT_ATTEMPTS) throw err;
      // Another writer changed the files we remove (a crunch replaced them): plan again on its result.
      ctx.log.warn({ err: err.message, attempt }, "commit conflict; re-planning on the new snapshot");
      snapshot = await loadTable(store, engine, ctx.scratchDir);
      const planned = planExpiration(store, snapshot, plan.column, plan.cutoffDate);
      if ("reason" in planned)
        throw new JobError(`partition expiration can't run: ${planned.reason}`, { retryable: false });
      plan = planned;
      if (plan.files.length === 0) return resultOf(plan, snapshot);
    }
  }
}

/** A remove that takes the file's rows out of the table: `dataChange: true`, with its metadata. */
function expiredRemove(file: AddFile, deletionTimestamp: number): RemoveFile {
  return {
    path: file.path,
    rawPath: file.rawPath,
    deletionTimestamp,
    dataChange: true,
    extendedFileMetadata: true,
    partitionValues: file.partitionValues,
    size: file.size,
    tags: file.tags,
    deletionVector: null,
  };
}

/** A column name as Spark SQL reads it in a predicate: backquoted unless a plain identifier. */
function sqlName(column: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(column) ? column : `\`${column.replaceAll("`", "``")}\``;
}

/**
 * The result of this job's earlier commit at `version`: its summary from commitInfo, and its files
 * rebuilt from the log: the commit's removes, with the add actions the version before held for them.
 */
async function earlierResult(
  store: ObjectStore,
  engine: Engine,
  scratchDir: string,
  snapshot: Snapshot,
  version: number,
): Promise<PartitionExpirationResult> {
  const recorded = await recordedJobResult(store, snapshot, version, PartitionExpirationResultSchema);
  const record = snapshot.commits.find((c) => c.version === version) ?? (await readCommit(store, version, 0));
  const removed = new Set(record.actions.flatMap((a) => ("remove" in a ? [a.remove.rawPath] : [])));
  const before = await loadSnapshot(store, engine, {
    scratchDir: join(scratchDir, "before"),
    version: version - 1,
  });
  const files = before.files
    .filter((f) => removed.has(f.rawPath))
    .sort((a, b) => comparePaths(a.path, b.path))
    .map((f) => expiredFile(store, f));
  return { ...recorded, files, files_count: files.length, committed_version: version };
}

function expiredFile(store: ObjectStore, f: AddFile): ExpiredFile {
  return {
    path: keyOfFile(store, f) ?? f.path,
    size: f.size,
    partition_values: f.partitionValues,
    modification_time: f.modificationTime,
    stats: f.statsJson,
    tags: f.tags,
  };
}
