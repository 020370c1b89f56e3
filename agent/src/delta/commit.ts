/**
 * Committing to a Delta table: optimistic concurrency on put-if-absent of the next log entry.
 *
 * 1. Write `_delta_log/<snapshot.version + 1>.json` (commitInfo first, then the actions) with
 *    `writeIfAbsent`. Winning ends the commit.
 * 2. Losing means someone else holds that version. Read it: if its `commitInfo` carries our job id
 *    (`lakesmithJobId`, see `JOB_ID_FIELD`), our own earlier attempt won and we are done; if it
 *    removed a file we remove, or changed the metadata or protocol, our plan is stale and a
 *    `ConflictError` tells the caller to re-plan; otherwise (an append, a txn) our rewrite is still
 *    valid on top of it, and we try the next version.
 * 3. A `conflict` outcome (S3 409: a concurrent conditional write in flight) retries the same version.
 *
 * Bounded by `maxAttempts` writes. After a win, a checkpoint is written when the version is a
 * multiple of `delta.checkpointInterval`; its failure is logged, never thrown: the commit stands.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import type { z } from "zod";
import type { Engine } from "../engine/duckdb.ts";
import { ConflictError } from "../formats/conflict.ts";
import { JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { AGENT_VERSION } from "../version.ts";
import { type AddFile, addToJson, type RemoveFile, removeToJson } from "./actions.ts";
import { checkpointInterval, writeCheckpoint } from "./checkpoint.ts";
import { commitKey, DeltaLogError, listLog } from "./log.ts";
import { writeRefusal } from "./protocol.ts";
import { type CommitRecord, loadSnapshot, readCommit, readCommits, type Snapshot } from "./snapshot.ts";

/** The `commitInfo` field that names the Lakesmith job that made a commit. */
export const JOB_ID_FIELD = "lakesmithJobId";
/** The `commitInfo` field that carries the job's result, so a retried job can answer with it. */
export const JOB_RESULT_FIELD = "lakesmithResult";
/**
 * How many versions back a retried job looks for its own earlier commit. A retry comes within
 * minutes of the attempt it repeats; only a table committed to this often in between could hide one.
 */
export const OWN_COMMIT_LOOKBACK = 1000;

export { ConflictError };

export type FileAction = { add: AddFile } | { remove: RemoveFile };

export interface CommitOptions {
  jobId: string;
  /** Delta's operation name, e.g. `OPTIMIZE`. */
  operation: string;
  operationParameters: Record<string, unknown>;
  operationMetrics?: Record<string, unknown>;
  /** More `commitInfo` fields (a job's result); they never replace the fields above. */
  commitInfo?: Record<string, unknown>;
  engine: Engine;
  scratchDir: string;
  /** Most log writes to try before giving up (default 10). */
  maxAttempts?: number;
  clock?: Clock;
  log?: { warn(details: object, message: string): void };
}

export interface CommitResult {
  version: number;
  /** True when the version was committed by an earlier attempt of the same job. */
  alreadyCommitted: boolean;
  attempts: number;
  /** The checkpoint written after the commit, its error, or null when none was due. */
  checkpoint: { version: number } | { error: string } | null;
}

const CONFLICT_BACKOFF_MS = 50;

/** Commits `actions` on top of `snapshot` (see the module comment for the protocol). */
export async function commit(
  store: ObjectStore,
  snapshot: Snapshot,
  actions: readonly FileAction[],
  options: CommitOptions,
): Promise<CommitResult> {
  const refusal = writeRefusal(snapshot);
  if (refusal) throw new DeltaLogError("unsupported", refusal);
  const own = snapshot.commits.find((c) => c.commitInfo?.[JOB_ID_FIELD] === options.jobId);
  if (own) return { version: own.version, alreadyCommitted: true, attempts: 0, checkpoint: null };

  const active = new Set(snapshot.files.map((f) => f.rawPath));
  const removed = new Set<string>();
  for (const action of actions) {
    if (!("remove" in action)) continue;
    if (!active.has(action.remove.rawPath))
      throw new ConflictError(
        `'${action.remove.path}' is not an active file at version ${snapshot.version}`,
        snapshot.version,
      );
    removed.add(action.remove.rawPath);
  }

  const clock = options.clock ?? systemClock;
  const maxAttempts = options.maxAttempts ?? 10;
  let version = snapshot.version + 1;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const body = commitBody(snapshot, actions, options, clock.now().getTime());
    const result = await store.writeIfAbsent(commitKey(version), body);
    if (result.written) {
      const checkpoint = await checkpointIfDue(store, snapshot, version, options);
      return { version, alreadyCommitted: false, attempts: attempt, checkpoint };
    }
    if (result.reason === "conflict") {
      await sleep(CONFLICT_BACKOFF_MS * attempt);
      continue;
    }
    const winner = await readCommit(store, version, 0);
    if (winner.commitInfo?.[JOB_ID_FIELD] === options.jobId)
      return { version, alreadyCommitted: true, attempts: attempt, checkpoint: null };
    const conflict = conflictWith(winner, removed);
    if (conflict)
      throw new ConflictError(`version ${version} ${conflict}; re-plan from a fresh snapshot`, version);
    version++;
  }
  throw new ConflictError(
    `gave up after ${maxAttempts} attempts: other writers kept taking the next version (last tried ${version})`,
    version,
  );
}

/** What in `winner` makes our commit invalid, or null when ours still applies on top of it. */
function conflictWith(winner: CommitRecord, removed: ReadonlySet<string>): string | null {
  for (const action of winner.actions) {
    if ("metaData" in action) return "changed the table's metadata";
    if ("protocol" in action) return "changed the table's protocol";
    if ("remove" in action && removed.has(action.remove.rawPath))
      return `also removed '${action.remove.path}', which this commit removes`;
  }
  return null;
}

function commitBody(
  snapshot: Snapshot,
  actions: readonly FileAction[],
  options: CommitOptions,
  now: number,
): string {
  const commitInfo = {
    ...options.commitInfo,
    timestamp: now,
    operation: options.operation,
    operationParameters: stringValues(options.operationParameters),
    ...(options.operationMetrics ? { operationMetrics: stringValues(options.operationMetrics) } : {}),
    readVersion: snapshot.version,
    isolationLevel: "SnapshotIsolation",
    isBlindAppend: false,
    engineInfo: `lakesmith-agent/${AGENT_VERSION}`,
    txnId: randomUUID(),
    [JOB_ID_FIELD]: options.jobId,
  };
  const lines = [JSON.stringify({ commitInfo })];
  for (const action of actions) {
    if ("add" in action) lines.push(JSON.stringify({ add: addToJson(action.add) }));
    else
      lines.push(
        JSON.stringify({
          remove: removeToJson({
            ...action.remove,
            deletionTimestamp: action.remove.deletionTimestamp ?? now,
          }),
        }),
      );
  }
  return `${lines.join("\n")}\n`;
}

/** Spark's convention: operation parameters and metrics are strings (JSON for non-strings). */
function stringValues(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

async function checkpointIfDue(
  store: ObjectStore,
  snapshot: Snapshot,
  version: number,
  options: CommitOptions,
): Promise<CommitResult["checkpoint"]> {
  if (version % checkpointInterval(snapshot) !== 0) return null;
  try {
    const after = await loadSnapshot(store, options.engine, { scratchDir: options.scratchDir, version });
    await writeCheckpoint(store, options.engine, after, {
      scratchDir: options.scratchDir,
      clock: options.clock,
    });
    return { version };
  } catch (err) {
    const error = (err as Error).message;
    options.log?.warn({ version, error }, "Delta checkpoint failed; the commit stands");
    return { error };
  }
}

/**
 * The version a job committed, if it did: first the commits the snapshot read, then older JSON
 * commits back to `sinceVersion` (the version the job first planned against), skipping any the log
 * no longer has. Null when the job has no commit.
 */
export async function findJobCommit(
  store: ObjectStore,
  snapshot: Pick<Snapshot, "commits" | "version">,
  jobId: string,
  options: { sinceVersion?: number } = {},
): Promise<number | null> {
  const inMemory = snapshot.commits.find((c) => c.commitInfo?.[JOB_ID_FIELD] === jobId);
  if (inMemory) return inMemory.version;
  const firstRead = snapshot.commits[0]?.version ?? snapshot.version + 1;
  const since = options.sinceVersion ?? firstRead;
  if (since >= firstRead) return null;
  const listing = await listLog(store);
  const present = new Map([...listing.commits].filter(([v]) => v >= since && v < firstRead));
  for (const [from, to] of runs([...present.keys()].sort((a, b) => a - b))) {
    const found = (await readCommits(store, { commits: present }, from, to)).find(
      (c) => c.commitInfo?.[JOB_ID_FIELD] === jobId,
    );
    if (found) return found.version;
  }
  return null;
}

/** Consecutive runs of sorted versions, as [first, last] pairs. */
function runs(versions: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const v of versions) {
    const last = out.at(-1);
    if (last && last[1] === v - 1) last[1] = v;
    else out.push([v, v]);
  }
  return out;
}

/**
 * What the job that made the commit at `version` recorded under `JOB_RESULT_FIELD`, as `schema`
 * reads it: a retried job reports its earlier commit with this. The snapshot's own commits are
 * used when they hold the version. A missing or unreadable result fails the job for good: the
 * commit is made and must not be made again.
 */
export async function recordedJobResult<T>(
  store: ObjectStore,
  snapshot: Pick<Snapshot, "commits">,
  version: number,
  schema: z.ZodType<T>,
): Promise<T> {
  const record = snapshot.commits.find((c) => c.version === version) ?? (await readCommit(store, version, 0));
  const parsed = schema.safeParse(record.commitInfo?.[JOB_RESULT_FIELD]);
  if (!parsed.success)
    throw new JobError(`this job already committed version ${version}, without a readable result`, {
      retryable: false,
    });
  return parsed.data;
}
