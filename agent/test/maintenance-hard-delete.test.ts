/**
 * Hard delete on real Delta tables, on `file://` and on S3 (s3rver: the real S3 HTTP API on
 * loopback). The concurrent writer that re-adds a file is a plain log commit, made before the job
 * runs or, through a store hook, between two delete batches, so both re-checks are exercised every run.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HardDeletePayload } from "@lakesmith/shared/maintenance";
import { PartitionExpirationPayloadSchema, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "../../test/support/delta-tables.ts";
import { commitKey } from "../src/delta/index.ts";
import { runPartitionExpiration } from "../src/maintenance/expire.ts";
import { DELETE_BATCH, runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import { type DeleteResult, FileStore, type ObjectStore, storeFor } from "../src/store/index.ts";
import { type LocalS3, startS3rver, uploadFolder } from "./support/local-s3.ts";
import { commitRaw, jobContext, readdAction, readTable } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-hard-delete-"));
let s3: LocalS3;

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

const DAY = 86_400_000;

function hardDelete(store: ObjectStore, paths: readonly string[], uri = store.uri) {
  const payload: HardDeletePayload = {
    table_id: "tbl_test",
    uri,
    format: "delta",
    files: paths.map((path, i) => ({ deletion_id: `del_${i}`, path })),
  };
  return runHardDelete(jobContext(root, "hard_delete", payload), { store, memoryLimitMb: 256 });
}

const expire = (store: ObjectStore, asOf: string) =>
  runPartitionExpiration(
    jobContext(
      root,
      "partition_expiration",
      PartitionExpirationPayloadSchema.parse({
        table_id: "tbl_test",
        uri: store.uri,
        format: "delta",
        partition_column: "event_date",
        as_of: asOf,
        retention_days: 1,
      }),
    ),
    { store, memoryLimitMb: 256 },
  );

/** A file store that runs a hook after each batch delete (a writer acting mid-job). */
class HookedStore extends FileStore {
  afterDelete: (() => Promise<void>) | undefined;
  batches = 0;
  override async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const result = await super.deleteMany(keys);
    this.batches++;
    await this.afterDelete?.();
    return result;
  }
}

describe("hard delete", () => {
  it("keeps a file a concurrent writer re-added (retained, naming the version) and deletes the others", async () => {
    const path = join(root, "readded");
    await writeEventsTable(path, { days: 2, filesPerDay: 3, rowsPerFile: 100 });
    const store = new FileStore(path);
    const expired = await expire(store, "2026-01-03");
    expect(expired.files_count).toBe(3);
    const [readded, ...others] = expired.files;
    if (!readded) throw new Error("nothing expired");
    const version = await commitRaw(path, [
      readdAction({ ...readded, partitionValues: readded.partition_values, stats: readded.stats }),
    ]);

    const result = await hardDelete(
      store,
      expired.files.map((f) => f.path),
    );
    expect(result).toMatchObject({ table_version: version, deleted: 2, retained: 1, failed: 0 });
    expect(result.files[0]).toMatchObject({ path: readded.path, outcome: "retained" });
    expect(result.files[0]?.detail).toContain(`added in version ${version}`);
    expect(existsSync(join(path, readded.path))).toBe(true);
    for (const f of others) expect(existsSync(join(path, f.path))).toBe(false);
    const table = await readTable(store, root);
    expect(table.missing).toEqual([]);
    expect(table.rows).toBe(400);
  });

  it("re-checks the log right before each batch: a file re-added while an earlier batch was deleted is kept", async () => {
    const path = join(root, "batches");
    await writeEventsTable(path, { days: 1, filesPerDay: 1, rowsPerFile: 50 });
    const store = new HookedStore(path);
    const source = (await readTable(store, root)).snapshot.files[0];
    if (!source) throw new Error("no file");
    mkdirSync(join(path, "stale"));
    const stale = Array.from(
      { length: DELETE_BATCH + 5 },
      (_, i) => `stale/part-${String(i).padStart(5, "0")}.parquet`,
    );
    for (const key of stale) writeFileSync(join(path, key), "old bytes");
    const last = stale.at(-1) as string;
    copyFileSync(join(path, source.path), join(path, last));

    let readdedIn: number | undefined;
    store.afterDelete = async () => {
      if (readdedIn !== undefined) return;
      readdedIn = await commitRaw(path, [
        readdAction({
          path: last,
          size: statSync(join(path, last)).size,
          partitionValues: { event_date: "2026-01-01" },
          stats: JSON.stringify({ numRecords: 50 }),
        }),
      ]);
    };
    const result = await hardDelete(store, stale);
    expect(store.batches).toBe(2);
    expect(result).toMatchObject({ deleted: DELETE_BATCH + 4, retained: 1, table_version: readdedIn });
    expect(result.files.at(-1)).toMatchObject({ path: last, outcome: "retained" });
    expect(existsSync(join(path, last))).toBe(true);
    expect(readdirSync(join(path, "stale"))).toEqual([last.slice("stale/".length)]);
    expect((await readTable(store, root)).rows).toBe(100);
  });

  it("never deletes the log or outside the table root, reports gone files as absent, and answers every id of a path", async () => {
    const path = join(root, "refusals");
    await writeEventsTable(path, { days: 1, filesPerDay: 1, rowsPerFile: 10 });
    writeFileSync(join(path, "orphan.parquet"), "x");
    const store = new FileStore(path);
    const result = await hardDelete(store, [
      commitKey(0),
      "file:///etc/passwd",
      "../outside.parquet",
      "never-there.parquet",
      "orphan.parquet",
      "orphan.parquet",
      `${store.uri}orphan.parquet`,
    ]);
    expect(result.files.map((f) => f.outcome)).toEqual([
      "failed",
      "failed",
      "failed",
      "absent",
      "deleted",
      "deleted",
      "deleted",
    ]);
    expect(result.files[0]?.detail).toContain("Delta log");
    expect(result.files[1]?.detail).toContain("outside the table root");
    expect(result).toMatchObject({ deleted: 3, failed: 3, retained: 0 });
    expect(existsSync(join(path, commitKey(0)))).toBe(true);
    expect(existsSync(join(path, "orphan.parquet"))).toBe(false);
    await expect(
      runHardDelete(
        jobContext(root, "hard_delete", {
          table_id: "t",
          uri: store.uri,
          format: "iceberg" as const,
          files: [{ deletion_id: "d", path: "x" }],
        }),
        { store, memoryLimitMb: 256 },
      ),
    ).rejects.toMatchObject({ retryable: false });
  });
});

describe("deleting jobs on S3", () => {
  it("expires, vacuums (full) and hard-deletes a table on S3; a re-added file is retained and the table reads", async () => {
    const local = join(root, "s3-events");
    await writeEventsTable(local, { days: 3, filesPerDay: 2, rowsPerFile: 100 });
    writeFileSync(
      join(local, "event_date=2026-01-02", "part-orphan.parquet"),
      "an attempt that never committed",
    );
    const store = storeFor("s3://lake/warehouse/events/", { s3: s3.options });
    await uploadFolder(local, store);

    const expired = await expire(store, "2026-01-03");
    expect(expired).toMatchObject({ committed_version: 1, files_count: 2 });

    // Four days on, the orphan is old enough; the expiration's removes need a shortened retention.
    const clock = new ManualClock(new Date(Date.now() + 4 * DAY));
    const vacuum = await runVacuum(
      jobContext(
        root,
        "vacuum",
        VacuumPayloadSchema.parse({
          table_id: "tbl_test",
          uri: store.uri,
          format: "delta",
          mode: "full",
          retention_hours: 24,
        }),
      ),
      { store, memoryLimitMb: 256, clock },
    );
    expect(vacuum.files.map((f) => [f.path, f.reason]).sort()).toEqual(
      [
        ["event_date=2026-01-02/part-orphan.parquet", "orphan"],
        ...expired.files.map((f) => [f.path, "tombstone"]),
      ].sort(),
    );
    expect(vacuum).toMatchObject({ retention_shortened: true, objects_listed: 9 });

    // A writer puts one expired file back before the pending deletions run.
    const [readded] = expired.files;
    if (!readded) throw new Error("nothing expired");
    const body = `${JSON.stringify({ commitInfo: { timestamp: Date.now(), operation: "WRITE" } })}\n${JSON.stringify(
      readdAction({ ...readded, partitionValues: readded.partition_values, stats: readded.stats }),
    )}\n`;
    expect(await store.writeIfAbsent(commitKey(2), body)).toEqual({ written: true });

    const result = await hardDelete(
      store,
      vacuum.files.map((f) => f.path),
    );
    expect(result).toMatchObject({ table_version: 2, deleted: 2, retained: 1, failed: 0 });
    expect(result.files.find((f) => f.path === readded.path)?.outcome).toBe("retained");
    expect(await store.head(readded.path)).toBeDefined();
    expect(await store.head("event_date=2026-01-02/part-orphan.parquet")).toBeUndefined();
    const table = await readTable(store, root);
    expect(table.missing).toEqual([]);
    expect(table.rows).toBe(500);
    expect(table.rows).toBe(table.statsRows);
  });
});
