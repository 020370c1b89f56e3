/**
 * Vacuum and hard delete on a Delta table on S3 while the store misbehaves (`support/faulty-s3.ts`
 * in front of s3rver): transient faults are ridden out and give the same result as a clean run; a
 * store that keeps failing fails the job with an error naming the object and the status, or, for a
 * delete, fails those files and deletes nothing it can't vouch for. No file is counted twice.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type HardDeletePayload,
  PartitionExpirationPayloadSchema,
  VacuumPayloadSchema,
} from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "../../test/support/delta-tables.ts";
import { runPartitionExpiration } from "../src/maintenance/expire.ts";
import { runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import { type ObjectStore, StoreError, storeFor } from "../src/store/index.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";
import { uploadFolder } from "./support/local-s3.ts";
import { jobContext, readTable } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-faults-"));
const RETRY = { attempts: 3, baseMs: 1, maxMs: 5, stallTimeoutMs: 2000 };
const DAY = 86_400_000;
let s3: FaultyS3;
let tables = 0;

beforeAll(async () => {
  s3 = await startFaultyS3();
});
afterEach(() => s3.clear());
afterAll(async () => {
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

/** An events table on S3 (3 days x 2 files x 100 rows, plus an orphan), its first day expired. */
async function expiredTable(): Promise<{ store: ObjectStore; prefix: string }> {
  const name = `table-${tables++}`;
  const local = join(root, name);
  await writeEventsTable(local, { days: 3, filesPerDay: 2, rowsPerFile: 100 });
  writeFileSync(
    join(local, "event_date=2026-01-02", "part-orphan.parquet"),
    "an attempt that never committed",
  );
  const prefix = `warehouse/${name}/`;
  const store = storeFor(`s3://lake/${prefix}`, { s3: { ...s3.options, retry: RETRY } });
  await uploadFolder(local, store);
  const payload = PartitionExpirationPayloadSchema.parse({
    table_id: "tbl_test",
    uri: store.uri,
    format: "delta",
    partition_column: "event_date",
    as_of: "2026-01-03",
    retention_days: 1,
  });
  await runPartitionExpiration(jobContext(root, "partition_expiration", payload), {
    store,
    memoryLimitMb: 256,
  });
  return { store, prefix };
}

/** A full vacuum four days on, with a one-day retention: the expired files and the orphan. */
function vacuum(store: ObjectStore) {
  const payload = VacuumPayloadSchema.parse({
    table_id: "tbl_test",
    uri: store.uri,
    format: "delta",
    mode: "full",
    retention_hours: 24,
  });
  const clock = new ManualClock(new Date(Date.now() + 4 * DAY));
  return runVacuum(jobContext(root, "vacuum", payload), { store, memoryLimitMb: 256, clock });
}

function hardDelete(store: ObjectStore, paths: readonly string[]) {
  const payload: HardDeletePayload = {
    table_id: "tbl_test",
    uri: store.uri,
    format: "delta",
    files: paths.map((path, i) => ({ deletion_id: `del_${i}`, path })),
  };
  return runHardDelete(jobContext(root, "hard_delete", payload), { store, memoryLimitMb: 256 });
}

describe("vacuum on a faulty store", () => {
  it("plans the same files through throttled listings, 500s and a truncated log read", async () => {
    const { store, prefix } = await expiredTable();
    const clean = await vacuum(store);
    expect(clean.files_count).toBe(3);

    s3.inject({ op: "ListObjectsV2", key: prefix, times: 2, fault: { kind: "slowDown" } });
    s3.inject({
      op: "GetObject",
      key: /_delta_log\/0+\.json$/,
      fault: { kind: "truncate", afterBytes: 200 },
    });
    s3.inject({ op: "GetObject", key: /_delta_log\/0+1\.json$/, fault: { kind: "status", status: 500 } });
    const faulty = await vacuum(store);
    expect(
      s3.requests.filter((r) => r.fault !== null && r.key.startsWith(prefix)).map((r) => r.fault),
    ).toEqual(expect.arrayContaining(["slowDown", "slowDown", "truncate", "status"]));
    expect(faulty.files).toEqual(clean.files);
    expect(faulty.kept).toEqual(clean.kept);
  });

  it("fails with an error naming the listing and the status when the store keeps throttling", async () => {
    const { store, prefix } = await expiredTable();
    s3.inject({ op: "ListObjectsV2", key: prefix, times: Infinity, fault: { kind: "slowDown" } });
    const err = await vacuum(store).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("unavailable");
    expect((err as StoreError).message).toMatch(
      new RegExp(`^LIST s3://lake/${prefix}\\* failed after 3 attempts: 503 SlowDown`),
    );
  });
});

describe("hard delete on a faulty store", () => {
  it("counts each file once when a delete landed but its answer was lost, and the table still reads", async () => {
    const { store, prefix } = await expiredTable();
    const planned = await vacuum(store);
    const paths = planned.files.map((f) => f.path);
    s3.inject({
      op: "HeadObject",
      key: new RegExp(`^${prefix}`),
      times: 2,
      fault: { kind: "status", status: 503 },
    });
    s3.inject({ op: "DeleteObjects", key: new RegExp(`^${prefix}`), fault: { kind: "loseAnswer" } });

    const result = await hardDelete(store, paths);
    expect(result).toMatchObject({ deleted: 3, retained: 0, failed: 0 });
    expect(result.files.map((f) => f.outcome)).toEqual(["deleted", "deleted", "deleted"]);
    expect(s3.requests.filter((r) => r.op === "DeleteObjects" && r.fault === "loseAnswer")).toHaveLength(1);
    for (const path of paths) expect(await store.head(path)).toBeUndefined();
    const table = await readTable(store, root);
    expect(table.missing).toEqual([]);
    expect(table.rows).toBe(400);
  });

  it("fails every file of a batch the store keeps refusing, naming the status, and deletes none", async () => {
    const { store, prefix } = await expiredTable();
    const planned = await vacuum(store);
    const paths = planned.files.map((f) => f.path);
    s3.inject({
      op: "DeleteObjects",
      key: new RegExp(`^${prefix}`),
      times: Infinity,
      fault: { kind: "status", status: 500 },
    });

    const result = await hardDelete(store, paths);
    expect(result).toMatchObject({ deleted: 0, failed: 3 });
    for (const file of result.files)
      expect(file.detail).toMatch(/^unavailable: DELETE .* failed after 3 attempts: 500/);
    for (const path of paths) expect(await store.head(path)).toBeDefined();
  });
});
