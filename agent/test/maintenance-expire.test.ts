/**
 * Partition expiration and recover on real Delta tables in temporary folders: the
 * partition-type-primitives fixture (four partition columns, dates as text) and generated events
 * tables. Each test reads the table back through its snapshot with DuckDB, so "the rows left" is
 * what a reader sees, and checks that nothing was deleted physically.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type PartitionExpirationPayload,
  PartitionExpirationPayloadSchema,
  type RecoverPayload,
} from "@lakesmith/shared/maintenance";
import { afterAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "../../test/support/delta-tables.ts";
import { runCrunch } from "../src/crunch/run.ts";
import { commitKey, parseSchema } from "../src/delta/index.ts";
import { Engine, sqlList } from "../src/engine/duckdb.ts";
import { runPartitionExpiration } from "../src/maintenance/expire.ts";
import { partitionDates } from "../src/maintenance/partition-dates.ts";
import { runRecover } from "../src/maintenance/recover.ts";
import { FileStore, type WriteIfAbsentResult, type WriteSource } from "../src/store/index.ts";
import {
  commitRaw,
  copyFixture,
  jobContext,
  latestVersion,
  readTable,
  setTableProperties,
} from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-expire-"));
afterAll(() => rm(root, { recursive: true, force: true }));

function payloadFor(
  path: string,
  extra: Partial<PartitionExpirationPayload> = {},
): PartitionExpirationPayload {
  return PartitionExpirationPayloadSchema.parse({
    table_id: "tbl_test",
    uri: `file://${path}`,
    format: "delta",
    ...extra,
  });
}

const expire = (
  path: string,
  extra: Partial<PartitionExpirationPayload> = {},
  options: { jobId?: string; store?: FileStore } = {},
) =>
  runPartitionExpiration(
    jobContext(root, "partition_expiration", payloadFor(path, extra), { jobId: options.jobId }),
    { store: options.store ?? new FileStore(path), memoryLimitMb: 256 },
  );

const recover = (path: string, files: RecoverPayload["files"], jobId?: string) =>
  runRecover(
    jobContext(
      root,
      "recover",
      { table_id: "tbl_test", uri: `file://${path}`, format: "delta" as const, files, folders: [] },
      { jobId },
    ),
    { store: new FileStore(path), memoryLimitMb: 256 },
  );

const logLines = (path: string, version: number) =>
  readFileSync(join(path, commitKey(version)), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);

/** Rows DuckDB reads from some of a local table's files. */
async function rowsOf(path: string, keys: readonly string[]): Promise<number> {
  const engine = await Engine.open({ memoryLimitMb: 256 });
  try {
    const [row] = await engine.query<{ n: string }>(
      `select count(*) as n from read_parquet(${sqlList(keys.map((k) => join(path, k)))})`,
    );
    return Number(row?.n);
  } finally {
    engine.close();
  }
}

/** A real file store with a hook that runs before each log write. */
class HookedStore extends FileStore {
  beforeLogWrite: ((key: string) => Promise<void>) | undefined;
  override async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    if (key.startsWith("_delta_log/") && this.beforeLogWrite) {
      const hook = this.beforeLogWrite;
      this.beforeLogWrite = undefined;
      await hook(key);
    }
    return super.writeIfAbsent(key, source);
  }
}

describe("partition expiration", () => {
  it("removes the expired partition of partition-type-primitives in one DELETE commit that its dry run listed exactly", async () => {
    const path = copyFixture("partition-type-primitives", root);
    const store = new FileStore(path);
    const before = await readTable(store, root);
    const policy = { partition_column: "event_date", as_of: "2023-01-03", retention_days: 1 };

    const validate = await expire(path, { ...policy, validate: true });
    const dry = await expire(path, { ...policy, dry_run: true });
    expect(await latestVersion(path)).toBe(0);
    expect(validate).toMatchObject({ can_run: true, reason: null, validate: true, committed_version: null });
    expect(dry).toMatchObject({
      can_run: true,
      dry_run: true,
      cutoff_date: "2023-01-02",
      committed_at: null,
    });
    expect(validate.files).toEqual(dry.files);
    expect(dry.files.length).toBeGreaterThan(0);
    expect(dry.files.every((f) => f.partition_values.event_date === "2023-01-01")).toBe(true);

    const real = await expire(path, policy);
    expect(real.files).toEqual(dry.files);
    expect(real.partitions).toEqual(dry.partitions);
    expect(real.partitions.map((p) => [p.partition, p.value, p.files])).toEqual([
      ["event_date=2023-01-01", "2023-01-01", dry.files.length],
    ]);
    expect(real).toMatchObject({ committed_version: 1, table_version: 0, table_retention_hours: 168 });
    expect(real.bytes).toBe(dry.files.reduce((n, f) => n + f.size, 0));

    const lines = logLines(path, 1);
    expect(lines[0]?.commitInfo).toMatchObject({
      operation: "DELETE",
      operationParameters: { predicate: `["event_date < '2023-01-02'"]` },
      timestamp: real.committed_at,
    });
    const removes = lines.filter((l) => l.remove).map((l) => l.remove);
    expect(removes.map((r) => r?.path).sort()).toEqual(real.files.map((f) => f.path).sort());
    for (const r of removes)
      expect(r).toMatchObject({
        dataChange: true,
        extendedFileMetadata: true,
        deletionTimestamp: real.committed_at,
        partitionValues: expect.objectContaining({ event_date: "2023-01-01" }),
      });

    // Nothing deleted physically; readers see only the remaining files.
    for (const f of real.files) expect(existsSync(join(path, f.path))).toBe(true);
    const after = await readTable(store, root);
    const expiredRows = await rowsOf(
      path,
      real.files.map((f) => f.path),
    );
    expect(expiredRows).toBeGreaterThan(0);
    expect(after.rows).toBe(before.rows - expiredRows);
    expect(after.snapshot.files.some((f) => f.partitionValues.event_date === "2023-01-01")).toBe(false);
  });

  it("reports the same files when retried after its commit, and commits once", async () => {
    const path = join(root, "retry");
    await writeEventsTable(path, { days: 3, filesPerDay: 2, rowsPerFile: 100 });
    const policy = { partition_column: "event_date", as_of: "2026-01-05", retention_days: 3 };
    const first = await expire(path, policy, { jobId: "job_expire_retry" });
    const again = await expire(path, policy, { jobId: "job_expire_retry" });
    expect(first.committed_version).toBe(1);
    expect(again.files).toEqual(first.files);
    expect(again).toMatchObject({ committed_version: 1, committed_at: first.committed_at });
    // The commit records the result's summary; its files are the commit's removes.
    const info = logLines(path, 1).find((l) => l.commitInfo)?.commitInfo;
    expect(info?.lakesmithResult).toMatchObject({ files: [], files_count: 2 });
    expect(await latestVersion(path)).toBe(1);
    expect(first.partitions.map((p) => [p.value, p.files, p.rows])).toEqual([["2026-01-01", 2, 200]]);
  });

  it("re-plans on a crunch that replaced the expiring files just before its commit", async () => {
    const path = join(root, "race");
    await writeEventsTable(path, { days: 3, filesPerDay: 4, rowsPerFile: 500 });
    const store = new HookedStore(path);
    const before = await readTable(store, root);
    let crunched: number | null | undefined;
    store.beforeLogWrite = async () => {
      const crunch = await runCrunch(
        "optimize",
        jobContext(root, "optimize", { table_id: "t", uri: `file://${path}`, format: "delta" as const }),
        { store: new FileStore(path), memoryLimitMb: 256 },
      );
      crunched = crunch.committed_version;
    };
    const result = await expire(
      path,
      { partition_column: "event_date", as_of: "2026-01-04", retention_days: 1 },
      { store },
    );
    expect(crunched).toBe(1);
    expect(result.committed_version).toBe(2);
    expect(result.table_version).toBe(1);
    // The files removed are the crunch's outputs, not the inputs another commit already removed.
    const after = await readTable(store, root);
    expect(result.files.length).toBeGreaterThan(0);
    expect(result.files.every((f) => f.tags?.["lakesmith.settings"])).toBe(true);
    expect(after.snapshot.files.every((f) => f.partitionValues.event_date === "2026-01-03")).toBe(true);
    expect(after.rows).toBe(before.rows / 3);
    expect(result.partitions.map((p) => [p.value, p.rows])).toEqual([
      ["2026-01-01", 2000],
      ["2026-01-02", 2000],
    ]);
  });

  it("never expires a null partition", async () => {
    const path = join(root, "nulls");
    await writeEventsTable(path, { days: 1, filesPerDay: 1, rowsPerFile: 100 });
    const snapshot = (await readTable(new FileStore(path), root)).snapshot;
    const source = snapshot.files[0];
    if (!source) throw new Error("no file");
    const key = "event_date=__HIVE_DEFAULT_PARTITION__/part-null.c000.snappy.parquet";
    mkdirSync(join(path, "event_date=__HIVE_DEFAULT_PARTITION__"));
    copyFileSync(join(path, source.path), join(path, key));
    await commitRaw(path, [
      {
        add: {
          path: key,
          partitionValues: { event_date: null },
          size: statSync(join(path, key)).size,
          modificationTime: Date.now(),
          dataChange: true,
          stats: JSON.stringify({ numRecords: 100 }),
        },
      },
    ]);
    const result = await expire(path, { partition_column: "event_date", as_of: "2030-01-01" });
    expect(result.files.map((f) => f.partition_values.event_date)).toEqual(["2026-01-01"]);
    const after = await readTable(new FileStore(path), root);
    expect(after.snapshot.files.map((f) => f.path)).toEqual([key]);
    expect(after.rows).toBe(100);
  });

  it("answers a preflight with why the policy can't run, and fails a run for good with the same reason", async () => {
    const events = join(root, "refusals");
    await writeEventsTable(events, { days: 2, filesPerDay: 1, rowsPerFile: 10 });
    const appendOnly = join(root, "append-only");
    await writeEventsTable(appendOnly, { days: 2, filesPerDay: 1, rowsPerFile: 10 });
    await setTableProperties(appendOnly, (await readTable(new FileStore(appendOnly), root)).snapshot, {
      "delta.appendOnly": "true",
    });
    const primitives = copyFixture("partition-type-primitives", root);
    const numeric = copyFixture("delta-0.8.0-numeric-partition", root);
    const features = copyFixture("simple_table_features", root);

    const cases: [string, Partial<PartitionExpirationPayload>, RegExp][] = [
      [appendOnly, { partition_column: "event_date" }, /append-only/],
      [events, { partition_column: "country" }, /'country' is not a partition column.*event_date/],
      [events, {}, /no partition column/],
      [primitives, { partition_column: "year" }, /'year' holds text that is not a YYYY-MM-DD date: '20/],
      [primitives, { partition_column: "category" }, /not a YYYY-MM-DD date: '[AB]'/],
      [numeric, { partition_column: "x" }, /'x' has type long, not a date/],
      [features, { partition_column: "x" }, /can't rewrite this table safely/],
      [events, { partition_column: "event_date", format: "hive" }, /Delta tables only/],
    ];
    for (const [path, extra, reason] of cases) {
      const version = await latestVersion(path);
      const answer = await expire(path, { ...extra, validate: true });
      expect(answer, String(reason)).toMatchObject({ can_run: false, files: [], committed_version: null });
      expect(answer.reason).toMatch(reason);
      await expect(expire(path, extra), String(reason)).rejects.toMatchObject({
        retryable: false,
        message: expect.stringMatching(reason),
      });
      expect(await latestVersion(path)).toBe(version);
    }

    // Without a column in the policy, the recipe's date column is used.
    const recipe = {
      partition_columns: ["event_date"],
      partition_pattern: "event_date=YYYY-MM-DD",
      date_filter_column: "event_date",
      cluster_columns: [],
      enumerated_columns: [],
    };
    const viaRecipe = await expire(events, {
      recipe,
      validate: true,
      as_of: "2026-01-03",
      retention_days: 1,
    });
    expect(viaRecipe).toMatchObject({ can_run: true, partition_column: "event_date", files_count: 1 });
  });
});

describe("partition dates", () => {
  const metadata = (type: string) => ({
    schema: parseSchema(
      JSON.stringify({ type: "struct", fields: [{ name: "d", type, nullable: true, metadata: {} }] }),
    ),
    partitionColumns: ["d"],
  });
  const files = (...values: (string | null)[]) => values.map((d) => ({ partitionValues: { d } }));

  it("reads dates, the date part of timestamps (moved to UTC when zoned), and date text", () => {
    expect(partitionDates(metadata("date"), files("2026-01-31", null), "d")).toEqual({
      dateOf: new Map([["2026-01-31", "2026-01-31"]]),
    });
    const stamps = partitionDates(
      metadata("timestamp"),
      files(
        "2026-01-31 12:00:00",
        "2026-01-31 23:59:59.123456",
        "2026-01-31T23:30:00-02:00",
        "2026-02-01T00:00:00Z",
      ),
      "d",
    );
    expect(stamps).toEqual({
      dateOf: new Map([
        ["2026-01-31 12:00:00", "2026-01-31"],
        ["2026-01-31 23:59:59.123456", "2026-01-31"],
        ["2026-01-31T23:30:00-02:00", "2026-02-01"],
        ["2026-02-01T00:00:00Z", "2026-02-01"],
      ]),
    });
    expect(partitionDates(metadata("timestamp_ntz"), files("2026-01-31 01:00:00"), "d")).toMatchObject({
      dateOf: new Map([["2026-01-31 01:00:00", "2026-01-31"]]),
    });
  });

  it("names the first value that is not a calendar date", () => {
    expect(partitionDates(metadata("string"), files("2026-01-31", "2026-02-30"), "d")).toEqual({
      reason: "partition column 'd' holds text that is not a YYYY-MM-DD date: '2026-02-30'",
    });
    expect(partitionDates(metadata("integer"), files("1"), "d")).toMatchObject({ reason: /type integer/ });
  });
});

describe("recover", () => {
  it("puts expired files back with their stats; the rows return, and a second recover finds them live", async () => {
    const path = join(root, "recover");
    await writeEventsTable(path, { days: 3, filesPerDay: 2, rowsPerFile: 300 });
    const store = new FileStore(path);
    const before = await readTable(store, root);
    const expired = await expire(path, {
      partition_column: "event_date",
      as_of: "2026-01-04",
      retention_days: 1,
    });
    expect(expired.files_count).toBe(4);
    expect((await readTable(store, root)).rows).toBe(before.rows - 1200);

    const files = expired.files.map((f, i) => ({ ...f, deletion_id: `del_${i}` }));
    const restored = await recover(path, files, "job_recover_1");
    expect(restored.committed_version).toBe(2);
    expect(restored.files.map((f) => f.outcome)).toEqual(["restored", "restored", "restored", "restored"]);
    const after = await readTable(store, root);
    expect(after.rows).toBe(before.rows);
    expect(after.statsRows).toBe(before.statsRows);
    const byPath = new Map(after.snapshot.files.map((f) => [f.path, f]));
    for (const f of expired.files)
      expect(byPath.get(f.path)).toMatchObject({
        size: f.size,
        statsJson: f.stats,
        modificationTime: f.modification_time,
        partitionValues: f.partition_values,
        dataChange: true,
      });
    expect(logLines(path, 2)[0]?.commitInfo).toMatchObject({
      operation: "WRITE",
      lakesmithOperation: "recover",
    });

    // A retry of the same job reports its commit; another recover finds the files live.
    expect(await recover(path, files, "job_recover_1")).toMatchObject({ committed_version: 2 });
    const again = await recover(path, files);
    expect(again.committed_version).toBeNull();
    expect(again.files.every((f) => f.outcome === "already_live")).toBe(true);
    expect(await latestVersion(path)).toBe(2);
  });

  it("fails for good, naming the file, when its data is gone, and commits nothing", async () => {
    const path = join(root, "recover-gone");
    await writeEventsTable(path, { days: 2, filesPerDay: 2, rowsPerFile: 10 });
    const expired = await expire(path, {
      partition_column: "event_date",
      as_of: "2026-01-03",
      retention_days: 1,
    });
    const gone = expired.files[1]?.path as string;
    rmSync(join(path, gone));
    await expect(
      recover(
        path,
        expired.files.map((f, i) => ({ ...f, deletion_id: `del_${i}` })),
      ),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(new RegExp(`'${gone.replaceAll(".", "\\.")}' is gone`)),
    });
    expect(await latestVersion(path)).toBe(1);
  });

  it("refuses files whose partition columns are no longer the table's", async () => {
    const path = join(root, "recover-columns");
    await writeEventsTable(path, { days: 2, filesPerDay: 1, rowsPerFile: 10 });
    const expired = await expire(path, {
      partition_column: "event_date",
      as_of: "2026-01-03",
      retention_days: 1,
    });
    const moved = expired.files.map((f, i) => ({
      ...f,
      partition_values: { region: "eu" },
      deletion_id: `del_${i}`,
    }));
    await expect(recover(path, moved)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("partition columns changed"),
    });
  });
});
