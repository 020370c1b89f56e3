/**
 * Which snapshots and refs of an Iceberg table expire (spec "Snapshot Retention Policy"), decided
 * as the reference implementation's `ExpireSnapshots` decides it. Pure: no I/O, times in ms.
 * - A ref other than `main` expires when its snapshot is older than its `max-ref-age-ms` (else the
 *   table's `history.expire.max-ref-age-ms`, else never), or names no snapshot. `main` (the
 *   `current-snapshot-id` where the metadata records no refs) never expires.
 * - Every remaining ref's snapshot is kept. Each remaining branch also keeps its ancestors (parent
 *   links within the metadata) from the head on, while each is younger than the branch's
 *   `max-snapshot-age-ms` (else the policy's) or among its first `min-snapshots-to-keep` (else the
 *   policy's), stopping at the first that is neither.
 * - A snapshot on no remaining ref's history (rolled back, staged) is kept while younger than the
 *   policy's max snapshot age; every other snapshot expires.
 * Invariants: the current snapshot and every remaining ref's snapshot are kept.
 */
import { IcebergError, type Snapshot, type SnapshotRef, type TableMetadata } from "../iceberg/index.ts";

export interface RetentionPolicy {
  /** The default `max-snapshot-age-ms` of branches, and the age unreferenced snapshots are kept for. */
  maxSnapshotAgeMs: number;
  /** The default `min-snapshots-to-keep` of branches. */
  minSnapshotsToKeep: number;
  /** The default `max-ref-age-ms` of refs other than main; Infinity: refs never expire by age. */
  maxRefAgeMs: number;
}

export interface RetentionPlan {
  kept: Set<bigint>;
  /** Ids of the snapshots that expire, oldest first. */
  expired: bigint[];
  /** Names of the refs that expire, sorted. */
  expiredRefs: string[];
}

/** The snapshots and refs of `metadata` that expire at `now` under `policy`. */
export function planRetention(metadata: TableMetadata, policy: RetentionPolicy, now: number): RetentionPlan {
  const byId = new Map(metadata.snapshots.map((s) => [s.snapshotId, s]));
  const refs: Record<string, SnapshotRef> = { ...metadata.refs };
  if (!refs.main && metadata.currentSnapshotId !== null)
    refs.main = {
      snapshotId: metadata.currentSnapshotId,
      type: "branch",
      minSnapshotsToKeep: null,
      maxSnapshotAgeMs: null,
      maxRefAgeMs: null,
    };

  const remaining: SnapshotRef[] = [];
  const expiredRefs: string[] = [];
  for (const [name, ref] of Object.entries(refs)) {
    const snapshot = byId.get(ref.snapshotId);
    const maxAge = ref.maxRefAgeMs ?? policy.maxRefAgeMs;
    if (name === "main") {
      if (!snapshot)
        throw new IcebergError(
          "corrupt",
          `the main branch names snapshot ${ref.snapshotId}, which the metadata does not hold`,
        );
      remaining.push(ref);
    } else if (snapshot && now - snapshot.timestampMs <= maxAge) remaining.push(ref);
    else expiredRefs.push(name);
  }

  const kept = new Set<bigint>();
  const onHistory = new Set<bigint>();
  for (const ref of remaining) {
    kept.add(ref.snapshotId);
    onHistory.add(ref.snapshotId);
    if (ref.type !== "branch") continue;
    const cutoff = now - (ref.maxSnapshotAgeMs ?? policy.maxSnapshotAgeMs);
    const min = ref.minSnapshotsToKeep ?? policy.minSnapshotsToKeep;
    let retaining = true;
    const walked = new Set<bigint>();
    for (let s = byId.get(ref.snapshotId); s && !walked.has(s.snapshotId); s = ancestor(byId, s)) {
      walked.add(s.snapshotId);
      onHistory.add(s.snapshotId);
      retaining &&= walked.size <= min || s.timestampMs >= cutoff;
      if (retaining) kept.add(s.snapshotId);
    }
  }
  const unreferencedCutoff = now - policy.maxSnapshotAgeMs;
  for (const s of metadata.snapshots)
    if (!onHistory.has(s.snapshotId) && s.timestampMs >= unreferencedCutoff) kept.add(s.snapshotId);
  if (metadata.currentSnapshotId !== null) kept.add(metadata.currentSnapshotId);

  const expired = metadata.snapshots
    .filter((s) => !kept.has(s.snapshotId))
    .sort((a, b) => a.timestampMs - b.timestampMs || (a.snapshotId < b.snapshotId ? -1 : 1))
    .map((s) => s.snapshotId);
  return { kept, expired, expiredRefs: expiredRefs.sort() };
}

function ancestor(byId: Map<bigint, Snapshot>, child: Snapshot): Snapshot | undefined {
  return child.parentSnapshotId === null ? undefined : byId.get(child.parentSnapshotId);
}
