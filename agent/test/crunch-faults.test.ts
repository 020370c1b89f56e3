/**
 * A crunch of a Delta table on S3 while the store misbehaves (`support/faulty-s3.ts` in front of
 * s3rver), run through the job's public entry: data files that arrive truncated, a throttled upload
 * and a commit whose answer is lost are ridden out with one commit and every row kept; a store that
 * keeps truncating fails the job with nothing committed and nothing written.
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "../../test/support/delta-tables.ts";
import { runCrunch } from "../src/crunch/run.ts";
import { commitKey, JOB_ID_FIELD } from "../src/delta/index.ts";
import { type ObjectStore, StoreError, storeFor } from "../src/store/index.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";
import { uploadFolder } from "./support/local-s3.ts";
import { jobContext, readTable } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "crunch-faults-"));
const RETRY = { attempts: 3, baseMs: 1, maxMs: 5, stallTimeoutMs: 2000 };
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

/** A table of 2 days x 6 small files x 1,000 rows on S3. */
async function smallFilesTable(): Promise<{ store: ObjectStore; prefix: string }> {
  const name = `events-${tables++}`;
  const local = join(root, name);
  await writeEventsTable(local, { days: 2, filesPerDay: 6, rowsPerFile: 1000 });
  const prefix = `warehouse/${name}/`;
  const store = storeFor(`s3://lake/${prefix}`, { s3: { ...s3.options, retry: RETRY } });
  await uploadFolder(local, store);
  return { store, prefix };
}

function crunch(store: ObjectStore) {
  const payload: CrunchPayload = { table_id: "tbl_test", uri: store.uri, format: "delta" };
  const ctx = jobContext(root, "crunch", payload);
  return { ctx, run: runCrunch("crunch", ctx, { store, memoryLimitMb: 512 }) };
}

async function keys(store: ObjectStore): Promise<string[]> {
  const all: string[] = [];
  for await (const o of store.list("")) all.push(o.key);
  return all.sort();
}

describe("crunch on a faulty store", () => {
  it("commits once and keeps every row through truncated reads, a throttled upload and a lost commit answer", async () => {
    const { store, prefix } = await smallFilesTable();
    const data = new RegExp(`^${prefix}event_date=.*\\.parquet$`);
    // Two breaks of one read: its third attempt, within the budget of 3, gets the rest.
    s3.inject({ op: "GetObject", key: data, times: 2, fault: { kind: "truncate", afterBytes: 500 } });
    s3.inject({ op: "PutObject", key: data, fault: { kind: "slowDown" } });
    s3.inject({ op: "PutObject", key: `${prefix}${commitKey(1)}`, fault: { kind: "loseAnswer" } });

    const { ctx, run } = crunch(store);
    const result = await run;
    const fired = s3.requests.filter((r) => r.key.startsWith(prefix) && r.fault !== null).map((r) => r.fault);
    expect(fired.sort()).toEqual(["loseAnswer", "slowDown", "truncate", "truncate"]);
    expect(result).toMatchObject({
      committed_version: 1,
      files_before: 12,
      rows_in: 12_000,
      rows_out: 12_000,
    });

    expect(await store.head(commitKey(2))).toBeUndefined();
    const table = await readTable(store, root);
    expect(table.missing).toEqual([]);
    expect(table.rows).toBe(12_000);
    expect(table.snapshot.version).toBe(1);
    expect(table.snapshot.commits.find((c) => c.version === 1)?.commitInfo?.[JOB_ID_FIELD]).toBe(ctx.job.id);
  });

  it("fails with nothing committed or written when the data files keep arriving truncated", async () => {
    const { store, prefix } = await smallFilesTable();
    const before = await keys(store);
    s3.inject({
      op: "GetObject",
      key: new RegExp(`^${prefix}event_date=.*\\.parquet$`),
      times: Infinity,
      fault: { kind: "truncate", afterBytes: 500 },
    });

    const err = await crunch(store).run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("unavailable");
    expect((err as StoreError).message).toMatch(
      new RegExp(`^GET s3://lake/${prefix}event_date=.*\\.parquet failed after 3 attempts`),
    );
    expect(await keys(store)).toEqual(before);
  });
});
