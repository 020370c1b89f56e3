/**
 * The vacuum job on a Delta table: a plan of files no snapshot needs any more (Iceberg tables:
 * `iceberg-vacuum.ts`). It only reads: the control plane turns every proposed file into a pending
 * deletion, and `hard_delete` deletes it later, after re-checking it. A dry run computes exactly
 * the same plan and is only labelled so.
 *
 * 1. Load the snapshot; refuse a table the agent may not write (deletion vectors, unknown features).
 * 2. Retention: the payload's `retention_hours`, else the table's `delta.deletedFileRetentionDuration`
 *    (7 days by default); a value below the table's is recorded as `retention_shortened`.
 * 3. Tombstones: a removed file whose removal is at least the retention old, and whose path no live
 *    file references again. A tombstone without a `deletionTimestamp` counts from the commit that
 *    removed it, or from the snapshot's time when a checkpoint hides that commit: never older than it is.
 * 4. Full mode only: one streaming listing of the table root. Orphans are objects no live file and
 *    no tombstone in the log references, last modified at least `ORPHAN_MIN_AGE_HOURS` ago (younger
 *    ones may be an in-flight write). The listing also drops tombstones whose file is already gone.
 *    Lite mode reads the log alone, plus a HEAD for tombstones whose size the log does not hold.
 *
 * Never proposed, whatever the mode: `_delta_log/`, hidden paths (a segment starting with `.` or
 * `_`, except `_col=value` partition folders), files outside the table root, and `payload.keep`.
 * `kept` counts, per reason, what the plan looked at and left alone. Memory is the log's live and
 * removed paths plus the proposed files; the listing itself is never held.
 */
import {
  ORPHAN_MIN_AGE_HOURS,
  type VacuumFile,
  type VacuumPayload,
  type VacuumResult,
} from "@lakesmith/shared/maintenance";
import type { RemoveFile, Snapshot } from "../delta/index.ts";
import type { JobContext } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { runIcebergVacuum } from "./iceberg-vacuum.ts";
import {
  comparePaths,
  HOUR_MS,
  headAll,
  isLogKey,
  isProtectedKey,
  keyOfFile,
  loadTable,
  type MaintenanceOptions,
  nowOf,
  refuseUnwritable,
  requireDelta,
  retentionHours,
  tableRetentionHours,
  withEngine,
} from "./table.ts";

/** Reasons a looked-at file or object was not proposed, as `kept` reports them. */
export type KeptReason =
  | "tombstones_within_retention"
  | "outside_table_root"
  | "live"
  | "hidden"
  | "delta_log"
  | "recovered"
  | "already_gone"
  | "orphans_too_young"
  | "folder_markers";

const PROGRESS_EVERY = 10_000;

export async function runVacuum(
  ctx: JobContext<VacuumPayload>,
  options: MaintenanceOptions,
): Promise<VacuumResult> {
  const started = Date.now();
  const { payload, log } = ctx;
  if (payload.format === "iceberg") return runIcebergVacuum(ctx, options);
  requireDelta(payload.format, "vacuum");
  return withEngine(ctx.scratchDir, options.memoryLimitMb, async (engine) => {
    ctx.progress({ phase: "loading" });
    const snapshot = await loadTable(options.store, engine, ctx.scratchDir);
    refuseUnwritable(snapshot, "vacuum");
    const tableHours = tableRetentionHours(snapshot.metadata);
    const hours = retentionHours(payload, tableHours);
    if (hours < tableHours)
      log.warn(
        { retention_hours: hours, table_retention_hours: tableHours },
        "retention shortened on request",
      );

    const plan = await planVacuum(options.store, snapshot, {
      mode: payload.mode,
      retentionHours: hours,
      keep: new Set(payload.keep),
      now: nowOf(options),
      signal: ctx.signal,
      progress: ctx.progress,
    });
    log.info(
      { files: plan.files.length, bytes: plan.bytes, kept: plan.kept, version: snapshot.version },
      "vacuum planned",
    );
    return {
      mode: payload.mode,
      dry_run: payload.dry_run,
      table_version: snapshot.version,
      retention_hours: hours,
      table_retention_hours: tableHours,
      retention_shortened: hours < tableHours,
      orphan_min_age_hours: ORPHAN_MIN_AGE_HOURS,
      files: plan.files,
      files_count: plan.files.length,
      bytes: plan.bytes,
      kept: plan.kept,
      objects_listed: plan.objectsListed,
      duration_ms: Date.now() - started,
    };
  });
}

export interface VacuumPlanOptions {
  mode: VacuumPayload["mode"];
  retentionHours: number;
  keep: ReadonlySet<string>;
  now: number;
  signal: AbortSignal;
  progress(progress: Record<string, unknown>): void;
}

export interface VacuumPlan {
  files: VacuumFile[];
  bytes: number;
  kept: Partial<Record<KeptReason, number>>;
  objectsListed: number;
}

/** The files a vacuum proposes on `snapshot` (see the module comment); reads, never writes. */
export async function planVacuum(
  store: ObjectStore,
  snapshot: Snapshot,
  options: VacuumPlanOptions,
): Promise<VacuumPlan> {
  const kept: Partial<Record<KeptReason, number>> = {};
  const keep = (reason: KeptReason) => {
    kept[reason] = (kept[reason] ?? 0) + 1;
  };
  const cutoff = options.now - options.retentionHours * HOUR_MS;

  const live = new Set<string>();
  for (const file of snapshot.files) {
    const key = keyOfFile(store, file);
    if (key !== undefined) live.add(key);
  }

  // Every removed path in the log (a full vacuum must not call them orphans), and the expired ones.
  const removedKeys = new Set<string>();
  const expired = new Map<string, { tombstone: RemoveFile; removedAt: number }>();
  const removedAt = removalTimes(snapshot);
  for (const tombstone of snapshot.tombstones) {
    const key = keyOfFile(store, tombstone);
    if (key === undefined) {
      keep("outside_table_root");
      continue;
    }
    if (removedKeys.has(key)) continue;
    removedKeys.add(key);
    const at = removedAt(tombstone);
    if (isProtectedKey(key)) keep("hidden");
    else if (live.has(key)) keep("live");
    else if (at > cutoff) keep("tombstones_within_retention");
    else if (options.keep.has(key)) keep("recovered");
    else expired.set(key, { tombstone, removedAt: at });
  }

  const files: VacuumFile[] = [];
  const tombstoneFile = (key: string, size: number): VacuumFile => ({
    path: key,
    size,
    reason: "tombstone",
    removed_at: expired.get(key)?.removedAt ?? null,
    modified_at: null,
  });
  let objectsListed = 0;

  if (options.mode === "full") {
    const orphanCutoff = options.now - ORPHAN_MIN_AGE_HOURS * HOUR_MS;
    const present = new Map<string, number>();
    for await (const object of store.list("")) {
      if (++objectsListed % PROGRESS_EVERY === 0) {
        options.signal.throwIfAborted();
        options.progress({ phase: "listing", objects_listed: objectsListed });
      }
      const key = object.key;
      if (key.endsWith("/")) keep("folder_markers");
      else if (isLogKey(key)) keep("delta_log");
      else if (removedKeys.has(key)) {
        if (expired.has(key)) present.set(key, object.size);
      } else if (isProtectedKey(key)) keep("hidden");
      else if (live.has(key)) keep("live");
      else if (options.keep.has(key)) keep("recovered");
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
    for (const key of expired.keys()) {
      const size = present.get(key);
      if (size === undefined) keep("already_gone");
      else files.push(tombstoneFile(key, size));
    }
  } else {
    const unsized = [...expired].filter(([, e]) => e.tombstone.size == null).map(([key]) => key);
    if (unsized.length) options.progress({ phase: "sizing", files: unsized.length });
    const heads = await headAll(store, unsized, options.signal);
    for (const [key, { tombstone }] of expired) {
      if (!heads.has(key)) files.push(tombstoneFile(key, tombstone.size ?? 0));
      else {
        const head = heads.get(key);
        if (head) files.push(tombstoneFile(key, head.size));
        else keep("already_gone");
      }
    }
  }

  files.sort((a, b) => comparePaths(a.path, b.path));
  return { files, bytes: files.reduce((n, f) => n + f.size, 0), kept, objectsListed };
}

/**
 * When each tombstone's file left the table: its `deletionTimestamp`, else the time of the newest
 * commit read that removed it, else the snapshot's own time (an upper bound: it was removed by then).
 */
function removalTimes(snapshot: Snapshot): (tombstone: RemoveFile) => number {
  let byCommit: Map<string, number> | undefined;
  return (tombstone) => {
    if (tombstone.deletionTimestamp !== null) return tombstone.deletionTimestamp;
    byCommit ??= new Map(
      snapshot.commits.flatMap((c) =>
        c.actions.flatMap((a) => ("remove" in a ? [[a.remove.rawPath, c.timestamp] as const] : [])),
      ),
    );
    return byCommit.get(tombstone.rawPath) ?? snapshot.timestamp;
  };
}
