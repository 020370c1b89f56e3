/**
 * The `query_log_analysis` job: the window's Spark logs read, scans mapped to the run's tables and
 * folded into each table's workload, one part per table. Run through the agent's runner on the real
 * NDS event logs (q72 on Dataproc, q88 on Photon) beside a generated log whose scans name their
 * catalog tables; the mapping and folding rules also on their own.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type OptimusFilterSet,
  type OptimusTableRef,
  type OptimusWorkloadPart,
  QUERY_LOG_ANALYSIS_KIND,
  type QueryLogAnalysisPayload,
  QueryLogAnalysisPayloadSchema,
} from "@lakesmith/shared/optimus";
import type { JobOffer } from "@lakesmith/shared/protocol";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AllowList } from "../src/allow.ts";
import { optimusHandlers } from "../src/handlers/optimus.ts";
import { waterLevel } from "../src/optimus/analysis/bounded.ts";
import { RunFold } from "../src/optimus/analysis/fold.ts";
import { runQueryLogAnalysis } from "../src/optimus/analysis/run.ts";
import { normalizeLocation, TableMatcher } from "../src/optimus/analysis/tables.ts";
import { TableWorkload } from "../src/optimus/analysis/workload.ts";
import type { LoggedQuery, LoggedScan, QueryLogReader } from "../src/optimus/query.ts";
import type { Predicate } from "../src/optimus/spark/index.ts";
import { HandlerRegistry } from "../src/registry.ts";
import { runJob } from "../src/runner.ts";
import { FileStore } from "../src/store/index.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";
import { scanNode, sparkLog } from "./support/spark-log.ts";

const SPARK = join(DELTA_FIXTURES, "../query-logs/spark");
const NDS = "gs://nds-uscentral1/parquet_sf3k_decimal";
const NDS_Q72_BYTES = 100_237_852_915;
const NDS_Q88_BYTES = 3_514_194_595_568;

let root: string;
const logs = () => join(root, "logs");

const at = (iso: string) => Date.parse(iso);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "optimus-analysis-"));
  await mkdir(logs(), { recursive: true });
  for (const name of ["nds_q72_dataproc_2_2.zstd", "nds_q88_photon_db_13_3.zstd"])
    await copyFile(join(SPARK, name), join(logs(), name));
  const orders = "spark_catalog.sales.orders";
  await writeFile(
    join(logs(), "app-generated"),
    sparkLog([
      {
        id: 1,
        time: at("2025-07-02T10:00:00Z"),
        description: "orders of one day",
        bytes: 1_000,
        scans: [
          scanNode(orders, "s3a://lake/warehouse/orders/order_date=2025-07-01", {
            partition: "[isnotnull(order_date#3), (order_date#3 = 2025-07-01)]",
            data: "[isnotnull(region#5), region#5 IN (US,EU), (amount#7 > 100)]",
          }),
        ],
      },
      {
        // The same conjunction, spelt in another order, on the next day.
        id: 2,
        time: at("2025-07-03T09:00:00Z"),
        description: "orders again",
        bytes: 3_000,
        scans: [
          scanNode(orders, "s3a://lake/warehouse/orders/order_date=2025-07-01", {
            partition: "[(order_date#3 = 2025-07-01), isnotnull(order_date#3)]",
            data: "[(amount#7 > 100), region#5 IN (EU,US)]",
          }),
        ],
      },
      {
        // Names only: a location under no table's root; a short name two tables share.
        id: 3,
        time: at("2025-07-02T11:00:00Z"),
        description: "customers and events",
        bytes: 600,
        scans: [
          scanNode("spark_catalog.crm.customers", "s3://elsewhere/customers", {
            data: "[isnotnull(tier#1), (tier#1 = gold)]",
          }),
          scanNode("events", "s3://elsewhere/events"),
        ],
      },
      {
        id: 4,
        time: at("2025-06-20T10:00:00Z"),
        description: "before the window",
        bytes: 50,
        scans: [scanNode(orders, "s3://lake/warehouse/orders", { data: "[(amount#7 > 5)]" })],
      },
    ]),
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const TABLES: OptimusTableRef[] = [
  // By location (a trailing slash on a root is no matter).
  { table_fqn: "nds.date_dim", table_id: "t_date", names: [], uris: [`${NDS}/date_dim/`] },
  { table_fqn: "nds.catalog_sales", table_id: "t_cs", names: [], uris: [`${NDS}/catalog_sales`] },
  {
    table_fqn: "nds.time_dim",
    table_id: "t_time",
    names: [],
    uris: ["s3://ndsv2-data/parquet_sf3000/time_dim"],
  },
  {
    table_fqn: "nds.household_demographics",
    table_id: "t_hd",
    names: [],
    uris: ["s3://ndsv2-data/parquet_sf3000/household_demographics"],
  },
  // The log spells the root s3a:// and a partition folder below it.
  { table_fqn: "main.sales.orders", table_id: "t_orders", names: [], uris: ["s3://lake/warehouse/orders"] },
  // By name: `spark_catalog.crm.customers` matches the fqn's last two parts.
  { table_fqn: "main.crm.customers", table_id: "t_cust", names: [], uris: ["s3://lake/warehouse/customers"] },
  // `events` is the last part of two fqns: matched to neither.
  { table_fqn: "main.a.events", table_id: "t_ev_a", names: [], uris: ["s3://lake/a/events"] },
  { table_fqn: "main.b.events", table_id: "t_ev_b", names: [], uris: ["s3://lake/b/events"] },
];

function payload(window: { start: string; end: string }, tables = TABLES): Record<string, unknown> {
  return {
    submission_id: "osub_1",
    engine: "spark",
    query_logs_uri: `file://${logs()}`,
    window_start: window.start,
    window_end: window.end,
    tables,
  };
}

/**
 * The logs' folder only: the tables' roots in the payload are names the analysis compares logged
 * locations with (the handler's `references`), never read, so the agent needs no access to them.
 */
const allow = () => new AllowList([`file://${root}`]);

/** Runs one analysis job through the agent's runner; `onPart` sees each part as the plane would. */
async function analyse(
  job: Record<string, unknown>,
  signal = new AbortController().signal,
  onPart = () => {},
) {
  const registry = new HandlerRegistry(optimusHandlers({ s3_force_path_style: false, memory_limit_mb: 256 }));
  const parts: OptimusWorkloadPart[] = [];
  const progress: Record<string, unknown>[] = [];
  const offer: JobOffer = {
    id: "job_ola",
    kind: QUERY_LOG_ANALYSIS_KIND,
    fence: 1,
    attempt: 0,
    priority: "P2",
    table_id: null,
    payload: job,
  };
  const outcome = await runJob(offer, {
    registry,
    allow: allow(),
    scratchRoot: root,
    log: pino({ level: "silent" }),
    signal,
    progress: (p) => progress.push(p),
    part: async (part) => {
      parts.push(part as OptimusWorkloadPart);
      onPart();
      return undefined;
    },
  });
  return { outcome, parts, progress, byTable: (id: string) => parts.find((p) => p.table_id === id) };
}

const sortedSets = (part: OptimusWorkloadPart | undefined) =>
  (part?.filter_sets ?? []).map((s) => ({ predicates: s.predicates, columns: s.columns }));

describe("query_log_analysis on real Spark logs", () => {
  it("sends each table's filter sets as the plans say: q72's date_dim and catalog_sales, q88's time_dim and household", async () => {
    const { outcome, parts, byTable } = await analyse(payload({ start: "2024-01-01", end: "2025-12-31" }));
    expect(outcome.outcome).toBe("succeeded");
    expect(parts.map((p) => p.table_id)).toEqual(["t_cust", "t_orders", "t_cs", "t_date", "t_hd", "t_time"]);

    // q72 scans date_dim three times: once with d_year = 2000, twice joined on its keys only.
    const dateDim = byTable("t_date");
    expect(dateDim).toMatchObject({ table_fqn: "nds.date_dim", queries: 1 });
    expect(sortedSets(dateDim)).toEqual([
      { predicates: [], columns: ["d_date", "d_date_sk", "d_week_seq"] },
      {
        predicates: [{ column: "d_year", op: "=", values: ["2000"] }],
        columns: ["d_date", "d_date_sk", "d_week_seq", "d_year"],
      },
    ]);
    // q72's bytes, split over its 11 scans: date_dim's three scans take three shares.
    expect(dateDim?.bytes_scanned).toBeCloseTo((NDS_Q72_BYTES / 11) * 3, 0);
    const withYear = dateDim?.filter_sets.find((s) => s.predicates.length === 1) as OptimusFilterSet;
    expect(withYear.days).toEqual({ "2025-07-02": { queries: 1, bytes_scanned: withYear.bytes_scanned } });
    expect(withYear.examples).toEqual(["query72"]);

    // The dynamic partition-pruning filter is no literal: catalog_sales has columns, no predicates.
    const sales = byTable("t_cs")?.filter_sets.map((f) => [f.predicates, f.columns.join(" ")]);
    expect(sales).toEqual([
      [[], "cs_bill_cdemo_sk cs_bill_hdemo_sk cs_item_sk cs_quantity cs_ship_date_sk cs_sold_date_sk"],
    ]);

    // q88: eight time_dim scans, one per half hour from 8:30 to 12:30, each its own conjunction.
    const time = byTable("t_time");
    expect(time?.queries).toBe(1);
    expect(time?.bytes_scanned).toBeCloseTo((NDS_Q88_BYTES / 18) * 8, 0);
    const halfHours = (time?.filter_sets ?? []).map((s) =>
      s.predicates.map((p) => `${p.column} ${p.op} ${p.values.join(",")}`).join(" and "),
    );
    expect(halfHours.sort()).toEqual([
      "t_hour = 10 and t_minute < 30",
      "t_hour = 10 and t_minute >= 30",
      "t_hour = 11 and t_minute < 30",
      "t_hour = 11 and t_minute >= 30",
      "t_hour = 12 and t_minute < 30",
      "t_hour = 8 and t_minute >= 30",
      "t_hour = 9 and t_minute < 30",
      "t_hour = 9 and t_minute >= 30",
    ]);
    expect(time?.filter_sets.every((s) => s.columns.join() === "t_hour,t_minute,t_time_sk")).toBe(true);
    expect(time?.filter_sets[0]?.days).toHaveProperty("2024-09-19");
    // q88's household filter is one OR of three alternatives: no predicate narrows it alone.
    expect(sortedSets(byTable("t_hd"))).toEqual([
      { predicates: [], columns: ["hd_demo_sk", "hd_dep_count", "hd_vehicle_count"] },
    ]);
    expect(outcome.outcome === "succeeded" && outcome.result).toMatchObject({
      logs: 3,
      malformed_lines: 0,
      queries_read: 6,
      queries_in_window: 6,
      own_queries_skipped: 0,
      tables: 6,
    });
  });

  it("keeps the window's queries only, folds the same conjunction across days, and lists unmatched scans", async () => {
    const { outcome, parts, byTable } = await analyse(payload({ start: "2025-07-01", end: "2025-07-03" }));
    expect(outcome.outcome).toBe("succeeded");
    const result = outcome.outcome === "succeeded" ? (outcome.result ?? {}) : {};
    // q88 (2024-09-19) and the generated query of 2025-06-20 are outside the window.
    expect(result).toMatchObject({ queries_read: 6, queries_in_window: 4, scans: 15, scans_matched: 7 });
    expect(parts.map((p) => p.table_id)).toEqual(["t_cust", "t_orders", "t_cs", "t_date"]);

    const orders = byTable("t_orders");
    expect(orders).toMatchObject({
      queries: 2,
      bytes_scanned: 4_000,
      other: { queries: 0, bytes_scanned: 0 },
    });
    expect(orders?.filter_sets).toEqual([
      {
        predicates: [
          { column: "amount", op: ">", values: ["100"] },
          { column: "order_date", op: "=", values: ["2025-07-01"] },
          { column: "region", op: "in", values: ["EU", "US"] },
        ],
        columns: ["amount", "order_date", "region"],
        queries: 2,
        bytes_scanned: 4_000,
        days: {
          "2025-07-02": { queries: 1, bytes_scanned: 1_000 },
          "2025-07-03": { queries: 1, bytes_scanned: 3_000 },
        },
        examples: ["orders of one day", "orders again"],
      },
    ]);
    expect(byTable("t_cust")?.filter_sets[0]?.predicates).toEqual([
      { column: "tier", op: "=", values: ["gold"] },
    ]);

    const unmatched = result.unmatched as { name: string; queries: number; bytes_scanned: number }[];
    expect(unmatched.map((u) => u.name)).toContain("events");
    expect(unmatched.map((u) => u.name)).toContain(`${NDS}/inventory`);
    expect(unmatched.find((u) => u.name === "events")).toEqual({
      name: "events",
      queries: 1,
      bytes_scanned: 300,
    });
    expect(unmatched.some((u) => u.name.includes("ndsv2-data"))).toBe(false);
  });

  it("stops between parts when the job is stopped", async () => {
    const stop = new AbortController();
    const window = { start: "2024-01-01", end: "2025-12-31" };
    const { outcome, parts } = await analyse(payload(window), stop.signal, () => stop.abort());
    expect(outcome).toEqual({ outcome: "aborted" });
    expect(parts).toHaveLength(1);
  });

  it("refuses a log location outside the allow list before reading", async () => {
    const { outcome, parts } = await analyse({
      ...payload({ start: "2025-07-01", end: "2025-07-03" }),
      query_logs_uri: "file:///var/log/spark",
    });
    expect(outcome).toMatchObject({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining("allow list"),
    });
    expect(parts).toEqual([]);
  });
});

/** A reader over queries held in memory: the analysis never sees a log format. */
const memoryReader = (queries: LoggedQuery[]): QueryLogReader =>
  async function* (_store, _prefix, stats) {
    stats.logs = 1;
    for (const q of queries) {
      stats.lines++;
      yield q;
    }
  };

const predicate = (
  column: string,
  op: string,
  values: string[],
  more: Partial<Predicate> = {},
): Predicate => ({
  column,
  kind: op === "in" ? "in" : op === "=" ? "equality" : "range",
  op,
  values,
  disjunctive: false,
  ...more,
});

const ordersScan = (predicates: Predicate[]): LoggedScan => ({
  locations: ["s3://lake/warehouse/orders"],
  filterColumns: predicates.map((p) => p.column),
  predicates,
});

const query = (id: string, more: Partial<LoggedQuery> = {}): LoggedQuery => ({
  engine: "trino",
  id,
  startedAt: new Date("2025-07-02T12:00:00Z"),
  bytesScanned: 100,
  scans: [ordersScan([predicate("region", "=", ["EU"])])],
  ...more,
});

async function analyseMemory(queries: LoggedQuery[], options: { progressEvery?: number } = {}) {
  const parts: OptimusWorkloadPart[] = [];
  const progress: Record<string, unknown>[] = [];
  const job: QueryLogAnalysisPayload = QueryLogAnalysisPayloadSchema.parse({
    ...payload({ start: "2025-07-01", end: "2025-07-03" }),
    tables: [TABLES[4]],
  });
  const result = await runQueryLogAnalysis(
    {
      payload: job,
      signal: new AbortController().signal,
      progress: (p) => progress.push(p),
      part: async (p) => {
        parts.push(p as OptimusWorkloadPart);
        return undefined;
      },
    },
    { store: new FileStore(root), reader: memoryReader(queries), ...options },
  );
  return { result, parts, progress };
}

describe("query_log_analysis, the rules", () => {
  it("skips Lakesmith's own reads, counts a query without bytes as a query of 0 bytes, keeps one without a time", async () => {
    const { result, parts } = await analyseMemory([
      query("q1", { client: "lakesmith-agent/1.4" }),
      query("q2", { client: "LakeSmith crunch" }),
      query("q3", { client: "analyst", bytesScanned: undefined }),
      query("q4", { startedAt: undefined }),
      query("q5", { startedAt: new Date("2025-07-04T00:00:00Z") }),
    ]);
    expect(result).toMatchObject({ queries_read: 5, queries_in_window: 4, own_queries_skipped: 2 });
    expect(parts[0]).toMatchObject({ queries: 2, bytes_scanned: 100 });
    // q4 has no time: in the totals, in no day.
    expect(parts[0]?.filter_sets[0]?.days).toEqual({ "2025-07-02": { queries: 1, bytes_scanned: 0 } });
  });

  it("weighs each scan by its own bytes where the log gives every scan's, else splits the query's evenly", async () => {
    const other: LoggedScan = { table: "hive.web.clicks", locations: [], filterColumns: [], predicates: [] };
    const region = ordersScan([predicate("region", "=", ["EU"])]);
    const { result, parts } = await analyseMemory([
      query("per-scan", {
        bytesScanned: 1000,
        scans: [
          { ...region, bytesScanned: 900 },
          { ...other, bytesScanned: 100 },
        ],
      }),
      query("per-query", { bytesScanned: 1000, scans: [region, { ...other, bytesScanned: 100 }] }),
    ]);
    expect(parts[0]).toMatchObject({ queries: 2, bytes_scanned: 900 + 500 });
    expect(result.unmatched).toEqual([{ name: "hive.web.clicks", queries: 2, bytes_scanned: 100 + 500 }]);
  });

  it("reports progress every few queries read", async () => {
    const queries = Array.from({ length: 5 }, (_, i) => query(`q${i}`));
    const { progress } = await analyseMemory(queries, { progressEvery: 2 });
    const reading = progress.filter((p) => p.step === "reading").map((p) => p.queries_read);
    expect(reading).toEqual([2, 4, 5]);
    expect(progress.at(-1)).toEqual({ step: "sending", tables_sent: 1, tables: 1 });
  });

  it("keeps the 500 largest filter sets by bytes and counts the rest in other", async () => {
    const queries = Array.from({ length: 600 }, (_, i) =>
      query(`q${i}`, { bytesScanned: i + 1, scans: [ordersScan([predicate("order_id", "=", [String(i)])])] }),
    );
    const { parts } = await analyseMemory(queries);
    const part = parts[0] as OptimusWorkloadPart;
    expect(part.filter_sets).toHaveLength(500);
    expect(part.filter_sets[0]?.bytes_scanned).toBe(600);
    expect(part.filter_sets.at(-1)?.bytes_scanned).toBe(101);
    expect(part.other).toEqual({ queries: 100, bytes_scanned: (100 * 101) / 2 });
    expect(part).toMatchObject({ queries: 600, bytes_scanned: (600 * 601) / 2 });
  });
});

describe("mapping scans to tables", () => {
  const tables: OptimusTableRef[] = [
    {
      table_fqn: "main.sales.orders",
      table_id: "orders",
      names: ["SALES_ORDERS_V"],
      uris: ["s3://lake/orders/"],
    },
    { table_fqn: "main.sales.orders_eu", table_id: "orders_eu", names: [], uris: ["s3://lake/orders/eu"] },
    { table_fqn: "local_files", table_id: "files", names: [], uris: ["file:///data/files"] },
    { table_fqn: "main.a.events", table_id: "events_a", names: [], uris: ["gs://bkt/a/events"] },
    { table_fqn: "main.b.events", table_id: "events_b", names: [], uris: ["gs://bkt/b/events"] },
    { table_fqn: "lonely", table_id: "lonely", names: [], uris: ["s3://lake/lonely"] },
  ];
  const matcher = new TableMatcher(tables);
  const at = (...locations: string[]) => matcher.match({ locations })?.table_id;
  const named = (table: string) => matcher.match({ table, locations: [] })?.table_id;

  it("by location: under a root after s3a/s3n normalization, the deepest root first, paths case-sensitive", () => {
    expect(normalizeLocation("S3A://Lake/orders/")).toBe("s3://lake/orders/");
    expect(normalizeLocation("abfss://raw@acct.dfs.core.windows.net/t")).toBe("azure://acct/raw/t/");
    expect(at("s3a://lake/orders/day=2025-07-01")).toBe("orders");
    expect(at("s3n://lake/orders")).toBe("orders");
    expect(at("s3://lake/orders/eu/day=1")).toBe("orders_eu");
    expect(at("s3://lake/orders_2024")).toBeUndefined();
    expect(at("s3://lake/Orders/day=1")).toBeUndefined();
    expect(at("file:/data/files/part-0.parquet")).toBe("files");
    expect(at("gcs://BKT/a/events/x")).toBe("events_a");
    expect(at("s3://elsewhere/x", "s3://lake/orders")).toBe("orders");
  });

  it("by name: the fqn or a listed name in any case, else unambiguous last parts", () => {
    expect(named("MAIN.Sales.Orders")).toBe("orders");
    expect(named("sales_orders_v")).toBe("orders");
    expect(named("spark_catalog.sales.orders")).toBe("orders");
    expect(named("`sales`.`orders_eu`")).toBe("orders_eu");
    expect(named("orders")).toBe("orders");
    expect(named("spark_catalog.crm.orders")).toBeUndefined();
    expect(named("events")).toBeUndefined();
    expect(named("hive.a.events")).toBe("events_a");
    expect(named("spark_catalog.default.lonely")).toBe("lonely");
    expect(
      matcher.match({ table: "spark_catalog.sales.orders", locations: ["s3://lake/orders/eu"] })?.table_id,
    ).toBe("orders_eu");
  });
});

describe("folding a table's scans into filter sets", () => {
  const table = TABLES[4] as OptimusTableRef;
  const share = (predicates: Predicate[], bytes = 10) => ({ scan: ordersScan(predicates), bytes });

  it("folds the same conjunction however it is spelt, leaving out OR alternatives and runtime filters", () => {
    const w = new TableWorkload(table);
    w.add({ day: "2025-07-01", example: "a" }, [
      share([
        predicate("region", "in", ["US", "EU"]),
        predicate("d", ">=", ["5"]),
        predicate("x", "=", ["1"], { disjunctive: true }),
      ]),
    ]);
    w.add({ day: "2025-07-02", example: "b" }, [
      share([predicate("d", ">=", ["5"]), predicate("region", "in", ["EU", "US", "EU"])]),
      share([
        predicate("d", ">=", ["5"]),
        predicate("region", "in", ["EU", "US"]),
        predicate("k", "dynamic", [], { kind: "dynamic" }),
      ]),
    ]);
    w.add({ day: "2025-07-02", example: "c" }, [share([predicate("d", "<=>", ["5"])])]);
    const part = w.part();
    expect(part).toMatchObject({ queries: 3, bytes_scanned: 40 });
    expect(
      part.filter_sets.map((s) => [s.predicates, s.queries, s.bytes_scanned, s.days, s.examples]),
    ).toEqual([
      [
        [
          { column: "d", op: ">=", values: ["5"] },
          { column: "region", op: "in", values: ["EU", "US"] },
        ],
        2,
        30,
        { "2025-07-01": { queries: 1, bytes_scanned: 10 }, "2025-07-02": { queries: 1, bytes_scanned: 20 } },
        ["a", "b"],
      ],
      [
        [{ column: "d", op: "=", values: ["5"] }],
        1,
        10,
        { "2025-07-02": { queries: 1, bytes_scanned: 10 } },
        ["c"],
      ],
    ]);
  });

  it("keeps a part under the protocol's 1 MiB frame, folding what does not fit into other", () => {
    const w = new TableWorkload(table);
    for (let i = 0; i < 500; i++) {
      const values = Array.from(
        { length: 200 },
        (_, v) => `customer-${String(i * 1000 + v).padStart(9, "0")}`,
      );
      w.add({ day: "2025-07-01", example: `q${i}` }, [
        share([predicate("customer", "in", values)], 1_000 - i),
      ]);
    }
    const part = w.part();
    expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThan(1024 * 1024);
    expect(part.filter_sets.length).toBeGreaterThan(100);
    expect(part.filter_sets.length).toBeLessThan(500);
    expect(part.filter_sets.at(-1)?.bytes_scanned).toBe(1_000 - part.filter_sets.length + 1);
    expect(part.other.queries).toBe(500 - part.filter_sets.length);
  });

  it("holds a bounded number of open sets, folding the smaller half into other without losing volume", () => {
    const w = new TableWorkload(table, { maxOpen: 10 });
    w.add({ example: "big" }, [share([predicate("a", "=", ["big"])], 1_000_000)]);
    for (let i = 0; i < 30; i++)
      w.add({ example: `q${i}` }, [share([predicate("a", "=", [String(i)])], i + 1)]);
    w.add({ example: "big again" }, [share([predicate("a", "=", ["big"])], 1_000_000)]);
    const part = w.part();
    expect(part.filter_sets.length).toBeLessThanOrEqual(10);
    expect(part.filter_sets[0]).toMatchObject({ queries: 2, bytes_scanned: 2_000_000 });
    const kept = part.filter_sets.reduce((n, s) => n + s.bytes_scanned, 0);
    expect(kept + part.other.bytes_scanned).toBe(part.bytes_scanned);
    expect(part.filter_sets.reduce((n, s) => n + s.queries, 0) + part.other.queries).toBe(32);
  });

  it("bounds the sets held over all tables, cutting the largest tables to one level and keeping the small whole", () => {
    expect(waterLevel([2, 10, 30], 20)).toBe(9);
    expect(waterLevel([2, 3], 20)).toBe(Number.POSITIVE_INFINITY);
    expect(waterLevel([5, 5, 5], 2)).toBe(1);

    const small = TABLES[0] as OptimusTableRef;
    const fold = new RunFold({ maxOpenTotal: 20 });
    for (let i = 0; i < 2; i++)
      fold.add(small, { example: `s${i}` }, [share([predicate("a", "=", [String(i)])], 5)]);
    for (let i = 0; i < 30; i++)
      fold.add(table, { example: `q${i}` }, [share([predicate("a", "=", [String(i)])], i + 1)]);
    expect(fold.openSets).toBeLessThanOrEqual(20);
    const parts = fold.workloads().map((w) => w.part());
    const a = parts.find((p) => p.table_id === small.table_id);
    const b = parts.find((p) => p.table_id === table.table_id);
    expect(a?.filter_sets).toHaveLength(2);
    expect(a?.other).toEqual({ queries: 0, bytes_scanned: 0 });
    expect(b?.filter_sets.length).toBeLessThan(19);
    expect(b?.filter_sets[0]?.bytes_scanned).toBe(30);
    const kept = (b?.filter_sets ?? []).reduce((n, s) => n + s.bytes_scanned, 0);
    expect(kept + (b?.other.bytes_scanned ?? 0)).toBe((30 * 31) / 2);
  });
});
