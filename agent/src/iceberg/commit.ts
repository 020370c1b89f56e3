/**
 * Committing a `replace` snapshot (a compaction: files swapped for others holding the same rows),
 * or an `append` one where no file is removed, to a path-based Iceberg table, format v1 or v2 (spec
 * "Commit Conflict Resolution and Retry / File System Tables"). Optimistic concurrency on
 * put-if-absent of the next metadata file:
 * 1. Plan, reading only: the removed files must be live data files of `base`, which must be the
 *    table's current snapshot (null for a table with none: its first snapshot, which only adds);
 *    a new random snapshot id and (v2) sequence number last + 1.
 * 2. Write the new manifests (`commit-manifests.ts`) and the manifest list
 *    `metadata/snap-<id>-1-<uuid>.avro`, every location recorded under the table's `location`.
 *    Steps 1 and 2 are `prepareSnapshot`, which a commit through a catalog shares (`rest/replace.ts`).
 * 3. Write `metadata/v<N+1>.metadata.json`, the current metadata plus the snapshot, with
 *    `writeIfAbsent`: that write is the commit. Losing it returns `{ committed: false }` and leaves
 *    the files of step 2 unreferenced; the caller reloads, checks its files are still live, retries.
 * 4. Point `metadata/version-hint.text` at N+1; a failure there leaves the commit standing.
 * Nothing is ever deleted. Tables whose metadata a catalog names (not `vN`), whose recorded
 * location is elsewhere, or of format v3+ are refused before anything is written.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { ObjectStore } from "../store/index.ts";
import {
  addedManifest,
  carriedManifest,
  type NewDataFile,
  type NewSnapshot,
  rewrittenManifest,
  type WrittenManifest,
} from "./commit-manifests.ts";
import { stringifyJson } from "./json.ts";
import { METADATA_DIR } from "./locate.ts";
import type { ManifestEntry } from "./manifest.ts";
import type { ManifestFile } from "./manifest-list.ts";
import { encodeManifestList } from "./manifest-write.ts";
import { publishMetadata, withPreviousFile, writableTable, writableVersion } from "./metadata-file.ts";
import type { SnapshotFiles } from "./snapshot-files.ts";
import { type IcebergTable, keyOf } from "./table.ts";
import type { IcebergValue } from "./values.ts";

export type { NewDataFile } from "./commit-manifests.ts";
export { metadataVersion } from "./metadata-file.ts";

export interface ReplaceCommit {
  /**
   * What `readSnapshotFiles` returned for the snapshot the rewrite planned against (the current
   * one), or null for a table without a current snapshot (then nothing can be removed).
   */
  base: SnapshotFiles | null;
  /** Live data entries of `base` being replaced (compared by path); none makes an `append`. */
  removed: readonly ManifestEntry[];
  added: readonly NewDataFile[];
  /** Extra snapshot summary properties, e.g. `{ "lakesmith.job-id": "job_1" }`; never replace the standard ones. */
  summary: Record<string, string>;
  nowMs: number;
}

export type CommitOutcome =
  | { committed: true; metadataKey: string; version: number; snapshotId: bigint; sequenceNumber: number }
  | { committed: false; reason: "exists" | "conflict" };

const MAX_SNAPSHOT_ID = (1n << 63n) - 1n;
/** Manifests read (to rewrite, or to describe a v1 one) at a time. */
const MANIFEST_CONCURRENCY = 16;

/**
 * Commits a snapshot that swaps `removed` for `added` on top of `base`: a `replace`, or an
 * `append` where `removed` is empty.
 *
 * @example
 * const base = await readSnapshotFiles(store, table);
 * const outcome = await commitReplace(store, table, { base, removed: base.entries, added, summary: {}, nowMs: Date.now() });
 * if (!outcome.committed) // another writer took the next version: reload, check, retry
 */
export async function commitReplace(
  store: ObjectStore,
  table: IcebergTable,
  change: ReplaceCommit,
): Promise<CommitOutcome> {
  const version = writableVersion(table);
  const prepared = await prepareSnapshot(store, table, change);
  const outcome = await publishMetadata(store, version, prepared.metadata);
  if (!outcome.committed) return outcome;
  return { ...outcome, snapshotId: prepared.snapshotId, sequenceNumber: prepared.sequenceNumber };
}

/** A snapshot written (manifests and manifest list) but not yet committed. */
export interface PreparedSnapshot {
  snapshotId: bigint;
  sequenceNumber: number;
  /** The snapshot as the metadata JSON (and a catalog's `add-snapshot`) spell it. */
  snapshot: Record<string, unknown>;
  /** The table's next metadata JSON: the current one with the snapshot appended and made current. */
  metadata: Record<string, unknown>;
}

/**
 * Steps 1 and 2 of a commit: plans the snapshot and writes its manifests and manifest list, for a
 * commit by file (`commitReplace`) or through a catalog (`rest-commit.ts`). The files written are
 * unreferenced until the commit: nothing else changes.
 */
export async function prepareSnapshot(
  store: ObjectStore,
  table: IcebergTable,
  change: ReplaceCommit,
): Promise<PreparedSnapshot> {
  writableTable(table);
  const removed = removedEntries(table, change);
  const uuid = randomUUID();
  const to = newSnapshot(table, uuid);
  const parentId = change.base?.snapshot.snapshotId ?? null;
  const { written, listed } = await snapshotManifests(store, to, change, removed);
  const listKey = `${METADATA_DIR}snap-${to.snapshotId}-1-${uuid}.avro`;
  const list = encodeManifestList(
    table.metadata.formatVersion,
    {
      "snapshot-id": String(to.snapshotId),
      // As the reference writers record a snapshot without a parent.
      "parent-snapshot-id": parentId === null ? "null" : String(parentId),
      ...(table.metadata.formatVersion >= 2 ? { "sequence-number": String(to.sequenceNumber) } : {}),
      "format-version": String(table.metadata.formatVersion),
    },
    listed,
  );
  const metadata = nextMetadata(table, change, to, {
    manifestList: to.uriOf(listKey),
    previous: to.uriOf(table.metadataKey),
    summary: snapshotSummary(change, removed),
  });
  for (const w of written) await store.write(w.key, w.bytes);
  await store.write(listKey, list);
  const snapshots = metadata.snapshots as Record<string, unknown>[];
  return {
    snapshotId: to.snapshotId,
    sequenceNumber: to.sequenceNumber,
    snapshot: snapshots[snapshots.length - 1] as Record<string, unknown>,
    metadata,
  };
}

/** The new snapshot's id, sequence number (v2: the last + 1; v1: none, 0) and file locations. */
function newSnapshot(table: IcebergTable, uuid: string): NewSnapshot {
  const location = table.metadata.location.replace(/\/+$/, "");
  let manifests = 0;
  return {
    table,
    snapshotId: newSnapshotId(table),
    sequenceNumber: table.metadata.formatVersion >= 2 ? table.metadata.lastSequenceNumber + 1 : 0,
    uriOf: (key) => `${location}/${key}`,
    manifestKey: () => `${METADATA_DIR}${uuid}-m${manifests++}.avro`,
  };
}

/**
 * The manifests of the new snapshot, in list order: the added files' (one per partition spec),
 * then `base`'s, rewritten where they hold a removed file; and those of them to write.
 */
async function snapshotManifests(
  store: ObjectStore,
  to: NewSnapshot,
  change: ReplaceCommit,
  removed: Map<string, ManifestEntry>,
): Promise<{ written: WrittenManifest[]; listed: ManifestFile[] }> {
  const bySpec = new Map<number, NewDataFile[]>();
  for (const file of change.added) {
    const files = bySpec.get(file.specId) ?? [];
    files.push(file);
    bySpec.set(file.specId, files);
  }
  const written = [...bySpec].map(([specId, files]) => addedManifest(to, specId, files));
  const listed = written.map((w) => w.manifest);
  const touched = new Set([...removed.values()].map((e) => e.manifest.path));
  const removedPaths = new Set(removed.keys());
  const manifests = change.base?.manifests ?? [];
  for (let i = 0; i < manifests.length; i += MANIFEST_CONCURRENCY) {
    const batch = await Promise.all(
      manifests.slice(i, i + MANIFEST_CONCURRENCY).map(async (m) => {
        if (!touched.has(m.path)) return { manifest: await carriedManifest(store, to.table, m) };
        const rewritten = await rewrittenManifest(store, to, m, removedPaths);
        written.push(rewritten);
        return rewritten;
      }),
    );
    listed.push(...batch.map((b) => b.manifest));
  }
  return { written, listed };
}

/**
 * The live entries of `base` for the removed paths, by path. Throws where the caller's change does
 * not fit the table: `base` not current, a path not live, an added key that is live or not plain.
 */
function removedEntries(table: IcebergTable, change: ReplaceCommit): Map<string, ManifestEntry> {
  const baseId = change.base?.snapshot.snapshotId ?? null;
  const current = table.metadata.currentSnapshotId;
  if (current !== baseId)
    throw new Error(
      baseId === null
        ? `the change was planned for a table without snapshots, but the table's current snapshot is ${current}; plan against it`
        : `the rewrite was planned against snapshot ${baseId}, but the table's current snapshot is ${current ?? "none"}; plan against the current one`,
    );
  const entries = change.base?.entries ?? [];
  const live = new Map(entries.filter((e) => e.content === "data").map((e) => [e.path, e]));
  const removed = new Map<string, ManifestEntry>();
  for (const { path } of change.removed) {
    const entry = live.get(path);
    if (!entry)
      throw new Error(
        baseId === null
          ? `${path} can't be removed: the table has no snapshot yet`
          : `${path} is not a live data file of snapshot ${baseId}`,
      );
    removed.set(path, entry);
  }
  const kept = new Set([...live.values()].filter((e) => !removed.has(e.path)).map((e) => e.key));
  for (const file of change.added)
    if (kept.has(file.key)) throw new Error(`new file ${file.key} is already a live file of the table`);
  for (const file of change.added)
    if (keyOf(table, `${table.metadata.location.replace(/\/+$/, "")}/${file.key}`) !== file.key)
      throw new Error(`new file ${file.key} is not a plain key under the table ${table.storeUri}`);
  if (removed.size === 0 && change.added.length === 0) throw new Error("a commit must remove or add files");
  return removed;
}

/** A positive 63-bit id no snapshot of the table has (spec Appendix F). */
function newSnapshotId(table: IcebergTable): bigint {
  const used = new Set(table.metadata.snapshots.map((s) => s.snapshotId));
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE() & MAX_SNAPSHOT_ID;
    if (id !== 0n && !used.has(id)) return id;
  }
}

/**
 * The current metadata JSON, unknown fields kept, with the new snapshot appended and made current.
 * Its timestamp is never before the metadata's `last-updated-ms`: readers reject a log out of order.
 */
function nextMetadata(
  table: IcebergTable,
  change: ReplaceCommit,
  to: NewSnapshot,
  at: { manifestList: string; previous: string; summary: Record<string, string> },
): Record<string, unknown> {
  const { metadata } = table;
  const v2 = metadata.formatVersion >= 2;
  const now = Math.max(change.nowMs, metadata.lastUpdatedMs);
  const raw = structuredClone(metadata.raw);
  const list = (value: unknown) => (Array.isArray(value) ? value : []);
  if (v2) raw["last-sequence-number"] = to.sequenceNumber;
  raw["last-updated-ms"] = now;
  raw["current-snapshot-id"] = to.snapshotId;
  raw.snapshots = [
    ...list(raw.snapshots),
    {
      ...(v2 ? { "sequence-number": to.sequenceNumber } : {}),
      "snapshot-id": to.snapshotId,
      ...(change.base ? { "parent-snapshot-id": change.base.snapshot.snapshotId } : {}),
      "timestamp-ms": now,
      summary: at.summary,
      "manifest-list": at.manifestList,
      "schema-id": metadata.currentSchemaId,
    },
  ];
  raw["snapshot-log"] = [...list(raw["snapshot-log"]), { "timestamp-ms": now, "snapshot-id": to.snapshotId }];
  raw["metadata-log"] = withPreviousFile(table, at.previous);
  const refs = (raw.refs ?? {}) as Record<string, Record<string, unknown>>;
  raw.refs = { ...refs, main: { ...refs.main, "snapshot-id": to.snapshotId, type: "branch" } };
  return raw;
}

/** The snapshot summary (spec Appendix F): what changed, the totals after it, then the caller's extras. */
function snapshotSummary(change: ReplaceCommit, removed: Map<string, ManifestEntry>): Record<string, string> {
  const sum = <T>(list: readonly T[], of: (x: T) => number) => list.reduce((n, x) => n + of(x), 0);
  const live = change.base?.entries ?? [];
  const data = live.filter((e) => e.content === "data");
  const gone = [...removed.values()];
  const partitions = new Set([
    ...gone.map((e) => partitionKey(e.specId, e.partitionById)),
    ...change.added.map((f) => partitionKey(f.specId, f.partition)),
  ]);
  const addedRecords = sum(change.added, (f) => f.recordCount);
  const addedSize = sum(change.added, (f) => f.fileSizeInBytes);
  const removedRecords = sum(gone, (e) => e.recordCount);
  const removedSize = sum(gone, (e) => e.fileSizeInBytes);
  const deletes = (content: ManifestEntry["content"]) => live.filter((e) => e.content === content);
  const standard: Record<string, number> = {
    "added-data-files": change.added.length,
    "deleted-data-files": gone.length,
    "added-records": addedRecords,
    "deleted-records": removedRecords,
    "added-files-size": addedSize,
    "removed-files-size": removedSize,
    "changed-partition-count": partitions.size,
    "total-records": sum(data, (e) => e.recordCount) - removedRecords + addedRecords,
    "total-files-size": sum(live, (e) => e.fileSizeInBytes) - removedSize + addedSize,
    "total-data-files": data.length - gone.length + change.added.length,
    "total-delete-files": live.length - data.length,
    "total-position-deletes": sum(deletes("position_deletes"), (e) => e.recordCount),
    "total-equality-deletes": sum(deletes("equality_deletes"), (e) => e.recordCount),
  };
  const summary: Record<string, string> = { operation: gone.length === 0 ? "append" : "replace" };
  for (const [key, value] of Object.entries(standard)) summary[key] = String(value);
  for (const [key, value] of Object.entries(change.summary)) if (!(key in summary)) summary[key] = value;
  return summary;
}

/** One partition, as text: its spec and its values in field id order. */
function partitionKey(specId: number, tuple: ReadonlyMap<number, IcebergValue | null>): string {
  const values = [...tuple]
    .sort(([a], [b]) => a - b)
    .map(([, v]) =>
      Buffer.isBuffer(v) ? v.toString("hex") : typeof v === "object" && v ? String(v.unscaled) : v,
    );
  return `${specId}:${stringifyJson(values)}`;
}
