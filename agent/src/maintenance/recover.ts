/**
 * The recover job (Hive tables: `hive.ts`): put the files of an expired partition back into a Delta table, with one commit
 * of `add` actions that repeat each file's original add (size, partition values, stats, tags,
 * modification time) with `dataChange: true`, since the rows return.
 *
 * 1. Load the snapshot. A retried job whose earlier attempt committed reports that commit's result.
 * 2. Check every file: its partition columns must still be the table's; a file the table references
 *    again is `already_live`; every other one must still be in the store, at its recorded size (one
 *    HEAD each). A file whose data is gone fails the job for good, naming it: nothing is committed.
 * 3. Commit the adds (operation WRITE, mode Append) with the result in commitInfo. A conflicting
 *    commit (a metadata change) means re-loading and checking again.
 */
import { join } from "node:path";
import { type RecoverPayload, type RecoverResult, RecoverResultSchema } from "@lakesmith/shared/maintenance";
import {
  type AddFile,
  ConflictError,
  commit,
  encodePath,
  findJobCommit,
  JOB_RESULT_FIELD,
  OWN_COMMIT_LOOKBACK,
  recordedJobResult,
  type Snapshot,
} from "../delta/index.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { runHiveRecover } from "./hive.ts";
import {
  headAll,
  keyOfFile,
  keyOfPath,
  loadTable,
  type MaintenanceOptions,
  refuseUnwritable,
  requireDelta,
  withEngine,
} from "./table.ts";

const MAX_COMMIT_ATTEMPTS = 3;
/** How many files a failure names before it summarises the rest. */
const NAMED_FILES = 5;

type RecoverFile = RecoverPayload["files"][number];

export async function runRecover(
  ctx: JobContext<RecoverPayload>,
  options: MaintenanceOptions,
): Promise<RecoverResult> {
  const started = Date.now();
  const { payload, log } = ctx;
  const store = options.store;
  if (payload.format === "hive") return runHiveRecover(ctx, options);
  requireDelta(payload.format, "recover");
  return withEngine(ctx.scratchDir, options.memoryLimitMb, async (engine) => {
    ctx.progress({ phase: "loading" });
    let snapshot = await loadTable(store, engine, ctx.scratchDir);
    const earlier = await findJobCommit(store, snapshot, ctx.job.id, {
      sinceVersion: Math.max(0, snapshot.version - OWN_COMMIT_LOOKBACK),
    });
    if (earlier !== null) {
      log.info({ version: earlier }, "this job committed in an earlier attempt; reporting that commit");
      return earlierResult(store, snapshot, earlier);
    }

    for (let attempt = 1; ; attempt++) {
      refuseUnwritable(snapshot, "recover");
      ctx.progress({ phase: "checking", files: payload.files.length });
      const plan = await planRecover(store, snapshot, payload.files, ctx.signal);
      const result: RecoverResult = {
        committed_version: null,
        files: payload.files.map((f) => ({
          deletion_id: f.deletion_id,
          path: f.path,
          outcome: plan.live.has(f.path) ? "already_live" : "restored",
        })),
        duration_ms: Date.now() - started,
      };
      if (plan.adds.length === 0) return result;

      ctx.progress({ phase: "committing", files: plan.adds.length });
      try {
        const done = await commit(
          store,
          snapshot,
          plan.adds.map((add) => ({ add })),
          {
            jobId: ctx.job.id,
            operation: "WRITE",
            operationParameters: {
              mode: "Append",
              partitionBy: snapshot.metadata.partitionColumns,
            },
            operationMetrics: {
              numFiles: plan.adds.length,
              numOutputBytes: plan.adds.reduce((n, a) => n + a.size, 0),
            },
            commitInfo: { lakesmithOperation: "recover", [JOB_RESULT_FIELD]: result },
            engine,
            scratchDir: join(ctx.scratchDir, "commit"),
            log,
          },
        );
        if (done.alreadyCommitted) return earlierResult(store, snapshot, done.version);
        log.info({ version: done.version, files: plan.adds.length }, "files put back");
        return { ...result, committed_version: done.version, duration_ms: Date.now() - started };
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= MAX_COMMIT_ATTEMPTS) throw err;
        log.warn({ err: err.message, attempt }, "commit conflict; checking again on the new snapshot");
        snapshot = await loadTable(store, engine, ctx.scratchDir);
      }
    }
  });
}

interface RecoverPlan {
  /** Payload paths the table references already. */
  live: Set<string>;
  /** One add per distinct path to put back. */
  adds: AddFile[];
}

/** Checks every file against the snapshot and the store; throws a permanent `JobError` on the first problem. */
async function planRecover(
  store: ObjectStore,
  snapshot: Snapshot,
  files: readonly RecoverFile[],
  signal: AbortSignal,
): Promise<RecoverPlan> {
  const columns = snapshot.metadata.partitionColumns;
  const moved = files.filter((f) => !samePartitionColumns(Object.keys(f.partition_values), columns));
  if (moved.length)
    throw new JobError(
      `can't recover: the table's partition columns changed since the files were removed ` +
        `(${describe(moved, (f) => `'${f.path}' has ${Object.keys(f.partition_values).join(", ") || "none"}`)}; ` +
        `the table has ${columns.join(", ") || "none"})`,
      { retryable: false },
    );

  const liveKeys = new Set(snapshot.files.flatMap((f) => keyOfFile(store, f) ?? []));
  const live = new Set<string>();
  const wanted = new Map<string, RecoverFile>();
  for (const file of files) {
    const where = keyOfPath(store, file.path);
    if ("refused" in where)
      throw new JobError(`can't recover '${file.path}': ${where.refused}`, { retryable: false });
    if (liveKeys.has(where.key)) live.add(file.path);
    else if (!wanted.has(where.key)) wanted.set(where.key, file);
  }

  const heads = await headAll(store, [...wanted.keys()], signal);
  const gone = [...wanted].filter(([key]) => !heads.get(key));
  if (gone.length)
    throw new JobError(
      `can't recover: the data of ${describe(gone, ([key]) => `'${key}'`)} is gone (no object in ${store.uri})`,
      { retryable: false },
    );
  const changed = [...wanted].filter(([key, f]) => heads.get(key)?.size !== f.size);
  if (changed.length)
    throw new JobError(
      `can't recover: ${describe(changed, ([key, f]) => `'${key}' is ${heads.get(key)?.size} bytes, not the ${f.size} recorded`)}; the object was replaced`,
      { retryable: false },
    );

  const adds = [...wanted].map(([key, file]) => ({
    path: key,
    rawPath: encodePath(key),
    partitionValues: file.partition_values,
    size: file.size,
    modificationTime: file.modification_time,
    dataChange: true,
    stats: parseStats(file),
    statsJson: file.stats,
    tags: file.tags,
    deletionVector: null,
  }));
  return { live, adds };
}

function samePartitionColumns(keys: readonly string[], columns: readonly string[]): boolean {
  return keys.length === columns.length && keys.every((k) => columns.includes(k));
}

/** The recorded stats string must be JSON: the table's readers parse it. */
function parseStats(file: RecoverFile): AddFile["stats"] {
  if (file.stats === null) return null;
  try {
    return JSON.parse(file.stats) as AddFile["stats"];
  } catch {
    throw new JobError(`can't recover '${file.path}': its recorded stats are not JSON`, { retryable: false });
  }
}

function describe<T>(items: readonly T[], name: (item: T) => string): string {
  const named = items.slice(0, NAMED_FILES).map(name).join(", ");
  return items.length > NAMED_FILES ? `${named} and ${items.length - NAMED_FILES} more` : named;
}

async function earlierResult(
  store: ObjectStore,
  snapshot: Snapshot,
  version: number,
): Promise<RecoverResult> {
  return {
    ...(await recordedJobResult(store, snapshot, version, RecoverResultSchema)),
    committed_version: version,
  };
}
