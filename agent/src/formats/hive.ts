/**
 * Hive tables behind the format seam (`types.ts`): Parquet partitions found through the Hive
 * Metastore the job's catalog reference names (`hive/`), committed by moving each rewritten
 * partition (or an unpartitioned table) to a new folder in the metastore.
 *
 * A Hive partition is its folder: every data file in it is read. So a rewrite never writes into a
 * live folder. Each commit gets its own folder under the table's `_lakesmith/` (`hive/location.ts`)
 * holding the rewritten files and a copy of each file of the partition the plan did not rewrite;
 * then, under the metastore's exclusive lock on the table, each partition is checked (its location
 * unchanged, its old folder holding exactly the files planned against: a file that appeared since,
 * or vanished, is a `ConflictError`, and the caller re-plans) and all of them are moved at once
 * (`alter_partitions`, one metastore transaction; `alter_table` when unpartitioned).
 *
 * The old folders are left in place, whole: the commit reports them as `superseded`, their files
 * become pending deletions, and recovering them moves the location back. Each commit writes
 * `_rewrite.json` (job, result, moves) beside its folders before the move; the metastore records
 * the job id and the commit's folder on each moved partition, which is how a retried job finds its
 * earlier commit.
 */
import { randomBytes } from "node:crypto";
import type {
  CrunchResult,
  CrunchSettings,
  HiveMetastoreTableRef,
  SupersededFolder,
} from "@lakesmith/shared/jobs";
import { CrunchResultSchema } from "@lakesmith/shared/jobs";
import { partitionFolder, partitionPath } from "../crunch/partition-path.ts";
import type { TableColumn } from "../engine/index.ts";
import { canonicalLocation, locationOfKey, rewriteFolder, rewriteRecordKey } from "../hive/location.ts";
import { type HivePartition, openMetastore } from "../hive/metastore.ts";
import {
  DDL_TIME,
  type HivePartitionSnapshot,
  type HiveSnapshot,
  listFolder,
  loadHiveSnapshot,
} from "../hive/snapshot.ts";
import { recipeType } from "../hive/types.ts";
import { sum } from "../numbers.ts";
import { JobError } from "../registry.ts";
import { readAll, StoreError } from "../store/index.ts";
import { ConflictError } from "./conflict.ts";
import type { CommittedRewrite, FormatContext, Rewrite, Table, TableFile, TableFormat } from "./types.ts";

/** Metastore parameters a Lakesmith move sets on a partition (or the table). */
export const PARAM_JOB_ID = "lakesmith.job_id";
export const PARAM_REWRITE = "lakesmith.rewrite";
export const PARAM_PREVIOUS_LOCATION = "lakesmith.previous_location";

export const hiveFormat: TableFormat = {
  name: "hive",
  async load(ctx: FormatContext): Promise<Table> {
    const ref = ctx.catalog;
    if (ref?.type !== "hive_metastore")
      throw new JobError(
        "a Hive table is read through its metastore: onboard it through a hive_metastore catalog connection",
        { retryable: false },
      );
    const metastore = await openMetastore(ref);
    try {
      const snapshot = await loadHiveSnapshot(metastore, ctx.store, ref);
      return new HiveTable(ctx, ref, snapshot);
    } finally {
      await metastore.close();
    }
  },
};

/** One moment of a Hive table behind the seam. */
export class HiveTable implements Table {
  readonly format = "hive";
  readonly version: number;
  readonly files: readonly TableFile[];
  readonly columns: readonly TableColumn[];
  readonly partitionColumns: readonly string[];
  readonly readsDeclaredColumnsOnly = true;
  readonly parquetFieldIds = null;
  /** This load's commit folder name: unique, so no earlier attempt's files are ever in it. */
  private readonly rewrite: string;
  private readonly partitionsByPath = new Map<string, HivePartitionSnapshot>();

  constructor(
    private readonly ctx: FormatContext,
    private readonly ref: HiveMetastoreTableRef,
    readonly snapshot: HiveSnapshot,
  ) {
    this.version = snapshot.version;
    this.columns = snapshot.columns.map(({ name, type }) => ({ name, type }));
    this.partitionColumns = snapshot.partitionColumns.map((c) => c.name);
    this.rewrite = `${ctx.clock.now().getTime().toString(36)}-${randomBytes(4).toString("hex")}`;
    this.files = snapshot.partitions.flatMap((p) => {
      this.partitionsByPath.set(this.pathOf(p.values), p);
      return p.files.map((f) => ({
        key: f.key,
        path: f.key,
        size: f.size,
        rows: undefined,
        partitionValues: p.values,
        stats: null,
        tags: null,
      }));
    });
  }

  columnsFor(): readonly TableColumn[] {
    return this.columns;
  }

  typeOf(column: string): string {
    const hiveType =
      this.snapshot.columns.find((c) => c.name === column)?.hiveType ??
      this.snapshot.partitionColumns.find((c) => c.name === column)?.hiveType;
    return hiveType ? recipeType(hiveType) : "string";
  }

  dataFolder(partitionValues: Record<string, string | null>): string {
    return rewriteFolder(
      this.snapshot.tableKey ?? "",
      this.rewrite,
      partitionFolder(partitionValues, this.partitionColumns).replace(/\/$/, ""),
    );
  }

  writeRefusal(): string | null {
    return this.snapshot.refusal;
  }

  lastForeignCommitAt(): number | null {
    let newest: number | null = null;
    for (const p of this.snapshot.partitions) {
      if (p.record?.parameters[PARAM_REWRITE] || (!p.record && this.snapshot.table.parameters[PARAM_REWRITE]))
        continue;
      for (const f of p.files) newest = Math.max(newest ?? 0, f.lastModified);
    }
    return newest;
  }

  measuredSettings(): { settings: CrunchSettings; version: number } | null {
    return null;
  }

  async earlierResult(jobId: string): Promise<CrunchResult | null> {
    const moved = this.snapshot.partitions.find((p) => this.paramsOf(p)[PARAM_JOB_ID] === jobId);
    if (!moved) return null;
    const rewrite = this.paramsOf(moved)[PARAM_REWRITE] ?? "";
    const key = rewriteRecordKey(this.snapshot.tableKey ?? "", rewrite, this.partitionColumns.length > 0);
    try {
      const record = JSON.parse((await readAll(await this.ctx.store.read(key))).toString("utf8")) as {
        result: unknown;
      };
      return CrunchResultSchema.parse(record.result);
    } catch (err) {
      // The move is in the metastore: committing again would rewrite what it moved. Say so, for good.
      if (err instanceof StoreError && err.code !== "not_found") throw err;
      throw new JobError(
        `this job already moved a partition in the metastore (to ${moved.location}), but its record ${this.ctx.store.uriOf(key)} can't be read (${(err as Error).message})`,
        { retryable: false, cause: err },
      );
    }
  }

  async commitRewrite(rewrite: Rewrite): Promise<CommittedRewrite> {
    const { store } = this.ctx;
    const moves = this.movesOf(rewrite);
    // The new folders: the rewritten files, and a copy of each file the plan left as it was.
    for (const move of moves) {
      const expected = new Set(move.added);
      for (const file of move.from.files) {
        if (move.replaced.has(file.key)) continue;
        const key = `${move.folder}${file.key.slice(file.key.lastIndexOf("/") + 1)}`;
        const there = await store.head(key);
        if (there?.size !== file.size) await store.write(key, await store.read(file.key));
        expected.add(key);
      }
      // An earlier attempt's copy of a file that is gone since would bring it back: ours, unreferenced, removed.
      const listed = await listFolder(store, move.folder.replace(/\/$/, ""));
      const strays = listed.filter((f) => !expected.has(f.key));
      if (strays.length > 0) await store.deleteMany(strays.map((f) => f.key));
      move.stats = {
        numFiles: String(listed.length - strays.length),
        totalSize: String(sum(listed.filter((f) => expected.has(f.key)).map((f) => f.size))),
      };
    }
    const version = Math.max(this.version + 1, Math.floor(this.ctx.clock.now().getTime() / 1000));
    const superseded: SupersededFolder[] = moves.map((m) => ({
      partition: partitionPath(m.from.values, this.partitionColumns),
      values: m.from.record?.values ?? [],
      previous_location: m.from.location,
      location: m.location,
      files: m.from.files.map((f) => ({ path: f.key, size: f.size })),
    }));
    const result = { ...rewrite.result, committed_version: version, superseded };
    const partitioned = this.partitionColumns.length > 0;
    await store.write(
      rewriteRecordKey(this.snapshot.tableKey ?? "", this.rewrite, partitioned),
      JSON.stringify({ job_id: rewrite.jobId, rewrite: this.rewrite, result }),
    );

    const metastore = await openMetastore(this.ref);
    try {
      const { database: db, table } = this.ref;
      await metastore.withTableLock({ db, table, exclusive: true }, async () => {
        const moved = this.stamp(rewrite.jobId, version);
        if (partitioned) {
          const records: HivePartition[] = [];
          for (const move of moves) {
            const current = await metastore.getPartition(db, table, move.from.record?.values ?? []);
            await this.recheck(move.from, current.sd.location);
            records.push(moved(current, move));
          }
          await metastore.alterPartitions(db, table, records);
        } else {
          const [move] = moves;
          if (!move) return;
          const current = await metastore.getTable(db, table);
          await this.recheck(move.from, current.sd.location);
          await metastore.alterTable(db, table, moved(current, move));
        }
      });
    } finally {
      await metastore.close();
    }
    // A writer that ignores the metastore's locks may have written to an old folder meanwhile.
    for (const move of moves) {
      const late = (await listFolder(store, move.from.key)).filter(
        (f) => !move.from.files.some((g) => g.key === f.key),
      );
      if (late.length > 0)
        this.ctx.log.warn(
          { partition: move.from.location, files: late.map((f) => f.key) },
          "files were written to a partition's old folder after it moved; they are kept, but the table no longer reads them",
        );
    }
    return { version, superseded };
  }

  /** Each partition the rewrite touches: its snapshot, its new folder and location, what it replaces. */
  private movesOf(rewrite: Rewrite) {
    const byPath = new Map<string, { from: HivePartitionSnapshot; replaced: Set<string>; added: string[] }>();
    for (const file of rewrite.replaced) {
      const path = this.pathOf(file.partitionValues);
      const from = this.partitionsByPath.get(path);
      if (!from) throw new Error(`${file.key} is not in a partition of this snapshot`);
      const move = byPath.get(path) ?? { from, replaced: new Set<string>(), added: [] };
      move.replaced.add(file.key);
      byPath.set(path, move);
    }
    for (const file of rewrite.added) byPath.get(this.pathOf(file.partitionValues))?.added.push(file.key);
    return [...byPath.values()].map((move) => {
      const folder = folderOf(move.added[0]) ?? this.dataFolder(move.from.values);
      const tableLocation = this.snapshot.table.sd.location;
      const location = locationOfKey(tableLocation, this.snapshot.tableKey ?? "", folder);
      return { ...move, folder, location, stats: {} as Record<string, string> };
    });
  }

  /** Under the lock: the partition is where it was, and its folder holds exactly what was planned. */
  private async recheck(from: HivePartitionSnapshot, location: string): Promise<void> {
    if (canonicalLocation(location) !== canonicalLocation(from.location))
      throw new ConflictError(`${from.location} was moved to ${location} by another writer`, this.version);
    const now = await listFolder(this.ctx.store, from.key);
    const planned = new Map(from.files.map((f) => [f.key, f.size]));
    const changed = now.filter((f) => planned.get(f.key) !== f.size).map((f) => f.key);
    const gone = from.files.filter((f) => !now.some((g) => g.key === f.key)).map((f) => f.key);
    if (changed.length > 0 || gone.length > 0)
      throw new ConflictError(
        `the files of ${from.location} changed since the plan (new or rewritten: ${changed.join(", ") || "none"}; gone: ${gone.join(", ") || "none"})`,
        this.version,
      );
  }

  /** A metastore record (partition or table) moved to its new folder, with the job's marks. */
  private stamp(jobId: string, version: number) {
    return <R extends { sd: { location: string }; parameters: Record<string, string> }>(
      record: R,
      move: { from: HivePartitionSnapshot; location: string; stats: Record<string, string> },
    ): R => {
      record.sd.location = move.location;
      // The new folder's file count and bytes; rows and column statistics are unchanged (lossless).
      record.parameters = {
        ...record.parameters,
        ...move.stats,
        [PARAM_JOB_ID]: jobId,
        [PARAM_REWRITE]: this.rewrite,
        [PARAM_PREVIOUS_LOCATION]: move.from.location,
        [DDL_TIME]: String(version),
      };
      return record;
    };
  }

  private paramsOf(p: HivePartitionSnapshot): Record<string, string> {
    return p.record?.parameters ?? this.snapshot.table.parameters;
  }

  private pathOf(values: Record<string, string | null>): string {
    return partitionPath(values, this.partitionColumns);
  }
}

function folderOf(key: string | undefined): string | undefined {
  return key === undefined ? undefined : key.slice(0, key.lastIndexOf("/") + 1);
}
