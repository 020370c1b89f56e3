/**
 * The hard delete job: physically delete the files of expired pending deletions, never one the
 * table references (Iceberg tables: `iceberg-hard-delete.ts`; Hive tables: `hive.ts`). The order keeps the window between
 * "checked" and "deleted" as small as it can be:
 *
 * 1. Refuse, per file, what is never deleted: paths inside `_delta_log/`, outside the table root, or
 *    not a valid key (`failed`, with the reason).
 * 2. HEAD every other file (`absent` when it is already gone). This is the slow part, so it comes
 *    before the table is read.
 * 3. Load the current snapshot: a file a live `add` references is `retained` (a writer or a recover
 *    put it back), with the version that added it.
 * 4. Delete in batches of 1,000 (one S3 DeleteObjects each). Right before each batch, the commits
 *    written since the snapshot are read, and files they add are `retained` too. Per-key errors are
 *    `failed` with the store's message.
 *
 * Tables with deletion vectors keep `deletion_vector_*.bin` files: a live file may reference one
 * without naming its path in `add.path`.
 */
import type { HardDeletePayload, HardDeleteResult } from "@lakesmith/shared/maintenance";
import { type Action, readCommit, type Snapshot } from "../delta/index.ts";
import type { JobContext } from "../registry.ts";
import { type ObjectStore, StoreError } from "../store/index.ts";
import {
  DELETE_BATCH,
  deleteUnreferenced,
  failed,
  type LiveReferences,
  type Outcome,
} from "./delete-batches.ts";
import { runHiveHardDelete } from "./hive.ts";
import { runIcebergHardDelete } from "./iceberg-hard-delete.ts";
import {
  headAll,
  isLogKey,
  keyOfFile,
  keyOfPath,
  loadTable,
  type MaintenanceOptions,
  requireDelta,
  withEngine,
} from "./table.ts";

export { DELETE_BATCH };

export async function runHardDelete(
  ctx: JobContext<HardDeletePayload>,
  options: MaintenanceOptions,
): Promise<HardDeleteResult> {
  const started = Date.now();
  const { payload, signal } = ctx;
  const store = options.store;
  if (payload.format === "iceberg") return runIcebergHardDelete(ctx, options);
  if (payload.format === "hive") return runHiveHardDelete(ctx, options);
  requireDelta(payload.format, "hard delete");

  const outcomes = new Map<string, Outcome>();
  const keyOf = new Map<string, string>();
  for (const { path } of payload.files) {
    if (outcomes.has(path) || keyOf.has(path)) continue;
    const where = keyOfPath(store, path);
    if ("refused" in where) outcomes.set(path, failed(`never deleted: ${where.refused}`));
    else if (isLogKey(where.key))
      outcomes.set(path, failed("never deleted: it is inside the Delta log (_delta_log/)"));
    else keyOf.set(path, where.key);
  }

  ctx.progress({ phase: "checking", files: keyOf.size });
  const heads = await headAll(store, [...new Set(keyOf.values())], signal);

  return withEngine(ctx.scratchDir, options.memoryLimitMb, async (engine) => {
    ctx.progress({ phase: "loading" });
    const snapshot = await loadTable(store, engine, ctx.scratchDir);
    const refs = new References(store, snapshot);
    return deleteUnreferenced(ctx, { store, keyOf, heads, outcomes, refs, started });
  });
}

/**
 * The table's live references, from a snapshot and then from every commit written after it. A
 * path only ever gains a reference here: a later remove never makes a file deletable in this job.
 */
class References implements LiveReferences {
  version: number;
  private readonly live = new Set<string>();
  private readonly addedIn = new Map<string, number>();
  private hasDeletionVectors: boolean;

  constructor(
    private readonly store: ObjectStore,
    private readonly snapshot: Snapshot,
  ) {
    this.version = snapshot.version;
    for (const file of snapshot.files) {
      const key = keyOfFile(store, file);
      if (key !== undefined) this.live.add(key);
    }
    for (const commit of snapshot.commits) this.noteAdds(commit.actions, commit.version);
    this.hasDeletionVectors = snapshot.files.some((f) => f.deletionVector);
  }

  /** Why the key must be kept (which version references it), or null when nothing does. */
  of(key: string): string | null {
    const name = key.slice(key.lastIndexOf("/") + 1);
    if (this.hasDeletionVectors && name.startsWith("deletion_vector_"))
      return `the table at version ${this.version} has deletion vectors; this may be one of them`;
    if (!this.live.has(key)) return null;
    const added = this.addedIn.get(key);
    const source =
      added !== undefined
        ? `added in version ${added}`
        : `added at or before checkpoint version ${this.snapshot.checkpointVersion ?? 0}`;
    return `referenced by the table's version ${this.version} (${source})`;
  }

  /** Reads the commits written since the last look, until the next version does not exist. */
  async catchUp(): Promise<void> {
    for (;;) {
      let actions: Action[];
      try {
        actions = (await readCommit(this.store, this.version + 1, 0)).actions;
      } catch (err) {
        if (err instanceof StoreError && err.code === "not_found") return;
        throw err;
      }
      this.version++;
      for (const action of actions) {
        if (!("add" in action)) continue;
        const key = keyOfFile(this.store, action.add);
        if (key !== undefined) this.live.add(key);
        if (action.add.deletionVector) this.hasDeletionVectors = true;
      }
      this.noteAdds(actions, this.version);
    }
  }

  private noteAdds(actions: readonly Action[], version: number): void {
    for (const action of actions) {
      if (!("add" in action)) continue;
      const key = keyOfFile(this.store, action.add);
      if (key !== undefined) this.addedIn.set(key, version);
    }
  }
}
