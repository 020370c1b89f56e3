import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressBlock, compressBound } from "lz4js";
import { compress as snappyCompress } from "snappyjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  codecOf,
  readSparkExecutions,
  type SparkExecution,
  type SparkReadStats,
} from "../src/optimus/spark/index.ts";
import { FileStore } from "../src/store/index.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const SPARK = join(DELTA_FIXTURES, "../query-logs/spark");

async function read(root: string, prefix: string) {
  const stats: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 };
  const executions: SparkExecution[] = [];
  for await (const e of readSparkExecutions(new FileStore(root), prefix, stats)) executions.push(e);
  return { executions, stats };
}

/** Filter columns per table root (last path segment), merged over an execution's scans. */
function columnsByTable(e: SparkExecution): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const s of e.scans) {
    const table = s.locations[0]?.split("/").pop() ?? "?";
    out[table] ??= new Set();
    for (const c of s.filterColumns) out[table].add(c);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

describe("Spark event-log reader on real logs", () => {
  it("reads NDS q72 (Dataproc, AQE): per-table filter columns and literals from the final plan", async () => {
    const { executions, stats } = await read(SPARK, "nds_q72");
    expect(stats.malformedLines).toBe(0);
    const q72 = executions.find((e) => e.description === "query72");
    expect(q72?.adaptive).toBe(true);
    const byTable = columnsByTable(q72 as SparkExecution);
    expect(byTable.catalog_sales).toEqual([
      "cs_bill_cdemo_sk",
      "cs_bill_hdemo_sk",
      "cs_item_sk",
      "cs_quantity",
      "cs_ship_date_sk",
      "cs_sold_date_sk",
    ]);
    expect(byTable.date_dim).toEqual(["d_date", "d_date_sk", "d_week_seq", "d_year"]);
    expect(byTable.customer_demographics).toEqual(["cd_demo_sk", "cd_marital_status"]);
    const dates = q72?.scans.find(
      (s) => s.locations[0]?.endsWith("/date_dim") && s.readSchema?.includes("d_year"),
    );
    expect(dates?.locationKind).toBe("InMemoryFileIndex");
    expect(dates?.predicates).toContainEqual({
      column: "d_year",
      kind: "equality",
      op: "=",
      values: ["2000"],
      disjunctive: false,
    });
    const sales = q72?.scans.find((s) => s.locations[0]?.endsWith("/catalog_sales"));
    expect(sales?.partitionFilters.some((f) => f.startsWith("dynamicpruningexpression("))).toBe(true);
    expect(sales?.predicates).toContainEqual({
      column: "cs_sold_date_sk",
      kind: "dynamic",
      op: "dynamic",
      values: [],
      disjunctive: false,
    });
    expect(q72?.durationMs).toBeGreaterThan(0);
    expect(q72?.bytesRead).toBeGreaterThan(0);
  });

  it("reads NDS q88 (Databricks Photon): the time_dim hour/minute ranges and the household OR-filter", async () => {
    // A 128 MiB zstd window: every line must decode intact (a decoder limited to 25-bit offsets garbles
    // task-end lines past 122 MB into malformed JSON).
    const { executions, stats } = await read(SPARK, "nds_q88");
    expect(stats).toMatchObject({ lines: 10141, malformedLines: 0 });
    const q88 = executions.find((e) => e.description === "query88") as SparkExecution;
    expect(q88.scans.every((s) => s.node === "PhotonScan parquet")).toBe(true);
    const byTable = columnsByTable(q88);
    expect(byTable.time_dim).toEqual(["t_hour", "t_minute", "t_time_sk"]);
    expect(byTable.household_demographics).toEqual(["hd_demo_sk", "hd_dep_count", "hd_vehicle_count"]);
    expect(byTable.store).toEqual(["s_store_name", "s_store_sk"]);
    const time = q88.scans.filter((s) => s.locations[0]?.endsWith("/time_dim"));
    const hours = new Set(
      time.flatMap((s) => s.predicates.filter((p) => p.column === "t_hour").map((p) => p.values[0])),
    );
    expect([...hours].sort()).toEqual(["10", "11", "12", "8", "9"]);
    expect(time.flatMap((s) => s.predicates).some((p) => p.column === "t_minute" && p.kind === "range")).toBe(
      true,
    );
  });

  it("reads DataSource V1 and V2 logs: file scans from node metadata, BatchScan from the plan text", async () => {
    const v1 = await read(SPARK, "eventlog_dsv1");
    expect(v1.executions[0]?.scans[0]?.dataFilters).toEqual(["(length(trim(value#0, None)) > 0)"]);
    expect(v1.executions[0]?.scans[0]?.filterColumns).toEqual(["value"]);
    const v2 = await read(SPARK, "eventlog_dsv2");
    const batch = v2.executions.find((e) => e.executionId === 1)?.scans[0];
    expect(batch?.node).toBe("BatchScan");
    expect(batch?.locations).toEqual([
      "file:/home/user1/workspace/spark-rapids-another/integration_tests/src/test/resources/trucks-comments.csv",
    ]);
    expect(batch?.readSchema).toBe("struct<_c0:string>");
  });

  it("reads the minimal plain log: two text scans with their trim/length filter", async () => {
    const { executions, stats } = await read(SPARK, "eventlog_minimal_events");
    expect(stats.malformedLines).toBe(0);
    expect(executions.map((e) => e.scans[0]?.locations[0]?.split("/").pop())).toEqual([
      "media_touchpoints.tsv",
      "customer_events.tsv",
    ]);
    expect(executions[0]?.scans[0]?.filterColumns).toEqual(["value"]);
  });
});

describe("Spark event-log codecs", () => {
  it("names the codec by suffix, also while Spark still writes the file", () => {
    expect(
      ["a.zstd", "a.zst", "a.lz4", "a.snappy", "a.lz4.inprogress", "app-1", "a.inprogress"].map(codecOf),
    ).toEqual(["zstd", "zstd", "lz4", "snappy", "lz4", "none", "none"]);
  });
});

describe("Spark event-log reader on a generated rolling folder", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "optimus-spark-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const lz4 = (text: string) => {
    const src = Buffer.from(text);
    const dst = new Uint8Array(compressBound(src.length));
    const n = compressBlock(src, dst, 0, src.length, new Uint32Array(1 << 16));
    const header = (method: number, c: number, d: number) => {
      const h = Buffer.alloc(21);
      h.write("LZ4Block");
      h[8] = method;
      h.writeInt32LE(c, 9);
      h.writeInt32LE(d, 13);
      return h;
    };
    return Buffer.concat([header(0x20, n, src.length), dst.subarray(0, n), header(0x10, 0, 0)]);
  };
  const snappy = (text: string) => {
    const block = snappyCompress(Buffer.from(text));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.byteLength);
    const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    return Buffer.concat([header, len, block]);
  };
  const scan = {
    nodeName: "Scan parquet spark_catalog.sales.orders",
    metadata: {
      Location: "PreparedDeltaFileIndex(1 paths)[s3://lake/sales/orders]",
      PartitionFilters: "[isnotnull(order_date#3), (order_date#3 >= 2024-01-01)]",
      PushedFilters: "[IsNotNull(region), In(region, [EU,US]), GreaterThan(amount,100)]",
      DataFilters: "[isnotnull(region#5), region#5 IN (EU,US), (amount#7 > 100)]",
      ReadSchema: "struct<region:string,amount:int>",
    },
    metrics: [{ name: "size of files read", accumulatorId: 9 }],
  };
  const ui = "org.apache.spark.sql.execution.ui.";
  const part1 = [
    { Event: "SparkListenerLogStart", "Spark Version": "3.5.1" },
    {
      Event: `${ui}SparkListenerSQLExecutionStart`,
      executionId: 3,
      description: "q",
      time: 1000,
      sparkPlanInfo: scan,
    },
  ];
  const part2 = [
    { Event: `${ui}SparkListenerDriverAccumUpdates`, executionId: 3, accumUpdates: [[9, 4096]] },
    { Event: `${ui}SparkListenerSQLExecutionEnd`, executionId: 3, time: 3500 },
  ];
  const lines = (events: object[]) => `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;

  it("reads the parts in number order across codecs, skipping and counting a malformed line", async () => {
    const folder = join(root, "logs/eventlog_v2_app-1");
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "appstatus_app-1"), "");
    await writeFile(join(folder, "events_1_app-1.lz4"), lz4(lines(part1)));
    await writeFile(
      join(folder, "events_2_app-1.snappy"),
      snappy(`{"Event":"${ui}SparkListenerSQLExecutionStart","executionId":4,"spark\n${lines(part2)}`),
    );
    const { executions, stats } = await read(root, "logs/");
    expect(stats).toMatchObject({ logs: 1, malformedLines: 1, executions: 1 });
    const e = executions[0] as SparkExecution;
    expect(e).toMatchObject({
      log: "logs/eventlog_v2_app-1/",
      executionId: 3,
      durationMs: 2500,
      bytesRead: 4096,
    });
    const s = e.scans[0] as SparkExecution["scans"][number];
    expect(s).toMatchObject({ table: "spark_catalog.sales.orders", locationKind: "PreparedDeltaFileIndex" });
    expect(s.locations).toEqual(["s3://lake/sales/orders"]);
    expect(s.filterColumns).toEqual(["order_date", "region", "amount"]);
    expect(s.predicates).toEqual(
      expect.arrayContaining([
        { column: "order_date", kind: "range", op: ">=", values: ["2024-01-01"], disjunctive: false },
        { column: "region", kind: "in", op: "in", values: ["EU", "US"], disjunctive: false },
        { column: "amount", kind: "range", op: ">", values: ["100"], disjunctive: false },
      ]),
    );
    expect(s.predicates).toHaveLength(3);
  });

  it("takes a bytes-read metric's final value from the last stage that reported it, else its driver updates", async () => {
    const stage = (id: number, accumulables: object[]) => ({
      Event: "SparkListenerStageCompleted",
      "Stage Info": { "Stage ID": id, "Stage Attempt ID": 0, Accumulables: accumulables },
    });
    const taskEnd = {
      Event: "SparkListenerTaskEnd",
      "Stage ID": 1,
      "Task Info": {
        "Task ID": 1,
        Accumulables: [{ ID: 9, Name: "size of files read", Update: 1, Value: 1 }],
      },
    };
    const start = (executionId: number, accumulatorId: number) => ({
      ...(part1[1] as object),
      executionId,
      sparkPlanInfo: { ...scan, metrics: [{ name: "size of files read", accumulatorId }] },
    });
    const end = (executionId: number) => ({
      Event: `${ui}SparkListenerSQLExecutionEnd`,
      executionId,
      time: 3500,
    });
    const events = [
      start(3, 9),
      { Event: `${ui}SparkListenerDriverAccumUpdates`, executionId: 3, accumUpdates: [[9, 40]] },
      taskEnd, // a task's update is in its stage's total: never added on its own
      stage(1, [
        { ID: 1, Name: "internal.metrics.executorRunTime", Value: 9 },
        { ID: 9, Name: "size of files read", Value: 300 },
        { ID: 99, Name: "other", Value: 5000 },
      ]),
      stage(2, [{ ID: 9, Value: "350" }]), // cumulative, driver updates included
      end(3),
      start(4, 12),
      {
        Event: `${ui}SparkListenerDriverAccumUpdates`,
        executionId: 4,
        accumUpdates: [
          [12, 70],
          [12, "30"],
        ],
      },
      stage(3, [{ ID: 13, Value: 5 }]),
      end(4),
      start(5, 14), // no value at all: unknown, not 0
      end(5),
    ];
    await mkdir(join(root, "stages"), { recursive: true });
    await writeFile(join(root, "stages/app-2"), lines(events));
    const { executions } = await read(root, "stages/");
    expect(executions.map((e) => [e.executionId, e.bytesRead])).toEqual([
      [3, 350],
      [4, 100],
      [5, undefined],
    ]);
  });
});

describe("Spark event-log reader, a log that isn't what its name says", () => {
  it("refuses a .zstd log that holds no zstd frame, naming the log, instead of reading it as empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "optimus-garbage-"));
    await writeFile(join(dir, "app-1.zstd"), Buffer.alloc(4096, 0x5a));
    await expect(read(dir, "")).rejects.toThrow("app-1.zstd: not a zstd stream");
    await rm(dir, { recursive: true, force: true });
  });
});

describe("Spark event-log reader, logs read at once", () => {
  it("reads two zstd logs concurrently exactly as one at a time (each stream has its own decoder)", async () => {
    const sequential = [(await read(SPARK, "nds_q72")).executions, (await read(SPARK, "nds_q88")).executions];
    const concurrent = await Promise.all([read(SPARK, "nds_q72"), read(SPARK, "nds_q88")]);
    expect(concurrent.map((r) => r.stats.malformedLines)).toEqual([0, 0]);
    expect(concurrent.map((r) => r.executions)).toEqual(sequential);
  });
});
