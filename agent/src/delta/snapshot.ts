/**
 * Loading a Delta snapshot: the newest complete classic checkpoint at or below the wanted version
 * (found by listing, `_last_checkpoint` being only a hint), then every JSON commit after it, in
 * order (PROTOCOL.md "Action Reconciliation"). Active files and tombstones are keyed by path and
 * deletion vector id, the latest action winning; txn and domain metadata by their ids.
 *
 * The commits read are kept with their `commitInfo`, so a retried job can find a commit it made
 * before it crashed (`findJobCommit`). Memory is proportional to the table's file count.
 *
 * @example
 * const snapshot = await loadSnapshot(store, engine, { scratchDir });
 * const refusal = writeRefusal(snapshot); // null when the agent may rewrite it
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { readCheckpointActions } from "../engine/checkpoint.ts";
import type { Engine } from "../engine/duckdb.ts";
import type { ObjectInfo, ObjectStore } from "../store/index.ts";
import {
  type Action,
  type AddFile,
  type CommitInfo,
  type DeletionVector,
  type DomainMetadata,
  type Metadata,
  type Protocol,
  parseAction,
  parseCommit,
  type RemoveFile,
  type Txn,
} from "./actions.ts";
import { commitKey, DeltaLogError, type LogListing, listLog, readLastCheckpoint, readText } from "./log.ts";

export interface CommitRecord {
  version: number;
  /** The commit's `commitInfo`, or null where it had none. */
  commitInfo: CommitInfo | null;
  /** In-commit timestamp when the commit has one, else the log file's modification time (ms). */
  timestamp: number;
  /** The commit's actions, for conflict checks. */
  actions: Action[];
}

export interface Snapshot {
  version: number;
  protocol: Protocol;
  metadata: Metadata;
  /** Active files, in no particular order. */
  files: AddFile[];
  /** Removes not yet superseded by an add, as the log holds them (vacuum decides what expired). */
  tombstones: RemoveFile[];
  txns: Map<string, Txn>;
  /** Domain metadata in effect (removed domains are left out). */
  domains: Map<string, DomainMetadata>;
  /** The JSON commits read after the checkpoint, oldest first. */
  commits: CommitRecord[];
  /** The checkpoint the snapshot started from, if any. */
  checkpointVersion: number | null;
  /** When the snapshot's version was committed (ms since the epoch). */
  timestamp: number;
}

export interface LoadOptions {
  /** A folder for checkpoint downloads; files are removed after reading. */
  scratchDir: string;
  /** The version to load; the latest when absent. */
  version?: number;
}

/** The key that identifies a logical file: its path plus its deletion vector, if any. */
export function fileKey(path: string, dv: DeletionVector | null | undefined): string {
  return dv ? `${path}\u0000${dv.storageType}${dv.pathOrInlineDv}@${dv.offset ?? ""}` : path;
}

/** Loads the snapshot of a Delta table at `options.version` (or the latest). */
export async function loadSnapshot(
  store: ObjectStore,
  engine: Engine,
  options: LoadOptions,
): Promise<Snapshot> {
  const listing = await listLog(store);
  const latest = Math.max(-1, ...listing.commits.keys(), ...listing.checkpoints.keys());
  if (latest < 0)
    throw new DeltaLogError("not_a_table", `no Delta log under ${store.uri}${"_delta_log/"} (no commits)`);
  const target = options.version ?? latest;
  if (target > latest)
    throw new DeltaLogError("missing_version", `version ${target} does not exist; the latest is ${latest}`);

  const checkpointVersion = await chooseCheckpoint(store, listing, target);
  const first = checkpointVersion === null ? 0 : checkpointVersion + 1;
  for (let v = first; v <= target; v++) {
    if (!listing.commits.has(v)) throw missingCommit(listing, v, target);
  }

  const state = new LogState();
  if (checkpointVersion !== null) {
    const parts = listing.checkpoints.get(checkpointVersion) ?? [];
    await readCheckpoint(store, engine, parts, options.scratchDir, (action) => {
      if ("sidecar" in action)
        throw new DeltaLogError(
          "unsupported",
          `checkpoint ${checkpointVersion} is a V2 checkpoint with sidecar files, which the agent does not read`,
        );
      state.apply(action);
    });
  }
  const commits = await readCommits(store, listing, first, target);
  for (const commit of commits) for (const action of commit.actions) state.apply(action);

  if (!state.protocol || !state.metadata)
    throw new DeltaLogError(
      "corrupt",
      `the log up to version ${target} has no ${state.protocol ? "metaData" : "protocol"}`,
    );
  const last = commits.at(-1);
  const timestamp =
    last?.version === target
      ? last.timestamp
      : ((listing.commits.get(target) ?? listing.checkpoints.get(target)?.[0])?.lastModified.getTime() ?? 0);
  return {
    version: target,
    protocol: state.protocol,
    metadata: state.metadata,
    files: [...state.files.values()],
    tombstones: [...state.tombstones.values()],
    txns: state.txns,
    domains: new Map([...state.domains].filter(([, d]) => !d.removed)),
    commits,
    checkpointVersion,
    timestamp,
  };
}

/**
 * The newest complete classic checkpoint at or below `target`. When `_last_checkpoint` names a V2
 * checkpoint the agent can't read and the JSON history alone can't rebuild the table, that is the
 * reason given.
 */
async function chooseCheckpoint(
  store: ObjectStore,
  listing: LogListing,
  target: number,
): Promise<number | null> {
  const classic = [...listing.checkpoints.keys()].filter((v) => v <= target);
  const best = classic.length > 0 ? Math.max(...classic) : null;
  const newerV2 = [...listing.v2Checkpoints].filter((v) => v <= target && v > (best ?? -1));
  if (newerV2.length > 0) {
    const from = best === null ? 0 : best + 1;
    const replayable = Array.from({ length: target - from + 1 }, (_, i) => from + i).every((v) =>
      listing.commits.has(v),
    );
    if (!replayable)
      throw new DeltaLogError(
        "unsupported",
        `version ${target} can only be read through a V2 (UUID-named) checkpoint at version ${Math.max(...newerV2)}, which the agent does not read`,
      );
  }
  if (best === null) {
    const hint = await readLastCheckpoint(store);
    if (hint && hint.version <= target && !listing.commits.has(0) && !hint.v2Checkpoint)
      throw new DeltaLogError(
        "missing_version",
        `_last_checkpoint names version ${hint.version}, but its checkpoint files are missing`,
      );
  }
  return best;
}

function missingCommit(listing: LogListing, version: number, target: number): DeltaLogError {
  const earliest = Math.min(...listing.commits.keys());
  return new DeltaLogError(
    "missing_version",
    `commit ${version} is missing, so version ${target} can't be rebuilt (the log's commits start at ${earliest}, and no checkpoint covers the gap)`,
  );
}

/** Hands every action of a checkpoint to `apply`, in file order, a chunk of rows at a time. */
async function readCheckpoint(
  store: ObjectStore,
  engine: Engine,
  parts: readonly ObjectInfo[],
  scratchDir: string,
  apply: (action: Action) => void,
): Promise<void> {
  const id = randomUUID();
  const local = parts.map((_, i) => join(scratchDir, `checkpoint-${id}-${i}.parquet`));
  await mkdir(scratchDir, { recursive: true });
  try {
    await Promise.all(parts.map((p, i) => store.download(p.key, local[i] as string)));
    for await (const raw of readCheckpointActions(engine, local))
      for (const json of raw) {
        const action = parseAction(json);
        if (action) apply(action);
      }
  } finally {
    await Promise.all(local.map((path) => rm(path, { force: true })));
  }
}

const COMMIT_READ_CONCURRENCY = 16;

/** Reads commits `from..to` (all present) with bounded concurrency, oldest first. */
export async function readCommits(
  store: ObjectStore,
  listing: Pick<LogListing, "commits">,
  from: number,
  to: number,
): Promise<CommitRecord[]> {
  const versions = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  const records: CommitRecord[] = [];
  for (let i = 0; i < versions.length; i += COMMIT_READ_CONCURRENCY) {
    const batch = versions.slice(i, i + COMMIT_READ_CONCURRENCY);
    records.push(
      ...(await Promise.all(
        batch.map((v) => readCommit(store, v, listing.commits.get(v)?.lastModified.getTime() ?? 0)),
      )),
    );
  }
  return records;
}

/** Reads one JSON commit. */
export async function readCommit(
  store: ObjectStore,
  version: number,
  modified: number,
): Promise<CommitRecord> {
  let actions: Action[];
  try {
    actions = parseCommit(await readText(store, commitKey(version)));
  } catch (err) {
    if (err instanceof SyntaxError)
      throw new DeltaLogError("corrupt", `commit ${version} is not valid JSON: ${err.message}`);
    throw err;
  }
  const info = actions.find((a): a is { commitInfo: CommitInfo } => "commitInfo" in a)?.commitInfo ?? null;
  const ict = info?.inCommitTimestamp;
  return {
    version,
    commitInfo: info,
    timestamp: typeof ict === "number" ? ict : modified,
    actions,
  };
}

/** The reconciled state of the log as actions are applied in order. */
class LogState {
  protocol: Protocol | undefined;
  metadata: Metadata | undefined;
  readonly files = new Map<string, AddFile>();
  readonly tombstones = new Map<string, RemoveFile>();
  readonly txns = new Map<string, Txn>();
  readonly domains = new Map<string, DomainMetadata>();

  apply(action: Action): void {
    if ("add" in action) {
      const key = fileKey(action.add.path, action.add.deletionVector);
      this.files.set(key, action.add);
      this.tombstones.delete(key);
    } else if ("remove" in action) {
      const key = fileKey(action.remove.path, action.remove.deletionVector);
      this.files.delete(key);
      this.tombstones.set(key, action.remove);
    } else if ("metaData" in action) this.metadata = action.metaData;
    else if ("protocol" in action) this.protocol = action.protocol;
    else if ("txn" in action) this.txns.set(action.txn.appId, action.txn);
    else if ("domainMetadata" in action)
      this.domains.set(action.domainMetadata.domain, action.domainMetadata);
  }
}
