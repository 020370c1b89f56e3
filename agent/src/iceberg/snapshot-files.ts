/**
 * The files of one snapshot: its manifest list, then every manifest in it (a bounded number at a
 * time), keeping the live entries (ADDED and EXISTING; DELETED ones only record a removal).
 *
 * Memory is proportional to the snapshot's entry count; manifests are read whole.
 *
 * @example
 * const { entries } = await readSnapshotFiles(store, table);
 * const rows = entries.filter((e) => e.content === "data").reduce((n, e) => n + e.recordCount, 0);
 */
import type { ObjectStore } from "../store/index.ts";
import { IcebergError } from "./errors.ts";
import { type ManifestEntry, readManifestEntries } from "./manifest.ts";
import { type ManifestFile, readManifestList } from "./manifest-list.ts";
import type { Snapshot } from "./metadata.ts";
import { currentSnapshot, type IcebergTable, snapshotAtRef, snapshotById } from "./table.ts";

export interface SnapshotFiles {
  snapshot: Snapshot;
  manifests: ManifestFile[];
  /** Live data and delete files, in manifest order. */
  entries: ManifestEntry[];
}

export interface SnapshotChoice {
  /** A snapshot by id; the current one when neither this nor `ref` is given. */
  snapshotId?: bigint;
  /** A branch or tag name. */
  ref?: string;
}

const MANIFEST_READ_CONCURRENCY = 16;

/** Reads the live files of the current snapshot, or of the one chosen. */
export async function readSnapshotFiles(
  store: ObjectStore,
  table: IcebergTable,
  choice: SnapshotChoice = {},
): Promise<SnapshotFiles> {
  const snapshot =
    choice.snapshotId !== undefined
      ? snapshotById(table, choice.snapshotId)
      : choice.ref !== undefined
        ? snapshotAtRef(table, choice.ref)
        : currentSnapshot(table);
  if (!snapshot)
    throw new IcebergError(
      "missing_snapshot",
      `the table at ${table.storeUri} has no current snapshot (it holds no data yet)`,
    );
  const manifests = await readManifestList(store, table, snapshot);
  const entries: ManifestEntry[] = [];
  for (let i = 0; i < manifests.length; i += MANIFEST_READ_CONCURRENCY) {
    const batch = await Promise.all(
      manifests.slice(i, i + MANIFEST_READ_CONCURRENCY).map((m) => readManifestEntries(store, table, m)),
    );
    for (const read of batch) for (const entry of read) if (entry.status !== "deleted") entries.push(entry);
  }
  return { snapshot, manifests, entries };
}
