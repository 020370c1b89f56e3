import { randomUUID } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addFor,
  type CommitOptions,
  ConflictError,
  commit,
  commitKey,
  type FileAction,
  findJobCommit,
  loadSnapshot,
  removeFor,
  type Snapshot,
  writeCheckpoint,
} from "../src/delta/index.ts";
import { Engine, sqlList, sqlString } from "../src/engine/duckdb.ts";
import { FileStore, type ObjectStore, storeFor } from "../src/store/index.ts";
import { type ConditionalS3Server, startConditionalS3Server } from "./support/conditional-s3-server.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const FIXTURES = DELTA_FIXTURES;
let engine: Engine;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "delta-commit-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});

afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A private copy of a fixture table (tests never write to the fixtures). */
async function copyOf(table: string, into?: string): Promise<string> {
  const dir = into ?? (await mkdtemp(join(scratch, "table-")));
  await cp(join(FIXTURES, table), dir, { recursive: true });
  return dir;
}

const load = (store: ObjectStore, version?: number) =>
  loadSnapshot(store, engine, { scratchDir: join(scratch, "dl"), version });

const options = (jobId: string, extra: Partial<CommitOptions> = {}): CommitOptions => ({
  jobId,
  operation: "OPTIMIZE",
  operationParameters: { predicate: [], targetSize: 134217728 },
  operationMetrics: { numRemovedFiles: 2 },
  engine,
  scratchDir: join(scratch, "dl"),
  ...extra,
});

/** Really compacts `files` into one new Parquet file with DuckDB, and returns the commit's actions. */
async function compact(dir: string, snapshot: Snapshot, files = snapshot.files): Promise<FileAction[]> {
  const key = `part-lakesmith-${randomUUID()}.snappy.parquet`;
  const inputs = files.map((f) => join(dir, f.path));
  await engine.run(
    `COPY (SELECT * FROM read_parquet(${sqlList(inputs)})) TO ${sqlString(join(dir, key))} (FORMAT parquet)`,
  );
  const [row] = await engine.query<{ n: string }>(
    `SELECT count(*) AS n FROM read_parquet(${sqlString(join(dir, key))})`,
  );
  const info = await stat(join(dir, key));
  return [
    ...files.map((f) => ({ remove: removeFor(f, Date.now()) })),
    {
      add: addFor({
        key,
        size: info.size,
        modificationTime: info.mtimeMs,
        partitionValues: files[0]?.partitionValues ?? {},
        stats: { numRecords: Number(row?.n) },
        tags: { "lakesmith.settings": "zstd" },
      }),
    },
  ];
}

/** An append that a concurrent writer might make: one new file, data change. */
function append(name: string): FileAction {
  return {
    add: {
      ...addFor({ key: name, size: 10, modificationTime: 1, partitionValues: {}, stats: null }),
      dataChange: true,
    },
  };
}

const logLines = async (dir: string, version: number) =>
  (await readFile(join(dir, commitKey(version)), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);

describe("commit", () => {
  it("commits a compaction at the next version: commitInfo first, removes and adds with dataChange=false", async () => {
    const dir = await copyOf("delta-0.8.0");
    const store = new FileStore(dir);
    const before = await load(store);
    const actions = await compact(dir, before);
    const result = await commit(store, before, actions, options("job-compact"));
    expect(result).toMatchObject({ version: before.version + 1, alreadyCommitted: false, attempts: 1 });

    const lines = await logLines(dir, result.version);
    expect(Object.keys(lines[0] ?? {})).toEqual(["commitInfo"]);
    expect(lines[0]?.commitInfo).toMatchObject({
      operation: "OPTIMIZE",
      lakesmithJobId: "job-compact",
      readVersion: before.version,
      operationParameters: { predicate: "[]", targetSize: "134217728" },
    });
    const removes = lines.filter((l) => l.remove).map((l) => l.remove);
    expect(removes).toHaveLength(2);
    for (const r of removes)
      expect(r).toMatchObject({ dataChange: false, extendedFileMetadata: true, partitionValues: {} });
    const adds = lines.filter((l) => l.add).map((l) => l.add);
    expect(adds).toHaveLength(1);
    expect(adds[0]).toMatchObject({ dataChange: false, stats: '{"numRecords":4}', partitionValues: {} });

    const after = await load(store);
    expect(after.files).toHaveLength(1);
    expect(after.files[0]?.stats?.numRecords).toBe(4);
    expect(after.tombstones.filter((t) => t.dataChange === false)).toHaveLength(2);
  });

  it("refuses to commit to a table the agent can't rewrite", async () => {
    const dir = await copyOf("table-with-dv-small");
    const store = new FileStore(dir);
    const snapshot = await load(store);
    await expect(commit(store, snapshot, [append("x.parquet")], options("job-dv"))).rejects.toThrow(
      /deletion vectors/,
    );
    expect((await readdir(join(dir, "_delta_log"))).filter((f) => f.endsWith(".json"))).toHaveLength(2);
  });

  it("lets exactly one of two racers take the version; the other lands on the next one after an append", async () => {
    const dir = await copyOf("delta-0.8.0");
    const store = new FileStore(dir);
    const snapshot = await load(store);
    const compaction = await compact(dir, snapshot);
    const [a, b] = await Promise.all([
      commit(store, snapshot, compaction, options("job-a")),
      commit(store, snapshot, [append("appended.parquet")], options("job-b")),
    ]);
    expect([a?.version, b?.version].sort()).toEqual([snapshot.version + 1, snapshot.version + 2]);
    expect([a?.attempts, b?.attempts].sort()).toEqual([1, 2]);
    const after = await load(store);
    expect(after.version).toBe(snapshot.version + 2);
    expect(after.files.map((f) => f.path).sort()).toContain("appended.parquet");
    expect(after.files).toHaveLength(2);
  });

  it("gives one of two compactions of the same file a ConflictError", async () => {
    const dir = await copyOf("delta-0.8.0");
    const store = new FileStore(dir);
    const snapshot = await load(store);
    const first = await compact(dir, snapshot);
    const second = await compact(dir, snapshot);
    const results = await Promise.allSettled([
      commit(store, snapshot, first, options("job-1")),
      commit(store, snapshot, second, options("job-2")),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ConflictError);
    expect(lost[0]).toMatchObject({ retryable: true, version: snapshot.version + 1 });
    expect((await load(store)).version).toBe(snapshot.version + 1);
  });

  it("treats a metadata change by the winner as a conflict", async () => {
    const dir = await copyOf("delta-0.8.0");
    const store = new FileStore(dir);
    const snapshot = await load(store);
    const metadata = (await logLines(dir, 0)).find((l) => l.metaData);
    await writeFile(join(dir, commitKey(snapshot.version + 1)), `${JSON.stringify(metadata)}\n`);
    await expect(commit(store, snapshot, await compact(dir, snapshot), options("job-m"))).rejects.toThrow(
      /changed the table's metadata/,
    );
  });

  it("recognises its own earlier commit when a job is retried after a crash, and never commits twice", async () => {
    const dir = await copyOf("delta-0.8.0");
    const store = new FileStore(dir);
    const stale = await load(store);
    const actions = await compact(dir, stale);
    const first = await commit(store, stale, actions, options("job-retry"));

    // The retry planned against the same stale snapshot (it never saw its own commit land).
    const again = await commit(store, stale, actions, options("job-retry"));
    expect(again).toMatchObject({ version: first.version, alreadyCommitted: true });
    // A retry that reloads sees it in the snapshot's commits.
    const fresh = await load(store);
    expect(await findJobCommit(store, fresh, "job-retry")).toBe(first.version);
    expect(await commit(store, fresh, actions, options("job-retry"))).toMatchObject({
      version: first.version,
      alreadyCommitted: true,
      attempts: 0,
    });
    expect(await findJobCommit(store, fresh, "another-job")).toBeNull();
    expect((await load(store)).version).toBe(first.version);
  });

  it("finds a job's commit hidden behind a later checkpoint, reading back to sinceVersion", async () => {
    const dir = await copyOf("latest_not_checkpointed"); // delta.checkpointInterval = 2, at version 3
    const store = new FileStore(dir);
    const before = await load(store);
    const result = await commit(store, before, [append("a.parquet")], options("job-hidden"));
    expect(result.version).toBe(4);
    expect(result.checkpoint).toEqual({ version: 4 });
    const after = await load(store);
    expect(after.checkpointVersion).toBe(4);
    expect(after.commits).toHaveLength(0);
    expect(await findJobCommit(store, after, "job-hidden")).toBeNull();
    expect(await findJobCommit(store, after, "job-hidden", { sinceVersion: before.version })).toBe(4);
  });

  it("keeps the commit when the checkpoint after it fails, and says why", async () => {
    const dir = await copyOf("latest_not_checkpointed");
    const store = new FileStore(dir);
    const notAFolder = join(scratch, `file-${randomUUID()}`);
    await writeFile(notAFolder, "x");
    const warnings: string[] = [];
    const result = await commit(store, await load(store), [append("b.parquet")], {
      ...options("job-cp-fail"),
      scratchDir: notAFolder,
      log: { warn: (_details, message) => warnings.push(message) },
    });
    expect(result.version).toBe(4);
    expect(result.checkpoint).toMatchObject({ error: expect.any(String) });
    expect(warnings).toHaveLength(1);
    expect((await load(store)).files.map((f) => f.path)).toContain("b.parquet");
  });
});

describe("checkpoints written by the agent", () => {
  /** What a snapshot says about the table, independent of how it was loaded. */
  const essence = (s: Snapshot) => ({
    version: s.version,
    protocol: s.protocol,
    metadata: { ...s.metadata, schema: undefined },
    files: s.files
      .map((f) => ({
        path: f.path,
        size: f.size,
        partitionValues: f.partitionValues,
        stats: f.stats,
        tags: f.tags,
      }))
      .sort((x, y) => x.path.localeCompare(y.path)),
    tombstones: s.tombstones.map((t) => t.path).sort(),
    txns: [...s.txns.values()],
    domains: [...s.domains.values()],
  });

  it("reloads from its checkpoint to the same snapshot as from JSON alone, and DuckDB reads it", async () => {
    const dir = await copyOf("latest_not_checkpointed");
    const store = new FileStore(dir);
    const before = await load(store);
    // At the time of the fixture's own removes, so its tombstones are still inside the retention.
    const clock = {
      now: () => new Date(Math.max(...before.tombstones.map((t) => t.deletionTimestamp ?? 0))),
    };
    expect(before.tombstones.length).toBeGreaterThan(0);
    await commit(store, before, [append("c.parquet")], options("job-cp", { clock }));
    const fromCheckpoint = await load(store);
    expect(fromCheckpoint.checkpointVersion).toBe(4);
    expect(JSON.parse(await readFile(join(dir, "_delta_log/_last_checkpoint"), "utf8"))).toMatchObject({
      version: 4,
      numOfAddFiles: fromCheckpoint.files.length,
    });

    const jsonOnly = await mkdtemp(join(scratch, "json-only-"));
    await cp(dir, jsonOnly, {
      recursive: true,
      filter: (src) => !src.includes(".checkpoint.") && !src.endsWith("_last_checkpoint"),
    });
    const fromJson = await load(new FileStore(jsonOnly));
    expect(fromJson.checkpointVersion).toBeNull();
    expect(essence(fromCheckpoint)).toEqual(essence(fromJson));

    const parquet = sqlString(join(dir, "_delta_log/00000000000000000004.checkpoint.parquet"));
    const [row] = await engine.query<{ adds: string; t: string }>(
      `SELECT count(add) AS adds, any_value(typeof(add.partitionValues)) AS t FROM read_parquet(${parquet})`,
    );
    expect(Number(row?.adds)).toBe(fromJson.files.length);
    expect(row?.t).toBe("MAP(VARCHAR, VARCHAR)");
  });

  it.each([
    "partition-type-primitives",
    "delta-0.8.0-null-partition",
    "delta-0.8.0-special-partition",
    "delta-1.2.1-only-struct-stats",
    "table-with-domain-metadata",
    "simple_table",
  ])("round-trips partition values, stats, tags, domains and tombstones of %s", async (table) => {
    const dir = await copyOf(table);
    const store = new FileStore(dir);
    const original = await load(store);
    // Tombstones of these old fixtures are long expired; a clock at their time keeps them.
    const clock = {
      now: () => new Date(Math.max(0, ...original.tombstones.map((t) => t.deletionTimestamp ?? 0))),
    };
    const result = await writeCheckpoint(store, engine, original, { scratchDir: join(scratch, "dl"), clock });
    expect(result.numOfAddFiles).toBe(original.files.length);
    if (original.metadata.configuration["delta.checkpoint.writeStatsAsStruct"] === "true") {
      const parquet = sqlString(
        join(dir, "_delta_log", `${String(original.version).padStart(20, "0")}.checkpoint.parquet`),
      );
      const [row] = await engine.query<{ n: string }>(
        `SELECT count(add.stats_parsed.numRecords) AS n FROM read_parquet(${parquet})`,
      );
      expect(Number(row?.n)).toBe(original.files.filter((f) => f.stats?.numRecords !== undefined).length);
    }
    const reloaded = await load(store);
    expect(reloaded.checkpointVersion).toBe(original.version);
    expect(essence(reloaded)).toEqual(essence(original));
  });

  it("drops tombstones older than the retention from a checkpoint", async () => {
    const dir = await copyOf("simple_table");
    const store = new FileStore(dir);
    const original = await load(store);
    expect(original.tombstones.length).toBeGreaterThan(0);
    await writeCheckpoint(store, engine, original, { scratchDir: join(scratch, "dl") });
    expect((await load(store)).tombstones).toHaveLength(0);
  });
});

describe("commit through S3 (conditional-write stand-in)", () => {
  let server: ConditionalS3Server;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(scratch, "s3-"));
    server = await startConditionalS3Server(root);
  });

  afterAll(async () => {
    await server?.close();
  });

  it("lets one of two racing compactions of the same file win through If-None-Match", async () => {
    const dir = await copyOf("delta-0.8.0", join(root, "lake", "t1"));
    const snapshot = await load(new FileStore(dir));
    const s3 = storeFor("s3://lake/t1/", {
      s3: {
        endpoint: server.endpoint,
        forcePathStyle: true,
        region: "us-east-1",
        credentials: { accessKeyId: "stand-in", secretAccessKey: "stand-in" },
        maxAttempts: 1,
      },
    });
    const [first, second] = [await compact(dir, snapshot), await compact(dir, snapshot)];
    const results = await Promise.allSettled([
      commit(s3, snapshot, first, options("s3-job-1")),
      commit(s3, snapshot, second, options("s3-job-2")),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ConflictError);
    const after = await load(new FileStore(dir));
    expect(after.version).toBe(snapshot.version + 1);
    expect(after.files).toHaveLength(1);
    expect(after.commits.at(-1)?.commitInfo?.lakesmithJobId).toMatch(/^s3-job-[12]$/);
  });
});
