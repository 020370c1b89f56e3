import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoggedQuery, ReadStats } from "../src/optimus/query.ts";
import { readSparkQueries } from "../src/optimus/spark/index.ts";
import { envCap, READERS_ENV, sparkQueryReader, workersWithin } from "../src/optimus/spark/parallel.ts";
import { type ByteRange, FileStore, type ObjectStore, StoreError } from "../src/store/index.ts";
import { serveReads } from "../src/store/port.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const SPARK = join(DELTA_FIXTURES, "../query-logs/spark");
const COPIES = 3;

let root: string;
let logCount = 0;

/** Every fixture `COPIES` times under its own application name, plus a rolling log in two parts. */
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "spark-parallel-"));
  for (const name of await readdir(SPARK))
    for (let copy = 0; copy < COPIES; copy++) {
      await copyFile(join(SPARK, name), join(root, `app-${copy}-${name}`));
      logCount++;
    }
  const lines = (await readFile(join(SPARK, "eventlog_minimal_events"), "utf8")).split("\n");
  const half = Math.floor(lines.length / 2);
  const rolling = join(root, "eventlog_v2_app-rolling");
  await mkdir(rolling);
  await writeFile(join(rolling, "events_1_app-rolling"), `${lines.slice(0, half).join("\n")}\n`);
  await writeFile(join(rolling, "events_2_app-rolling"), `not json\n${lines.slice(half).join("\n")}`);
  await writeFile(join(rolling, "appstatus_app-rolling"), "");
  logCount++;
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const newStats = (): ReadStats => ({ logs: 0, lines: 0, malformedLines: 0 });

async function readAll(reader: ReturnType<typeof sparkQueryReader>, store: ObjectStore, prefix = "") {
  const stats = newStats();
  const queries: LoggedQuery[] = [];
  for await (const q of reader(store, prefix, stats)) queries.push(q);
  return { queries, stats };
}

/** The query ids of each log, in the order read. */
function byLog(queries: LoggedQuery[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const q of queries) {
    const log = q.id.slice(0, q.id.lastIndexOf("#"));
    out.set(log, [...(out.get(log) ?? []), q.id]);
  }
  return out;
}

/** A view of `store` under a URI no thread could open: only reads served from this thread work. */
const unopenable = (store: ObjectStore): ObjectStore =>
  Object.assign(Object.create(store) as ObjectStore, { uri: "nope://bucket/logs/" });

/** A view of `store` that records whether each read was asked for over a worker's port (`serveReads`). */
function recording(store: ObjectStore): { store: ObjectStore; served: boolean[] } {
  const served: boolean[] = [];
  const view = Object.assign(Object.create(store) as ObjectStore, {
    read: (key: string, range?: ByteRange) => {
      served.push(/store[\\/]port\.ts/.test(new Error().stack ?? ""));
      return store.read(key, range);
    },
  });
  return { store: view, served };
}

describe("parallel Spark reader", () => {
  it("yields the in-thread reader's queries, each log in its order, with the same stats", async () => {
    const store = new FileStore(root);
    const alone = await readAll(readSparkQueries, store);
    // The workers read through this thread: a store they could not open themselves works.
    const pooled = await readAll(sparkQueryReader({ workers: 2 }), unopenable(store));
    expect(alone.stats.logs).toBe(logCount);
    expect(alone.stats.malformedLines).toBeGreaterThan(0);
    expect(pooled.stats).toEqual(alone.stats);
    expect(pooled.queries).toHaveLength(alone.queries.length);
    expect(byLog(pooled.queries)).toEqual(byLog(alone.queries));
    const sorted = (qs: LoggedQuery[]) => [...qs].sort((a, b) => a.id.localeCompare(b.id));
    expect(sorted(pooled.queries)).toEqual(sorted(alone.queries));
    expect(pooled.queries.some((q) => q.startedAt instanceof Date)).toBe(true);
    const rolling = pooled.queries.filter((q) => q.id.startsWith("eventlog_v2_app-rolling/#"));
    expect(rolling.length).toBeGreaterThan(0);
  });

  it("reads in this thread for one log or one worker, and through the workers otherwise", async () => {
    const store = new FileStore(root);
    for (const [options, prefix] of [
      [{}, "app-0-nds_q72"],
      [{ workers: 1 }, ""],
    ] as const) {
      const r = recording(store);
      await readAll(sparkQueryReader(options), r.store, prefix);
      expect(r.served.length).toBeGreaterThan(0);
      expect(r.served.every((s) => !s)).toBe(true);
    }
    const r = recording(store);
    await readAll(sparkQueryReader({ workers: 2 }), r.store);
    // Every part once (the rolling log has two), and each Databricks copy once more: a reader opens it,
    // finds its 128 MiB window and gives it back, then the reader holding the window thread reads it.
    expect(r.served.length).toBe(logCount + 1 + COPIES);
    expect(r.served.every((s) => s)).toBe(true);
  });

  it("fails with the worker's message when a log can't be read", async () => {
    const dir = await mkdtemp(join(tmpdir(), "spark-parallel-bad-"));
    try {
      await copyFile(join(SPARK, "eventlog_dsv1.zstd"), join(dir, "app-good.zstd"));
      await copyFile(join(SPARK, "eventlog_dsv2.zstd"), join(dir, "app-good2.zstd"));
      await writeFile(join(dir, "app-bad.lz4"), Buffer.alloc(4096, 0x5a));
      const store = new FileStore(dir);
      const alone = await readAll(readSparkQueries, store).catch((e: Error) => e.message);
      expect(alone).toMatch(/lz4 event log/);
      await expect(readAll(sparkQueryReader({ workers: 2 }), store)).rejects.toThrow(alone as string);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails with the store's error when a served read fails", async () => {
    const store = new FileStore(root);
    const failing = Object.assign(Object.create(store) as ObjectStore, {
      read: async (key: string, range?: ByteRange) => {
        if (key.includes("nds_q72")) throw new StoreError("unavailable", `503 reading ${key}, retries spent`);
        return store.read(key, range);
      },
    });
    await expect(readAll(sparkQueryReader({ workers: 2 }), failing)).rejects.toThrow(
      /503 reading app-\d-nds_q72/,
    );
  });

  it("stops on abort: the pending read rejects with the signal's reason", async () => {
    const store = new FileStore(root);
    const aborted = new AbortController();
    aborted.abort(new Error("cancelled before"));
    await expect(readAll(sparkQueryReader({ workers: 2, signal: aborted.signal }), store)).rejects.toThrow(
      "cancelled before",
    );

    const controller = new AbortController();
    const reader = sparkQueryReader({ workers: 2, signal: controller.signal });
    const iterator = reader(store, "", newStats())[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    controller.abort(new Error("cancelled"));
    await expect(
      (async () => {
        for (let r = await iterator.next(); !r.done; r = await iterator.next());
      })(),
    ).rejects.toThrow("cancelled");
  });

  it("keeps a reader at most maxInFlight batches ahead of the consumer", async () => {
    const dir = await mkdtemp(join(tmpdir(), "spark-backpressure-"));
    const ui = "org.apache.spark.sql.execution.ui.";
    const scan = {
      nodeName: "Scan parquet spark_catalog.db.t",
      metadata: { Location: "InMemoryFileIndex(1 paths)[s3://lake/db/t]", PushedFilters: "[EqualTo(a,1)]" },
    };
    const events = Array.from({ length: 10 }, (_, id) => [
      { Event: `${ui}SparkListenerSQLExecutionStart`, executionId: id, time: 1000, sparkPlanInfo: scan },
      { Event: `${ui}SparkListenerSQLExecutionEnd`, executionId: id, time: 2000 },
    ]).flat();
    await writeFile(join(dir, "app-1"), `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
    const { port1, port2 } = new MessageChannel();
    serveReads(new FileStore(dir), port1);
    const worker = new Worker(new URL("../src/optimus/spark/worker-tsx.mjs", import.meta.url), {
      workerData: { role: "reader", uri: `file://${dir}/`, store: port2, batchSize: 1, maxInFlight: 2 },
      transferList: [port2],
    });
    const replies: string[] = [];
    let wake: (() => void) | undefined;
    worker.on("message", (m: { type: string }) => {
      replies.push(m.type);
      wake?.();
    });
    const until = async (n: number) => {
      while (replies.length < n) await new Promise<void>((resolve) => (wake = resolve));
    };
    try {
      const key = "app-1";
      worker.postMessage({
        type: "log",
        window: false,
        log: { key, parts: [{ key, size: 1, lastModified: new Date() }] },
      });
      await until(2);
      // No credit: the reader waits with two batches out (a while to show it, not a timed assertion).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(replies).toEqual(["batch", "batch"]);
      for (let credit = 0; credit < 8; credit++) {
        worker.postMessage({ type: "credit" });
        await until(3 + credit);
      }
      for (let credit = 0; credit < 2; credit++) worker.postMessage({ type: "credit" });
      await until(11);
      expect(replies).toEqual([...Array(10).fill("batch"), "done"]);
    } finally {
      await worker.terminate();
      port1.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("caps the pool by the environment, refusing a value that is not a count", () => {
    expect(envCap(undefined)).toBe(Number.POSITIVE_INFINITY);
    expect(envCap("3")).toBe(3);
    expect(() => envCap("0")).toThrow(READERS_ENV);
    expect(() => envCap("two")).toThrow(READERS_ENV);
  });

  it("caps the pool at what fits the job's memory (the window thread, then 96 MB a reader), and at the environment's, at least 1", () => {
    expect(workersWithin(768, undefined)).toBe(6);
    expect(workersWithin(768, "2")).toBe(2);
    expect(workersWithin(384, undefined)).toBe(2);
    expect(workersWithin(200, undefined)).toBe(1);
  });
});
