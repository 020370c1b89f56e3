/**
 * A snapshot committed through an Iceberg REST catalog instead of by writing the next metadata
 * file: the catalog decides which writer wins.
 *
 * 1. `prepareSnapshot` writes the manifests and the manifest list (unreferenced until step 2).
 * 2. `POST .../tables/{table}` with `assert-table-uuid` and `assert-ref-snapshot-id` (main is still
 *    the snapshot the change was planned against, or absent for a table without one), then
 *    `add-snapshot` and `set-snapshot-ref` main.
 * 3. The outcome: 200 committed; 409 a conflict (nothing applied: the caller reloads, re-plans,
 *    retries); a 5xx or timeout unknown: the table is reloaded at once and the commit counts as
 *    made exactly when the new snapshot is in it. Nothing written is ever deleted here, least of
 *    all while an outcome is unknown.
 */

import type { ObjectStore } from "../../store/index.ts";
import { type PreparedSnapshot, prepareSnapshot, type ReplaceCommit } from "../commit.ts";
import type { IcebergTable } from "../table.ts";
import type { RestCatalogClient } from "./client.ts";
import type { SnapshotJson } from "./commit.ts";

export type CatalogCommitOutcome =
  | { committed: true; snapshotId: bigint; sequenceNumber: number; metadataLocation: string | null }
  | { committed: false; reason: "conflict"; message: string };

export interface CatalogTableRef {
  client: RestCatalogClient;
  namespace: readonly string[];
  name: string;
}

export async function commitReplaceThroughCatalog(
  store: ObjectStore,
  catalog: CatalogTableRef,
  table: IcebergTable,
  change: ReplaceCommit,
): Promise<CatalogCommitOutcome> {
  const prepared = await prepareSnapshot(store, table, change);
  const uuid = table.metadata.tableUuid;
  const result = await catalog.client.commitTable(catalog.namespace, catalog.name, {
    requirements: [
      ...(uuid ? [{ type: "assert-table-uuid" as const, uuid }] : []),
      {
        type: "assert-ref-snapshot-id",
        ref: "main",
        "snapshot-id": change.base?.snapshot.snapshotId ?? null,
      },
    ],
    updates: [
      { action: "add-snapshot", snapshot: prepared.snapshot as unknown as SnapshotJson },
      { action: "set-snapshot-ref", "ref-name": "main", type: "branch", "snapshot-id": prepared.snapshotId },
    ],
  });
  if (result.ok) return committed(prepared, result.metadataLocation);
  if (result.kind === "conflict") return { committed: false, reason: "conflict", message: result.message };
  // Unknown: the catalog may have applied it. Only the table itself can say.
  const reloaded = await catalog.client.loadTable(catalog.namespace, catalog.name);
  if (reloaded.metadata.snapshots.some((s) => s.snapshotId === prepared.snapshotId))
    return committed(prepared, reloaded.metadataLocation);
  return {
    committed: false,
    reason: "conflict",
    message: `the catalog's answer was lost (${result.message}) and the table does not hold the snapshot: not applied`,
  };
}

function committed(prepared: PreparedSnapshot, metadataLocation: string | null): CatalogCommitOutcome {
  return {
    committed: true,
    snapshotId: prepared.snapshotId,
    sequenceNumber: prepared.sequenceNumber,
    metadataLocation,
  };
}
