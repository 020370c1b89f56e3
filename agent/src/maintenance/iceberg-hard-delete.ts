/**
 * The hard delete job on an Iceberg table: delete the files of expired pending deletions, never one
 * a snapshot still in the metadata references. The steps and their order are `hard-delete.ts`'s:
 *
 * 1. Refuse, per file: metadata JSON files, `version-hint.text` and their checksums, paths outside
 *    the table root, invalid keys (`failed`, with the reason).
 * 2. HEAD every other file (`absent` when it is already gone).
 * 3. Load the current metadata (refusing the tables vacuum refuses) and read the references of
 *    every snapshot it holds, whatever the retention policy would say: such a file is `retained`.
 * 4. Delete in batches. Right before each, a newer metadata version (`v<N+1>` exists) is loaded
 *    and the references of its snapshots are added: within the job a path only gains references.
 *    Per-key errors are `failed` with the store's message.
 */

import type { HardDeletePayload, HardDeleteResult } from "@lakesmith/shared/maintenance";
import { permanentIcebergError } from "../formats/iceberg.ts";
import { type IcebergTable, keyOfPath, METADATA_DIR } from "../iceberg/index.ts";
import { type JobContext, JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { checkKey } from "../store/keys.ts";
import {
  DELETE_BATCH,
  deleteUnreferenced,
  failed,
  type LiveReferences,
  type Outcome,
} from "./delete-batches.ts";
import { isMetadataKey, loadIcebergForDeletion, SnapshotReferences } from "./iceberg-table.ts";
import { headAll, type MaintenanceOptions } from "./table.ts";

export async function runIcebergHardDelete(
  ctx: JobContext<HardDeletePayload>,
  options: MaintenanceOptions,
  batchSize = DELETE_BATCH,
): Promise<HardDeleteResult> {
  const started = Date.now();
  const { payload, signal } = ctx;
  const store = options.store;

  const outcomes = new Map<string, Outcome>();
  const keyOf = new Map<string, string>();
  for (const { path } of payload.files) {
    if (outcomes.has(path) || keyOf.has(path)) continue;
    const where = keyOfPayloadPath(store, path);
    if ("refused" in where) outcomes.set(path, failed(`never deleted: ${where.refused}`));
    else if (isMetadataKey(where.key))
      outcomes.set(
        path,
        failed("never deleted: it is the table's metadata (a metadata file or the version hint)"),
      );
    else keyOf.set(path, where.key);
  }

  ctx.progress({ phase: "checking", files: keyOf.size });
  const heads = await headAll(store, [...new Set(keyOf.values())], signal);

  ctx.progress({ phase: "loading" });
  const refs = new References(store, signal);
  await refs.load();
  return deleteUnreferenced(ctx, { store, keyOf, heads, outcomes, refs, batchSize, started });
}

/** A payload path (a key relative to the root, or a URI under it) as a store key, or why it is not one. */
export function keyOfPayloadPath(store: ObjectStore, path: string): { key: string } | { refused: string } {
  const absolute = path.startsWith("/") || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path);
  const key = absolute ? keyOfPath(path, store.uri, store.uri) : path;
  if (key === null) return { refused: `'${path}' is outside the table root ${store.uri}` };
  try {
    checkKey(key);
  } catch (err) {
    return { refused: (err as Error).message };
  }
  return { key };
}

/** Every file any snapshot of the table's metadata references, from the version loaded on. */
class References implements LiveReferences {
  version = 0;
  private table: IcebergTable | undefined;
  private readonly reader: SnapshotReferences;
  /** Key → the first snapshot (and metadata version) found referencing it. */
  private readonly referencedBy = new Map<string, string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly signal: AbortSignal,
  ) {
    this.reader = new SnapshotReferences(store);
  }

  /** Loads the current metadata and notes its snapshots' references. */
  async load(): Promise<void> {
    const { table, version } = await loadIcebergForDeletion(this.store, "hard delete");
    try {
      await this.reader.read(table, table.metadata.snapshots, this.signal);
    } catch (err) {
      throw permanentIcebergError(err, this.store.uri);
    }
    for (const snapshot of table.metadata.snapshots) {
      const missing = this.reader.missingOf(snapshot);
      if (missing.length > 0)
        throw new JobError(
          `snapshot ${snapshot.snapshotId} of metadata version ${version} references ${missing[0]}, which does not exist; ` +
            "the table is damaged and the job can't tell which files it still needs. Nothing more was deleted",
          { retryable: false },
        );
      for (const file of this.reader.filesOf(table, snapshot))
        if (file.key !== null && !this.referencedBy.has(file.key))
          this.referencedBy.set(file.key, `snapshot ${snapshot.snapshotId} of metadata version ${version}`);
    }
    this.table = table;
    this.version = version;
  }

  /** Why the key must be kept, or null when no snapshot references it. */
  of(key: string): string | null {
    const by = this.referencedBy.get(key);
    return by === undefined ? null : `referenced by ${by}`;
  }

  /** Loads the metadata again where a newer version exists (a writer commits `v<N+1>` first). */
  async catchUp(): Promise<void> {
    if (!this.table) return this.load();
    const next = this.version + 1;
    const names = [`v${next}.metadata.json`, `v${next}.gz.metadata.json`, `v${next}.metadata.json.gz`];
    const found = await Promise.all(names.map((n) => this.store.head(`${METADATA_DIR}${n}`)));
    if (found.some((f) => f !== undefined)) await this.load();
  }
}
