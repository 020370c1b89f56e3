/**
 * Holding a metastore lock around a change (a partition's or a table's location swap, an Iceberg
 * `metadata_location` swap): `withTableLock`.
 *
 * - Takes an EXCLUSIVE (or SHARED_WRITE) lock on the table, or on one partition, with `lock`; while
 *   the metastore answers WAITING, polls `check_lock` (25 ms doubling to 1 s) until ACQUIRED. After
 *   `waitMs` (default 60 s) it gives up with a `locked` error naming the table, and withdraws the waiting request.
 *   ABORT or NOT_ACQUIRED fail at once.
 * - While `fn` runs, heartbeats every `heartbeatMs` (default 60 s, well inside Hive's default
 *   `hive.txn.timeout` of 300 s). A heartbeat the metastore refuses (the lock was aborted) aborts
 *   the `signal` handed to `fn`: check it right before committing.
 * - Always unlocks, whether `fn` returned or threw; `fn`'s own error wins. An unlock that fails
 *   (connection gone) is left to the metastore, which drops an unheard-of lock after its timeout.
 */
import type { HiveMetastoreClient, LockStateName } from "./client.ts";
import { HiveMetastoreError } from "./errors.ts";

export interface TableLockScope {
  db: string;
  table: string;
  /** A partition's name (`a=1/b=2`): lock only it; absent: the table. */
  partition?: string;
}

export interface TableLockOptions extends TableLockScope {
  /** EXCLUSIVE when true, else SHARED_WRITE. */
  exclusive: boolean;
  /** How long to wait for another holder to let go. Default 60 s. */
  waitMs?: number;
  heartbeatMs?: number;
}

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;
const DEFAULT_HEARTBEAT_MS = 60_000;
const DEFAULT_WAIT_MS = 60_000;

export async function withTableLock<T>(
  client: HiveMetastoreClient,
  options: TableLockOptions,
  fn: (held: { lockId: number; signal: AbortSignal }) => Promise<T>,
): Promise<T> {
  const what = `${options.db}.${options.table}${options.partition ? ` partition ${options.partition}` : ""}`;
  const type = options.exclusive ? "EXCLUSIVE" : "SHARED_WRITE";
  const { lockId, state } = await client.lock(options, type);
  try {
    await waitForLock(client, lockId, state, what, options.waitMs ?? DEFAULT_WAIT_MS);
  } catch (err) {
    await client.unlock(lockId).catch(() => undefined);
    throw err;
  }
  const lost = new AbortController();
  const heartbeat = setInterval(() => {
    client.heartbeat(lockId).catch((err: unknown) => {
      if (!lost.signal.aborted) lost.abort(err);
    });
  }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  try {
    return await fn({ lockId, signal: lost.signal });
  } finally {
    clearInterval(heartbeat);
    await client.unlock(lockId).catch(() => undefined);
  }
}

async function waitForLock(
  client: HiveMetastoreClient,
  lockId: number,
  first: LockStateName,
  what: string,
  waitMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let state = first;
  let pause = FIRST_POLL_MS;
  while (state === "WAITING") {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new HiveMetastoreError(
        "locked",
        "check_lock",
        `Hive Metastore ${client.uri}: ${what} is locked by another writer; lock ${lockId} still WAITING after ${waitMs} ms, try again later`,
      );
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, MAX_POLL_MS);
    state = await client.checkLock(lockId);
  }
  if (state !== "ACQUIRED")
    throw new HiveMetastoreError(
      "metastore",
      "lock",
      `Hive Metastore ${client.uri}: the lock on ${what} was not granted (${state})`,
    );
}
