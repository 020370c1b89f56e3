/**
 * Expiring snapshots of a path-based Iceberg table: the metadata commit that removes them (spec
 * "Snapshot Retention Policy"). Which snapshots and refs expire is the caller's decision; this
 * writes it, from the current metadata JSON (`raw`, fields this reader does not model kept):
 * - the snapshots named leave `snapshots`, their entries leave `statistics` and
 *   `partition-statistics`, and the refs named leave `refs`;
 * - `snapshot-log` loses every entry of a removed snapshot and every entry before it, as the
 *   reference implementation does: a gap would make time travel by timestamp read the wrong snapshot;
 * - the previous file joins `metadata-log` (at most `write.metadata.previous-versions-max`), and
 *   `last-updated-ms` moves to `nowMs` (never back).
 * Refused before anything is written: removing the current snapshot or `main`, a ref left naming a
 * removed snapshot, and the tables `commitReplace` refuses (v3+, moved, catalog-named metadata).
 * The commit is `metadata-file.ts`'s, as for a replace: `metadata/v<N+1>.metadata.json` with
 * `writeIfAbsent`, then the version hint. Losing the race returns `{ committed: false }`: reload, decide again, retry. Nothing is deleted.
 */
import type { ObjectStore } from "../store/index.ts";
import { type PublishOutcome, publishMetadata, withPreviousFile, writableVersion } from "./metadata-file.ts";
import type { IcebergTable } from "./table.ts";

export interface SnapshotExpiry {
  /** Snapshots to remove; each must be in the metadata. */
  snapshotIds: readonly bigint[];
  /** Branches and tags to drop (never `main`). */
  refs: readonly string[];
  nowMs: number;
}

export type ExpireOutcome = PublishOutcome;

/**
 * Commits the metadata without the expired snapshots and refs.
 *
 * @example
 * const outcome = await expireSnapshots(store, table, { snapshotIds: [123n], refs: ["old-tag"], nowMs: Date.now() });
 * if (!outcome.committed) // another writer took the next version: reload, plan again, retry
 */
export async function expireSnapshots(
  store: ObjectStore,
  table: IcebergTable,
  expiry: SnapshotExpiry,
): Promise<ExpireOutcome> {
  const version = writableVersion(table);
  return publishMetadata(store, version, metadataWithout(table, expiry));
}

/** The next metadata JSON: the current one less the expired snapshots and refs. */
function metadataWithout(table: IcebergTable, expiry: SnapshotExpiry): Record<string, unknown> {
  const { metadata } = table;
  const removed = new Set(expiry.snapshotIds);
  const known = new Set(metadata.snapshots.map((s) => s.snapshotId));
  for (const id of removed)
    if (!known.has(id)) throw new Error(`snapshot ${id} is not in the table's metadata; plan again`);
  if (metadata.currentSnapshotId !== null && removed.has(metadata.currentSnapshotId))
    throw new Error(
      `snapshot ${metadata.currentSnapshotId} is the table's current snapshot; it never expires`,
    );
  if (expiry.refs.includes("main")) throw new Error("the main branch never expires");

  const raw = structuredClone(metadata.raw);
  const list = (value: unknown) => (Array.isArray(value) ? (value as Record<string, unknown>[]) : []);
  const idOf = (entry: Record<string, unknown>) => BigInt(entry["snapshot-id"] as number | bigint);
  const gone = (entry: Record<string, unknown>) => removed.has(idOf(entry));

  if (raw.refs !== undefined) {
    const refs = { ...(raw.refs as Record<string, Record<string, unknown>>) };
    for (const name of expiry.refs) {
      if (!(name in refs)) throw new Error(`the table has no branch or tag '${name}' to drop; plan again`);
      delete refs[name];
    }
    for (const [name, ref] of Object.entries(refs))
      if (gone(ref)) throw new Error(`${name} would still name expired snapshot ${idOf(ref)}; drop it too`);
    raw.refs = refs;
  } else if (expiry.refs.length > 0) throw new Error("the table records no refs to drop");

  raw.snapshots = list(raw.snapshots).filter((s) => !gone(s));
  if (raw.statistics !== undefined) raw.statistics = list(raw.statistics).filter((s) => !gone(s));
  if (raw["partition-statistics"] !== undefined)
    raw["partition-statistics"] = list(raw["partition-statistics"]).filter((s) => !gone(s));
  const log = list(raw["snapshot-log"]);
  const lastGone = log.findLastIndex(gone);
  raw["snapshot-log"] = log.slice(lastGone + 1);

  const location = metadata.location.replace(/\/+$/, "");
  raw["metadata-log"] = withPreviousFile(table, `${location}/${table.metadataKey}`);
  raw["last-updated-ms"] = Math.max(expiry.nowMs, metadata.lastUpdatedMs);
  return raw;
}
