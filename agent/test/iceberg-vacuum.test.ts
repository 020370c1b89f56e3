/**
 * Vacuum and hard delete on Iceberg tables: copies of lineitem_iceberg with a history made by
 * `commitReplace` at chosen times, a branch (a commit rolled back off main), tags, and statistics
 * files. "Now" is a manual clock ten days after the first added commit, so ages are exact. What a
 * vacuum proposes is checked against an independent reading (`readSnapshotFiles` per snapshot).
 */
import { existsSync, mkdtempSync, utimesSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type HardDeletePayload,
  type VacuumPayload,
  VacuumPayloadSchema,
} from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, describe, expect, it } from "vitest";
import { loadIcebergTable, metadataVersion, readSnapshotFiles } from "../src/iceberg/index.ts";
import { DELETE_BATCH, runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runIcebergHardDelete } from "../src/maintenance/iceberg-hard-delete.ts";
import { fileSystemOf, isMetadataKey } from "../src/maintenance/iceberg-table.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import { FileStore, type ObjectStore, type WriteSource } from "../src/store/index.ts";
import {
  addStatistics,
  editMetadata,
  lineitemCopy,
  referencedKeys,
  replaceFiles,
  rollBackMain,
  writeLocal,
} from "./support/iceberg-history.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "iceberg-vacuum-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** lineitem_iceberg's two snapshots: an append, then an overwrite of its only file. */
const S1 = 7817332053627255703n;
const S2 = 2354745328521181395n;
const T0 = 1746188480005;
const NOW = T0 + 10 * DAY;

let tables = 0;

/**
 * lineitem plus: c3 (T0+1d) replaces S2's file, c4 (+2d) replaces that with two, c5 (+3d) replaces
 * one of those and is moved to branch `dev` (main rolled back to c4), c6 (+4d) appends. Tag `audit`
 * on S1; tag `old` on S2, at most 1 day old; statistics files for c3 and c6. At NOW, the default
 * 5 days keep c6 (main), c5 (dev) and S1 (audit); S2, c3 and c4 expire, and so does `old`.
 */
async function history(location?: string) {
  const dir = join(root, `t${++tables}`);
  const store = await lineitemCopy(dir, location);
  const c3 = await replaceFiles(store, T0 + DAY, { remove: (keys) => keys, add: 1 });
  const c4 = await replaceFiles(store, T0 + 2 * DAY, { remove: (keys) => keys, add: 2 });
  const c5 = await replaceFiles(store, T0 + 3 * DAY, { remove: (keys) => keys.sort().slice(0, 1), add: 1 });
  await rollBackMain(store, "dev");
  const c6 = await replaceFiles(store, T0 + 4 * DAY, { remove: () => [], add: 1 });
  await editMetadata(store, (raw) => {
    const refs = raw.refs as Record<string, unknown>;
    refs.audit = { "snapshot-id": S1, type: "tag" };
    refs.old = { "snapshot-id": S2, type: "tag", "max-ref-age-ms": DAY };
  });
  const stats = { c3: await addStatistics(store, c3), c6: await addStatistics(store, c6) };
  return { dir, store, ids: { c3, c4, c5, c6 }, stats };
}

function payloadFor(store: ObjectStore, extra: Partial<VacuumPayload> = {}): VacuumPayload {
  return VacuumPayloadSchema.parse({ table_id: "tbl_test", uri: store.uri, format: "iceberg", ...extra });
}

const vacuum = (store: ObjectStore, extra: Partial<VacuumPayload> = {}, now = NOW) =>
  runVacuum(jobContext(root, "vacuum", payloadFor(store, extra)), {
    store,
    memoryLimitMb: 256,
    clock: new ManualClock(new Date(now)),
  });

function hardDeletePayload(store: ObjectStore, paths: readonly string[]): HardDeletePayload {
  return {
    table_id: "tbl_test",
    uri: store.uri,
    format: "iceberg",
    files: paths.map((path, i) => ({ deletion_id: `del_${i}`, path })),
  };
}

const hardDelete = (store: ObjectStore, paths: readonly string[]) =>
  runHardDelete(jobContext(root, "hard_delete", hardDeletePayload(store, paths)), {
    store,
    memoryLimitMb: 256,
  });

/** Files only the `expired` snapshots reference, computed from `readSnapshotFiles` of each snapshot. */
async function onlyReferencedBy(store: ObjectStore, expired: readonly bigint[]): Promise<string[]> {
  const byId = await referencedKeys(store, await loadIcebergTable(store));
  const kept = new Set([...byId].filter(([id]) => !expired.includes(id)).flatMap(([, keys]) => [...keys]));
  const gone = new Set(expired.flatMap((id) => [...(byId.get(id) ?? [])]));
  return [...gone].filter((k) => !kept.has(k)).sort();
}

async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

const ids = (list: readonly bigint[]) => list.map(String).sort();

describe("vacuum on Iceberg tables", () => {
  it("expires the snapshots the retention drops in a new metadata version, keeping main's, the branch's and the tag's heads", async () => {
    const { store, ids: c, stats } = await history();
    const before = await loadIcebergTable(store);
    const expected = await onlyReferencedBy(store, [S2, c.c3, c.c4]);

    const result = await vacuum(store);

    expect(result).toMatchObject({
      mode: "lite",
      dry_run: false,
      table_version: metadataVersion(before),
      committed_version: (metadataVersion(before) ?? 0) + 1,
      retention_hours: 120,
      table_retention_hours: 120,
      retention_shortened: false,
      expired_refs: ["old"],
    });
    expect(ids((result.expired_snapshots ?? []).map(BigInt))).toEqual(ids([S2, c.c3, c.c4]));
    expect(result.files.map((f) => f.path)).toEqual(expected);
    expect(expected).toContain("data/00000-5-dad9988f-2a3b-464c-adb6-6034de93da19-00001.parquet");
    expect(expected).toContain(stats.c3);
    expect(expected).not.toContain(stats.c6);
    expect(result.files.every((f) => f.reason === "expired_snapshot" && f.size > 0)).toBe(true);
    expect(result.bytes).toBe(result.files.reduce((n, f) => n + f.size, 0));
    expect(result.kept).toMatchObject({ retained_snapshots: 3 });

    const after = await loadIcebergTable(store);
    expect(after.metadataKey).toBe(`metadata/v${result.committed_version}.metadata.json`);
    expect(ids(after.metadata.snapshots.map((s) => s.snapshotId))).toEqual(ids([S1, c.c5, c.c6]));
    expect(after.metadata.currentSnapshotId).toBe(c.c6);
    expect(
      Object.fromEntries(Object.entries(after.metadata.refs).map(([n, r]) => [n, r.snapshotId])),
    ).toEqual({
      main: c.c6,
      dev: c.c5,
      audit: S1,
    });
    // The log loses c4 and everything before it; c5 stays (it was main's head, then rolled back).
    expect(after.metadata.snapshotLog.map((e) => e.snapshotId)).toEqual([c.c5, c.c6]);
    expect(after.metadata.statistics.map((s) => s.snapshotId)).toEqual([c.c6]);
    expect(after.metadata.metadataLog.at(-1)?.metadataFile).toBe(
      `${before.metadata.location}/${before.metadataKey}`,
    );
    // Vacuum deletes nothing; every proposed file is still there for hard delete.
    for (const f of result.files) expect(await store.head(f.path)).toBeDefined();

    // Hard delete of everything proposed leaves every remaining snapshot whole.
    const deleted = await hardDelete(
      store,
      result.files.map((f) => f.path),
    );
    expect(deleted).toMatchObject({ deleted: expected.length, retained: 0, failed: 0 });
    for (const [, keys] of await referencedKeys(store, after))
      for (const key of keys) expect(await store.head(key), key).toBeDefined();

    // The next vacuum finds nothing more to expire.
    const again = await vacuum(store);
    expect(again).toMatchObject({ files_count: 0, expired_snapshots: [], committed_version: null });
  });

  it("plans exactly the same files on a dry run and commits nothing", async () => {
    const { dir, store } = await history();
    const treeBefore = await tree(dir);
    const dry = await vacuum(store, { dry_run: true });
    expect(await tree(dir)).toEqual(treeBefore);
    expect(dry).toMatchObject({ dry_run: true, committed_version: null, expired_refs: ["old"] });

    const real = await vacuum(store);
    expect(real.files).toEqual(dry.files);
    expect(real.expired_snapshots).toEqual(dry.expired_snapshots);
    expect(real.table_version).toBe(dry.table_version);
  });

  it("takes the retention from history.expire.max-snapshot-age-ms, and records a shorter payload retention as shortened", async () => {
    const { store, ids: c } = await history();
    await editMetadata(store, (raw) => {
      (raw.properties as Record<string, string>)["history.expire.max-snapshot-age-ms"] = String(9 * DAY);
    });
    const table = await vacuum(store, { dry_run: true });
    // 9 days keep c4 (8 days old) on main's and dev's history; c3 (9 days) too, S2 (10 days) not.
    expect(table).toMatchObject({
      retention_hours: 216,
      table_retention_hours: 216,
      retention_shortened: false,
    });
    expect(table.expired_snapshots).toEqual([String(S2)]);

    const shortened = await vacuum(store, { dry_run: true, retention_hours: 24 });
    expect(shortened).toMatchObject({
      retention_hours: 24,
      table_retention_hours: 216,
      retention_shortened: true,
    });
    expect(ids((shortened.expired_snapshots ?? []).map(BigInt))).toEqual(ids([S2, c.c3, c.c4]));
  });

  it("keeps a branch's first min-snapshots-to-keep, from the branch's own setting before the table's", async () => {
    const { store } = await history();
    await editMetadata(store, (raw) => {
      (raw.properties as Record<string, string>)["history.expire.min-snapshots-to-keep"] = "2";
      const refs = raw.refs as Record<string, Record<string, unknown>>;
      refs.dev = { ...refs.dev, "min-snapshots-to-keep": 4 };
    });
    const result = await vacuum(store);
    // main: c6, c4; dev: c5, c4, c3, S2 (4 of them); audit: S1. Nothing expires but the tag `old`.
    expect(result).toMatchObject({ expired_snapshots: [], expired_refs: ["old"], files_count: 0 });
    const after = await loadIcebergTable(store);
    expect(after.metadata.snapshots).toHaveLength(6);
    expect(Object.keys(after.metadata.refs).sort()).toEqual(["audit", "dev", "main"]);
  });

  it("in full mode proposes an old orphan and its checksum, not a young one, never a metadata file", async () => {
    const { dir, store, ids: c } = await history();
    const old = new Date(NOW - 10 * DAY);
    const young = new Date(NOW - HOUR);
    const stray = async (key: string, at: Date) => {
      await writeLocal(join(dir, key), "stray bytes");
      utimesSync(join(dir, key), at, at);
    };
    await stray("data/stray.parquet", old);
    await stray("data/.stray.parquet.crc", old);
    await stray("data/young.parquet", young);
    await stray("metadata/stale.metadata.json", old);
    await stray("metadata/.hidden-notes", old);
    const expired = await onlyReferencedBy(store, [S2, c.c3, c.c4]);

    const full = await vacuum(store, { mode: "full", dry_run: true });
    const orphans = full.files.filter((f) => f.reason === "orphan");
    expect(orphans.map((f) => f.path)).toEqual(["data/.stray.parquet.crc", "data/stray.parquet"]);
    expect(orphans.every((f) => f.modified_at === old.getTime() && f.size === 11)).toBe(true);
    // The expired snapshots' files, and the Hadoop checksum the fixture keeps beside S2's data file.
    expect(
      full.files
        .filter((f) => f.reason === "expired_snapshot")
        .map((f) => f.path)
        .sort(),
    ).toEqual([...expired, "data/.00000-5-dad9988f-2a3b-464c-adb6-6034de93da19-00001.parquet.crc"].sort());
    expect(full.files.some((f) => isMetadataKey(f.path))).toBe(false);
    expect(full.kept).toMatchObject({ orphans_too_young: 1, hidden: 2 });
    expect(full.kept.metadata).toBeGreaterThanOrEqual(3);
    expect(full.objects_listed).toBe((await tree(dir)).length);

    const lite = await vacuum(store, { dry_run: true });
    expect(lite.files.map((f) => f.path)).toEqual(expired);
  });

  it("never proposes a path the payload keeps (a recovered file)", async () => {
    const { store } = await history();
    const first = await vacuum(store, { dry_run: true });
    const kept = first.files[0]?.path as string;
    const again = await vacuum(store, { dry_run: true, keep: [kept] });
    expect(again.files.map((f) => f.path)).toEqual(first.files.slice(1).map((f) => f.path));
    expect(again.kept.recovered).toBe(1);
  });

  it("reads s3a:// paths under an s3:// root as the table's own files, in full mode too", async () => {
    const { dir, store, ids: c } = await history("s3a://lake/t");
    expect(store.uri).toBe("s3://lake/t/");
    const table = await loadIcebergTable(store);
    expect(table.metadata.snapshots.every((s) => s.manifestList?.startsWith("s3a://lake/t/metadata/"))).toBe(
      true,
    );
    const expected = await onlyReferencedBy(store, [S2, c.c3, c.c4]);

    // Every object is old enough to be an orphan: a misread s3a path would show up as one.
    const full = await vacuum(store, { mode: "full", dry_run: true }, Date.now() + 10 * DAY);
    expect(full.kept.outside_table_root).toBeUndefined();
    expect(full.files.every((f) => f.reason === "expired_snapshot")).toBe(true);
    expect(full.files.map((f) => f.path).sort()).toEqual(
      [...expected, "data/.00000-5-dad9988f-2a3b-464c-adb6-6034de93da19-00001.parquet.crc"].sort(),
    );
    expect(full.objects_listed).toBe((await tree(dir)).length);
  });

  it("refuses a full vacuum when metadata references another bucket, and runs a lite one", async () => {
    const { store } = await history("s3://lake/t");
    await editMetadata(store, (raw) => {
      raw.statistics = [
        ...((raw.statistics as unknown[]) ?? []),
        {
          "snapshot-id": raw["current-snapshot-id"],
          "statistics-path": "s3://other-bucket/t/metadata/stats.puffin",
          "file-size-in-bytes": 10,
          "blob-metadata": [],
        },
      ];
    });
    await expect(vacuum(store, { mode: "full", dry_run: true })).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("s3://other-bucket"),
    });
    const lite = await vacuum(store, { dry_run: true });
    expect(lite.files_count).toBeGreaterThan(0);
  });

  it("refuses, for good, tables whose metadata it must not write", async () => {
    const property = (name: string, value: string) => (raw: Record<string, unknown>) => {
      (raw.properties as Record<string, string>)[name] = value;
    };
    const cases: [string, (raw: Record<string, unknown>) => void, string][] = [
      [
        "format version 3",
        (raw) => {
          raw["format-version"] = 3;
        },
        "format version 3",
      ],
      ["gc.enabled=false", property("gc.enabled", "false"), "gc.enabled=false"],
      [
        "encryption keys",
        (raw) => {
          raw["encryption-keys"] = [];
        },
        "encrypt",
      ],
      [
        "a moved table",
        (raw) => {
          raw.location = "s3://elsewhere/t";
        },
        "records its location",
      ],
      [
        "a bad retention property",
        property("history.expire.max-snapshot-age-ms", "5 days"),
        "history.expire.max-snapshot-age-ms",
      ],
    ];
    for (const [name, spoil, reason] of cases) {
      const dir = join(root, `refused-${++tables}`);
      const store = await lineitemCopy(dir);
      await editMetadata(store, spoil);
      const before = await tree(dir);
      await expect(vacuum(store), name).rejects.toMatchObject({
        retryable: false,
        message: expect.stringContaining(reason),
      });
      expect(await tree(dir), name).toEqual(before);
    }

    // Metadata named by a catalog (not vN.metadata.json).
    const dir = join(root, `refused-${++tables}`);
    const store = await lineitemCopy(dir);
    await rm(join(dir, "metadata/version-hint.text"));
    await rm(join(dir, "metadata/v1.metadata.json"));
    await rename(join(dir, "metadata/v2.metadata.json"), join(dir, "metadata/00002-abc.metadata.json"));
    await expect(vacuum(store)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("catalog"),
    });
  });

  it("plans again when another writer commits the next metadata version first", async () => {
    const { dir, store, ids: c } = await history();
    const racing = new RacingStore(dir);
    const before = metadataVersion(await loadIcebergTable(store)) as number;
    let racer: bigint | undefined;
    racing.beforeCommit = async () => {
      racer = await replaceFiles(new FileStore(dir), NOW - HOUR, { remove: () => [], add: 1 });
    };
    const result = await vacuum(racing);
    expect(result).toMatchObject({ table_version: before + 1, committed_version: before + 2 });
    // Planned again on the racer's metadata: its snapshot heads main, and c6 behind it now expires too.
    const after = await loadIcebergTable(store);
    expect(after.metadata.currentSnapshotId).toBe(racer);
    expect(ids(after.metadata.snapshots.map((s) => s.snapshotId))).toEqual(ids([S1, c.c5, racer as bigint]));
    expect(result.expired_snapshots).toContain(String(c.c6));
  });
});

describe("hard delete on Iceberg tables", () => {
  it("deletes an unreferenced file, retains a referenced one, reports a missing one absent, refuses metadata and paths outside the root", async () => {
    const { dir, store, ids: c } = await history();
    // Before the expiry is committed, the snapshots still hold every file a dry run proposes.
    const dry = await vacuum(store, { dry_run: true });
    const early = await hardDelete(
      store,
      dry.files.map((f) => f.path),
    );
    expect(early).toMatchObject({ deleted: 0, retained: dry.files_count, failed: 0 });

    const vacuumed = await vacuum(store);
    expect(vacuumed.files).toEqual(dry.files);
    const proposed = vacuumed.files[0]?.path as string;
    const table = await loadIcebergTable(store);
    const live = (await readSnapshotFiles(store, table)).entries[0]?.key as string;
    // A file only the branch's head references (not main's): still in the metadata, so retained.
    const byId = await referencedKeys(store, table);
    const dev = [...(byId.get(c.c5) ?? [])].find(
      (k) => k.startsWith("data/gen-") && !byId.get(c.c6)?.has(k),
    ) as string;
    expect(dev).toBeDefined();

    const result = await hardDelete(store, [
      proposed,
      live,
      dev,
      "data/never-written.parquet",
      "metadata/v1.metadata.json",
      "metadata/version-hint.text",
      "s3://elsewhere/t/data/x.parquet",
      "../outside.parquet",
    ]);
    expect(result.files.map((f) => [f.path, f.outcome])).toEqual([
      [proposed, "deleted"],
      [live, "retained"],
      [dev, "retained"],
      ["data/never-written.parquet", "absent"],
      ["metadata/v1.metadata.json", "failed"],
      ["metadata/version-hint.text", "failed"],
      ["s3://elsewhere/t/data/x.parquet", "failed"],
      ["../outside.parquet", "failed"],
    ]);
    expect(result).toMatchObject({
      table_version: vacuumed.committed_version,
      deleted: 1,
      retained: 2,
      failed: 4,
    });
    expect(result.files[1]?.detail).toMatch(/^referenced by snapshot \d+ of metadata version \d+$/);
    expect(existsSync(join(dir, proposed))).toBe(false);
    expect(existsSync(join(dir, live))).toBe(true);
    expect(existsSync(join(dir, "metadata/v1.metadata.json"))).toBe(true);
  });

  it("retains a file that a snapshot committed between two delete batches references", async () => {
    const { dir, store } = await history();
    const strays = ["data/a.parquet", "data/b.parquet", "data/c.parquet"];
    for (const key of strays) await writeLocal(join(dir, key), "bytes");
    const hooked = new RacingStore(dir);
    let readded = false;
    hooked.afterDelete = async () => {
      if (readded) return;
      readded = true;
      // A writer puts data/c.parquet into a new snapshot after the first batch.
      const table = await loadIcebergTable(store);
      const base = await readSnapshotFiles(store, table);
      const { commitReplace } = await import("../src/iceberg/index.ts");
      const outcome = await commitReplace(store, table, {
        base,
        removed: [],
        added: [
          {
            key: "data/c.parquet",
            fileSizeInBytes: 5,
            recordCount: 1,
            specId: 0,
            partition: new Map(),
            valueCounts: new Map(),
            nullValueCounts: new Map(),
            lowerBounds: new Map(),
            upperBounds: new Map(),
          },
        ],
        summary: {},
        nowMs: NOW,
      });
      expect(outcome.committed).toBe(true);
    };
    const version = metadataVersion(await loadIcebergTable(store)) as number;
    const result = await runIcebergHardDelete(
      jobContext(root, "hard_delete", hardDeletePayload(hooked, strays)),
      { store: hooked, memoryLimitMb: 256 },
      1,
    );
    expect(result.files.map((f) => f.outcome)).toEqual(["deleted", "deleted", "retained"]);
    expect(result.table_version).toBe(version + 1);
    expect(existsSync(join(dir, "data/c.parquet"))).toBe(true);
    expect(DELETE_BATCH).toBe(1000);
  });
});

describe("paths", () => {
  it("reads s3a:// and s3n:// as s3://, and tells buckets and schemes apart", () => {
    expect(fileSystemOf("s3a://lake/t/data/x.parquet")).toBe("s3://lake");
    expect(fileSystemOf("S3N://lake/t/")).toBe("s3://lake");
    expect(fileSystemOf("s3://other/t/x")).toBe("s3://other");
    expect(fileSystemOf("gs://lake/t/x")).toBe("gs://lake");
    expect(fileSystemOf("file:/tmp/t/x")).toBe("file://");
    expect(fileSystemOf("file:///tmp/t/x")).toBe("file://");
    expect(fileSystemOf("/tmp/t/x")).toBe("file://");
    expect(fileSystemOf("data/x.parquet")).toBeNull();
  });

  it("never names metadata JSON files, the version hint or their checksums", () => {
    for (const key of [
      "metadata/v3.metadata.json",
      "metadata/00003-1f2e.metadata.json",
      "metadata/v3.gz.metadata.json",
      "metadata/v3.metadata.json.gz",
      "metadata/version-hint.text",
      "metadata/.v3.metadata.json.crc",
      "metadata/.version-hint.text.crc",
    ])
      expect(isMetadataKey(key), key).toBe(true);
    for (const key of ["metadata/snap-1-1-a.avro", "data/v3.metadata.json.parquet", "metadata/a-m0.avro"])
      expect(isMetadataKey(key), key).toBe(false);
  });
});

/** A file store where another writer acts right before the next metadata commit, or after a batch delete. */
class RacingStore extends FileStore {
  beforeCommit: (() => Promise<unknown>) | undefined;
  afterDelete: (() => Promise<void>) | undefined;

  override async writeIfAbsent(key: string, source: WriteSource) {
    const hook = this.beforeCommit;
    if (hook && key.endsWith(".metadata.json")) {
      this.beforeCommit = undefined;
      await hook();
    }
    return super.writeIfAbsent(key, source);
  }

  override async deleteMany(keys: readonly string[]) {
    const result = await super.deleteMany(keys);
    await this.afterDelete?.();
    return result;
  }
}
