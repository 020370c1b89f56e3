/**
 * Vacuum plans on real Delta tables in temporary folders: fixtures other engines wrote (a history
 * with 31 tombstones, a vacuumed history read from checkpoints, a partitioned table) and generated
 * tables whose stray files get old modification times with `utimes`. "Now" is a manual clock, so
 * retention and orphan age are exact. Vacuum only reads: every test checks nothing was deleted.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type VacuumPayload, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "../../test/support/delta-tables.ts";
import { commit, loadSnapshot, removeFor, writeCheckpoint } from "../src/delta/index.ts";
import { Engine } from "../src/engine/duckdb.ts";
import { runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import { FileStore } from "../src/store/index.ts";
import { commitRaw, copyFixture, jobContext, readTable, setTableProperties } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-vacuum-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function payloadFor(path: string, extra: Partial<VacuumPayload> = {}): VacuumPayload {
  return VacuumPayloadSchema.parse({
    table_id: "tbl_test",
    uri: `file://${path}`,
    format: "delta",
    ...extra,
  });
}

const vacuum = (path: string, extra: Partial<VacuumPayload> = {}, clock?: ManualClock) =>
  runVacuum(jobContext(root, "vacuum", payloadFor(path, extra)), {
    store: new FileStore(path),
    memoryLimitMb: 256,
    ...(clock ? { clock } : {}),
  });

/** Every file under a folder, relative, sorted: what vacuum must leave exactly as it was. */
async function tree(path: string): Promise<string[]> {
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(path.length + 1))
    .sort();
}

/** Writes a stray file modified `ageMs` before `now`. */
function stray(path: string, key: string, ageMs: number, now: number): void {
  const file = join(path, key);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, "stray bytes");
  const at = new Date(now - ageMs);
  utimesSync(file, at, at);
}

describe("vacuum on Delta tables", () => {
  it("proposes simple_table's 31 expired tombstones, the same on a dry run and a real run, and deletes nothing", async () => {
    const path = copyFixture("simple_table", root);
    const before = await tree(path);
    const rowsBefore = (await readTable(new FileStore(path), root)).rows;
    const dry = await vacuum(path, { dry_run: true });
    const real = await vacuum(path);

    expect(dry).toMatchObject({ dry_run: true, mode: "lite", table_version: 4, retention_hours: 168 });
    expect(real).toMatchObject({ dry_run: false, retention_shortened: false, files_count: 31 });
    expect(real.files).toEqual(dry.files);
    expect(real.files.every((f) => f.reason === "tombstone" && (f.removed_at ?? 0) > 0)).toBe(true);
    // simple_table's removes carry no size: the plan asked the store.
    expect(real.bytes).toBe(real.files.reduce((n, f) => n + f.size, 0));
    expect(real.files.every((f) => f.size > 0)).toBe(true);
    expect(await tree(path)).toEqual(before);

    // What the plan proposed is exactly what hard delete then removes; the table still reads.
    const deleted = await runHardDelete(
      jobContext(root, "hard_delete", {
        table_id: "tbl_test",
        uri: `file://${path}`,
        format: "delta" as const,
        files: real.files.map((f, i) => ({ deletion_id: `del_${i}`, path: f.path })),
      }),
      { store: new FileStore(path), memoryLimitMb: 256 },
    );
    expect(deleted).toMatchObject({ deleted: 31, retained: 0, failed: 0 });
    expect(await tree(path)).toEqual(before.filter((f) => !real.files.some((p) => p.path === f)));
    const table = await readTable(new FileStore(path), root);
    expect(table.missing).toEqual([]);
    expect(table.rows).toBe(rowsBefore);

    const again = await vacuum(path, { mode: "full" });
    expect(again.files_count).toBe(0);
    expect(again.kept.already_gone).toBe(31);
  });

  it("finds nothing to vacuum in checkpoints_vacuumed (history read from checkpoints) but an old orphan, and never a log file", async () => {
    const path = copyFixture("checkpoints_vacuumed", root);
    const now = Date.parse("2026-03-01T00:00:00Z");
    const clock = new ManualClock(new Date(now));
    stray(path, "date=2020-06-01/part-stray.c000.snappy.parquet", 10 * DAY, now);
    stray(path, "_delta_log/00000000000000000003.json.tmp", 10 * DAY, now);
    const before = await tree(path);

    const lite = await vacuum(path, {}, clock);
    expect(lite).toMatchObject({ table_version: 12, files_count: 0, objects_listed: 0 });

    const full = await vacuum(path, { mode: "full" }, clock);
    expect(full.files).toEqual([
      {
        path: "date=2020-06-01/part-stray.c000.snappy.parquet",
        size: 11,
        reason: "orphan",
        removed_at: null,
        modified_at: now - 10 * DAY,
      },
    ]);
    expect(full.kept.delta_log).toBe(11);
    expect(full.objects_listed).toBe(12);
    expect(await tree(path)).toEqual(before);
  });

  it("expires tombstones read from a checkpoint by retention; a tombstone the checkpoint dropped is a full-mode orphan", async () => {
    // The case of delta-rs's generated `checkpoints_tombstones` table (not a checked-in fixture).
    const path = join(root, "checkpoint-tombstones");
    await writeEventsTable(path, { days: 1, filesPerDay: 4, rowsPerFile: 50 });
    const store = new FileStore(path);
    const now = Date.now();
    const clock = new ManualClock(new Date(now));
    const engine = await Engine.open();
    try {
      const snapshot = await loadSnapshot(store, engine, { scratchDir: join(root, "log-ct") });
      const [old, recent] = [...snapshot.files].sort((a, b) => a.path.localeCompare(b.path));
      if (!old || !recent) throw new Error("the generated table has too few files");
      await commit(
        store,
        snapshot,
        [{ remove: removeFor(old, now - 8 * DAY) }, { remove: removeFor(recent, now - 2 * DAY) }],
        {
          jobId: "job-writer",
          operation: "DELETE",
          operationParameters: {},
          engine,
          scratchDir: join(root, "c"),
        },
      );
      const after = await loadSnapshot(store, engine, { scratchDir: join(root, "log-ct") });
      await writeCheckpoint(store, engine, after, { scratchDir: join(root, "c"), clock });
      const fromCheckpoint = await loadSnapshot(store, engine, { scratchDir: join(root, "log-ct") });
      expect(fromCheckpoint.checkpointVersion).toBe(1);
      expect(fromCheckpoint.tombstones.map((t) => t.path)).toEqual([recent.path]);
      utimesSync(join(path, old.path), new Date(now - 8 * DAY), new Date(now - 8 * DAY));

      const lite = await vacuum(path, {}, clock);
      expect(lite.files).toEqual([]);
      expect(lite.kept).toEqual({ tombstones_within_retention: 1 });

      const shortened = await vacuum(path, { retention_hours: 24 }, clock);
      expect(shortened).toMatchObject({
        retention_hours: 24,
        table_retention_hours: 168,
        retention_shortened: true,
      });
      expect(shortened.files).toEqual([
        {
          path: recent.path,
          size: recent.size,
          reason: "tombstone",
          removed_at: now - 2 * DAY,
          modified_at: null,
        },
      ]);

      const full = await vacuum(path, { mode: "full" }, clock);
      expect(full.files.map((f) => [f.path, f.reason])).toEqual([[old.path, "orphan"]]);
      expect(full.kept).toMatchObject({ tombstones_within_retention: 1, live: 2, delta_log: 4 });

      clock.advance(6 * DAY);
      const later = await vacuum(path, { mode: "full" }, clock);
      expect(later.files.map((f) => [f.path, f.reason]).sort()).toEqual(
        [
          [old.path, "orphan"],
          [recent.path, "tombstone"],
        ].sort(),
      );
    } finally {
      engine.close();
    }
  });

  it("proposes old orphans in full mode only; young orphans, hidden files and kept paths stay; `_col=value` folders are data", async () => {
    const path = copyFixture("partition-type-primitives", root);
    const now = Date.parse("2026-03-01T00:00:00Z");
    const clock = new ManualClock(new Date(now));
    const old = 4 * DAY;
    stray(path, "year=2020/part-stray-old.snappy.parquet", old, now);
    stray(path, "year=2020/part-stray-young.snappy.parquet", 71 * HOUR, now);
    stray(path, "_year=2019/part-old.snappy.parquet", old, now);
    stray(path, "year=2020/.part-stray-old.snappy.parquet.crc", old, now);
    stray(path, ".hidden/part-old.snappy.parquet", old, now);
    stray(path, "_SUCCESS", old, now);
    stray(path, "_tmp/part-old.snappy.parquet", old, now);
    stray(path, "part-recovered.snappy.parquet", old, now);
    const before = await tree(path);

    const payload = { mode: "full" as const, keep: ["part-recovered.snappy.parquet"] };
    const dry = await vacuum(path, { ...payload, dry_run: true }, clock);
    const full = await vacuum(path, payload, clock);
    expect(full.files).toEqual(dry.files);
    expect(full.files.map((f) => f.path)).toEqual([
      "_year=2019/part-old.snappy.parquet",
      "year=2020/part-stray-old.snappy.parquet",
    ]);
    expect(full.files.every((f) => f.reason === "orphan" && f.modified_at === now - old)).toBe(true);
    expect(full.kept).toEqual({ live: 16, delta_log: 1, orphans_too_young: 1, hidden: 4, recovered: 1 });
    expect(full.bytes).toBe(22);

    const lite = await vacuum(path, { ...payload, mode: "lite" }, clock);
    expect(lite.files).toEqual([]);
    expect(await tree(path)).toEqual(before);
  });

  it("uses the table's own retention property and records a shorter one asked for", async () => {
    const path = copyFixture("simple_table", root);
    const engine = await Engine.open();
    try {
      const snapshot = await loadSnapshot(new FileStore(path), engine, { scratchDir: join(root, "log-rp") });
      await setTableProperties(path, snapshot, { "delta.deletedFileRetentionDuration": "interval 30 days" });
    } finally {
      engine.close();
    }
    // The tombstones were removed on 2020-04-27; a day later none is 30 days old.
    const clock = new ManualClock(new Date(Date.parse("2020-04-28T00:00:00Z")));
    const own = await vacuum(path, {}, clock);
    expect(own).toMatchObject({
      retention_hours: 720,
      table_retention_hours: 720,
      retention_shortened: false,
    });
    expect(own.files_count).toBe(0);
    expect(own.kept.tombstones_within_retention).toBe(31);

    const shorter = await vacuum(path, { retention_hours: 12 }, clock);
    expect(shorter).toMatchObject({ retention_hours: 12, retention_shortened: true, files_count: 31 });
    const longer = await vacuum(path, { retention_hours: 1000 }, clock);
    expect(longer).toMatchObject({ retention_shortened: false, files_count: 0 });
  });

  it("never proposes a tombstone outside the table root, and counts it", async () => {
    const path = copyFixture("delta-0.8.0", root);
    await commitRaw(path, [
      {
        remove: {
          path: "file:///elsewhere/shallow-clone-source/part-00000.snappy.parquet",
          deletionTimestamp: 1_600_000_000_000,
          dataChange: true,
        },
      },
    ]);
    const result = await vacuum(path, { mode: "full" });
    expect(result.kept.outside_table_root).toBe(1);
    expect(result.files.every((f) => !f.path.includes("elsewhere"))).toBe(true);
  });

  it("refuses, for good, other formats, tables it can't write and an unreadable retention property", async () => {
    const features = copyFixture("simple_table_features", root);
    await expect(vacuum(features)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("vacuum refused"),
    });
    await expect(vacuum(features, { format: "hive" })).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("only delta"),
    });
    // A Delta table named an Iceberg one has no Iceberg metadata to read.
    await expect(vacuum(features, { format: "iceberg" })).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("no Iceberg metadata"),
    });

    const path = copyFixture("delta-0.8.0", root);
    const engine = await Engine.open();
    try {
      const snapshot = await loadSnapshot(new FileStore(path), engine, { scratchDir: join(root, "log-bad") });
      await setTableProperties(path, snapshot, { "delta.deletedFileRetentionDuration": "a fortnight" });
    } finally {
      engine.close();
    }
    await expect(vacuum(path)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("'a fortnight'"),
    });
  });
});
