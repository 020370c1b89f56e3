/**
 * The vacuum job on an Iceberg table: expire the snapshots the retention policy no longer keeps
 * (one metadata commit), and report the files only they referenced. Nothing is deleted here: the
 * control plane records each file as a pending deletion and `hard_delete` deletes it later.
 *
 * 1. Load the current metadata `vN`; refuse what the agent must not write (`iceberg-table.ts`).
 * 2. Retention: the payload's `retention_hours`, else `history.expire.max-snapshot-age-ms`, else 5
 *    days; `min-snapshots-to-keep` and `max-ref-age-ms` from the table. Plan which snapshots and refs
 *    expire (`iceberg-retention.ts`).
 * 3. Read every snapshot's references. A file an expired snapshot references and no kept one does
 *    is proposed as `expired_snapshot`, with `removed_at` the time of the newest expired snapshot
 *    that referenced it. Sizes come from the manifests; a HEAD sizes the rest (manifest lists).
 * 4. Full mode only: one listing of the table root. An object no snapshot references (kept or
 *    expired), last modified at least `ORPHAN_MIN_AGE_HOURS` ago, is an `orphan`; a Hadoop `.crc`
 *    beside a proposed file goes with it. A referenced path in another scheme or bucket than the
 *    store fails the job: the listing could not tell whether that path names a listed object.
 * 5. Not a dry run: commit the expiry (`iceberg/expire.ts`) before reporting, so every reported
 *    file is unreferenced when it is recorded. Losing the commit race re-plans, up to 3 plans.
 *
 * Never proposed: metadata JSON files and the version hint, hidden paths, files outside the table
 * root, `payload.keep`. A dry run plans exactly the same and commits nothing. Memory: each
 * manifest's live paths once, plus each snapshot's manifest list.
 */

import {
  ORPHAN_MIN_AGE_HOURS,
  type VacuumFile,
  type VacuumPayload,
  type VacuumResult,
} from "@lakesmith/shared/maintenance";
import { permanentIcebergError } from "../formats/iceberg.ts";
import { expireSnapshots, type IcebergTable, type Snapshot } from "../iceberg/index.ts";
import { type JobContext, JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { planRetention, type RetentionPolicy } from "./iceberg-retention.ts";
import {
  checksumKeyOf,
  fileSystemOf,
  icebergRetention,
  isMetadataKey,
  loadIcebergForDeletion,
  SnapshotReferences,
} from "./iceberg-table.ts";
import {
  comparePaths,
  HOUR_MS,
  headAll,
  isProtectedKey,
  type MaintenanceOptions,
  nowOf,
  retentionHours,
} from "./table.ts";

/** Reasons a looked-at snapshot, file or object was not proposed, as `kept` reports them. */
export type IcebergKeptReason =
  /** Snapshots the retention keeps (not files). */
  | "retained_snapshots"
  /** Files of expired snapshots that a kept snapshot references too. */
  | "live"
  /** Full mode: listed objects a snapshot references. */
  | "referenced"
  | "outside_table_root"
  /** Metadata JSON files, the version hint and their checksums. */
  | "metadata"
  | "hidden"
  /** In `payload.keep`. */
  | "recovered"
  /** Files of expired snapshots (or their manifest lists and manifests) that no longer exist. */
  | "already_gone"
  | "orphans_too_young"
  | "folder_markers";

/** Plans made before giving up on a table whose metadata other writers keep moving. */
const PLAN_ATTEMPTS = 3;
const PROGRESS_EVERY = 10_000;

export async function runIcebergVacuum(
  ctx: JobContext<VacuumPayload>,
  options: MaintenanceOptions,
): Promise<VacuumResult> {
  const started = Date.now();
  const { payload, log } = ctx;
  const store = options.store;
  const now = nowOf(options);
  for (let attempt = 1; ; attempt++) {
    ctx.progress({ phase: "loading", attempt });
    const { table, version } = await loadIcebergForDeletion(store, "vacuum");
    const retention = icebergRetention(table.metadata.properties);
    const hours = retentionHours(payload, retention.tableHours);
    if (hours < retention.tableHours)
      log.warn(
        { retention_hours: hours, table_retention_hours: retention.tableHours },
        "retention shortened on request",
      );
    const plan = await planIcebergVacuum(store, table, {
      mode: payload.mode,
      policy: {
        maxSnapshotAgeMs: hours * HOUR_MS,
        minSnapshotsToKeep: retention.minSnapshotsToKeep,
        maxRefAgeMs: retention.maxRefAgeMs,
      },
      keep: new Set(payload.keep),
      now,
      signal: ctx.signal,
      progress: ctx.progress,
    }).catch((err) => {
      throw permanentIcebergError(err, store.uri);
    });
    log.info(
      { files: plan.files.length, bytes: plan.bytes, kept: plan.kept, version, expired: plan.expired.length },
      "vacuum planned",
    );

    let committed: number | null = null;
    if (!payload.dry_run && (plan.expired.length > 0 || plan.expiredRefs.length > 0)) {
      ctx.signal.throwIfAborted();
      ctx.progress({ phase: "committing", snapshots: plan.expired.length, refs: plan.expiredRefs.length });
      const outcome = await expireSnapshots(store, table, {
        snapshotIds: plan.expired.map((s) => s.snapshotId),
        refs: plan.expiredRefs,
        nowMs: now,
      });
      if (!outcome.committed) {
        if (attempt >= PLAN_ATTEMPTS)
          throw new JobError(
            `another writer committed metadata version ${version + 1} of the table first, ${attempt} plans in a row; a later attempt plans again`,
            { retryable: true },
          );
        log.warn({ version, attempt }, "another writer committed first; planning again");
        continue;
      }
      committed = outcome.version;
      log.info({ version: committed, snapshots: plan.expired.length }, "snapshots expired");
    }
    return {
      mode: payload.mode,
      dry_run: payload.dry_run,
      table_version: version,
      retention_hours: hours,
      table_retention_hours: retention.tableHours,
      retention_shortened: hours < retention.tableHours,
      orphan_min_age_hours: ORPHAN_MIN_AGE_HOURS,
      files: plan.files,
      files_count: plan.files.length,
      bytes: plan.bytes,
      kept: plan.kept,
      objects_listed: plan.objectsListed,
      expired_snapshots: plan.expired.map((s) => String(s.snapshotId)),
      expired_refs: plan.expiredRefs,
      committed_version: committed,
      duration_ms: Date.now() - started,
    };
  }
}

export interface IcebergVacuumOptions {
  mode: VacuumPayload["mode"];
  policy: RetentionPolicy;
  keep: ReadonlySet<string>;
  now: number;
  signal: AbortSignal;
  progress(progress: Record<string, unknown>): void;
}

export interface IcebergVacuumPlan {
  /** Snapshots that expire, oldest first. */
  expired: Snapshot[];
  expiredRefs: string[];
  files: VacuumFile[];
  bytes: number;
  kept: Partial<Record<IcebergKeptReason, number>>;
  objectsListed: number;
}

/** What a vacuum of `table` expires and proposes (see the module comment); reads, never writes. */
export async function planIcebergVacuum(
  store: ObjectStore,
  table: IcebergTable,
  options: IcebergVacuumOptions,
): Promise<IcebergVacuumPlan> {
  const kept: Partial<Record<IcebergKeptReason, number>> = {};
  const keep = (reason: IcebergKeptReason, n = 1) => {
    if (n > 0) kept[reason] = (kept[reason] ?? 0) + n;
  };
  const { metadata } = table;
  const retention = planRetention(metadata, options.policy, options.now);
  const expiredIds = new Set(retention.expired);
  const expired = metadata.snapshots
    .filter((s) => expiredIds.has(s.snapshotId))
    .sort((a, b) => a.timestampMs - b.timestampMs);
  const retained = metadata.snapshots.filter((s) => !expiredIds.has(s.snapshotId));
  keep("retained_snapshots", retained.length);

  options.progress({ phase: "reading_manifests", snapshots: metadata.snapshots.length });
  const refs = new SnapshotReferences(store);
  await refs.read(table, metadata.snapshots, options.signal);

  const needed = new Set<string>();
  for (const s of retained) {
    const missing = refs.missingOf(s);
    if (missing.length > 0)
      throw new JobError(
        `snapshot ${s.snapshotId}, which the retention keeps, references ${missing[0]}, which does not exist; ` +
          "the table is damaged and the vacuum can't tell which files it still needs. Nothing was expired",
        { retryable: false },
      );
    for (const f of refs.filesOf(table, s)) if (f.key !== null) needed.add(f.key);
  }

  // Files of expired snapshots: each key classified once, proposed when nothing kept needs it.
  const seen = new Set<string>();
  const outside = new Set<string>();
  const candidates = new Map<string, { size: number | null; removedAt: number }>();
  for (const s of expired) {
    keep("already_gone", refs.missingOf(s).length);
    for (const f of refs.filesOf(table, s)) {
      if (f.key === null) {
        if (!outside.has(f.path)) keep("outside_table_root");
        outside.add(f.path);
        continue;
      }
      const candidate = candidates.get(f.key);
      if (candidate) {
        candidate.removedAt = Math.max(candidate.removedAt, s.timestampMs);
        candidate.size ??= f.size;
        continue;
      }
      if (seen.has(f.key)) continue;
      seen.add(f.key);
      if (needed.has(f.key)) keep("live");
      else if (isMetadataKey(f.key)) keep("metadata");
      else if (isProtectedKey(f.key)) keep("hidden");
      else if (options.keep.has(f.key)) keep("recovered");
      else candidates.set(f.key, { size: f.size, removedAt: s.timestampMs });
    }
  }
  const expiredFile = (key: string, size: number): VacuumFile => ({
    path: key,
    size,
    reason: "expired_snapshot",
    removed_at: candidates.get(key)?.removedAt ?? null,
    modified_at: null,
  });

  const files: VacuumFile[] = [];
  let objectsListed = 0;
  if (options.mode === "full") {
    const referenced = new Set(needed);
    for (const s of metadata.snapshots)
      for (const f of refs.filesOf(table, s)) {
        if (f.key !== null) referenced.add(f.key);
        else refuseForeign(f.path, store.uri, s);
      }
    const orphanCutoff = options.now - ORPHAN_MIN_AGE_HOURS * HOUR_MS;
    const present = new Map<string, number>();
    const checksums: { key: string; size: number }[] = [];
    for await (const object of store.list("")) {
      if (++objectsListed % PROGRESS_EVERY === 0) {
        options.signal.throwIfAborted();
        options.progress({ phase: "listing", objects_listed: objectsListed });
      }
      const key = object.key;
      if (key.endsWith("/")) keep("folder_markers");
      else if (isMetadataKey(key)) keep("metadata");
      else if (candidates.has(key)) present.set(key, object.size);
      else if (referenced.has(key)) keep("referenced");
      else if (isProtectedKey(key)) {
        if (key.endsWith(".crc")) checksums.push({ key, size: object.size });
        else keep("hidden");
      } else if (options.keep.has(key)) keep("recovered");
      else if (object.lastModified.getTime() > orphanCutoff) keep("orphans_too_young");
      else
        files.push({
          path: key,
          size: object.size,
          reason: "orphan",
          removed_at: null,
          modified_at: object.lastModified.getTime(),
        });
    }
    for (const key of candidates.keys()) {
      const size = present.get(key);
      if (size === undefined) keep("already_gone");
      else files.push(expiredFile(key, size));
    }
    const proposed = new Map(files.map((f) => [checksumKeyOf(f.path), f]));
    for (const { key, size } of checksums) {
      const base = proposed.get(key);
      if (base && !options.keep.has(key)) files.push({ ...base, path: key, size });
      else keep("hidden");
    }
  } else {
    const unsized = [...candidates].filter(([, c]) => c.size === null).map(([key]) => key);
    if (unsized.length > 0) options.progress({ phase: "sizing", files: unsized.length });
    const heads = await headAll(store, unsized, options.signal);
    for (const [key, { size }] of candidates) {
      if (size !== null) files.push(expiredFile(key, size));
      else {
        const head = heads.get(key);
        if (head) files.push(expiredFile(key, head.size));
        else keep("already_gone");
      }
    }
  }

  files.sort((a, b) => comparePaths(a.path, b.path));
  return {
    expired,
    expiredRefs: retention.expiredRefs,
    files,
    bytes: files.reduce((n, f) => n + f.size, 0),
    kept,
    objectsListed,
  };
}

/**
 * Fails the job where a path lies in another file system than the store (scheme, or bucket): an
 * alias of the same object would look like an orphan. Same bucket but outside the root is fine.
 */
function refuseForeign(path: string, storeUri: string, snapshot: Snapshot): void {
  const where = fileSystemOf(path);
  const store = fileSystemOf(storeUri);
  if (where === null || where === store) return;
  throw new JobError(
    `full vacuum refused: snapshot ${snapshot.snapshotId} references ${path}, in ${where} rather than the table's ${store}; ` +
      "an orphan scan can't tell whether that names an object it lists. Run a lite vacuum, or rewrite the table's paths",
    { retryable: false },
  );
}
