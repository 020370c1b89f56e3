/**
 * Optimus layout scoring on real Delta tables written here (Parquet through real DuckDB, statistics
 * as the crunch writes them): the candidate a workload calls for is recommended (a date range →
 * a linear sort on the date; two balanced columns → a Z-order over both), a table already in the
 * best order gets no recommendation and says why, a low-cardinality column is never a layout alone,
 * literals are read in their columns' types, the real files' statistics are replayed overall and per
 * day, and the handler runs end to end on a job context without a control plane.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Layout } from "@lakesmith/shared/jobs";
import {
  type LayoutScoringPayload,
  LayoutScoringPayloadSchema,
  LayoutScoringResultSchema,
  type OptimusFilterSet,
} from "@lakesmith/shared/optimus";
import { afterAll, describe, expect, it } from "vitest";
import { commitKey, duckdbColumns, parseSchema } from "../src/delta/index.ts";
import { Engine, sqlString, statLeaves, statsFromCopy } from "../src/engine/index.ts";
import { optimusHandlers } from "../src/handlers/optimus.ts";
import { excludes } from "../src/optimus/scoring/replay.ts";
import { filesAfterRewrite, runLayoutScoring } from "../src/optimus/scoring/run.ts";
import { spreadCount } from "../src/optimus/scoring/sample.ts";
import { compareValues, readLiteral, readValue } from "../src/optimus/scoring/values.ts";
import { typeWorkload } from "../src/optimus/scoring/workload.ts";
import { FileStore } from "../src/store/index.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "optimus-scoring-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface TableSpec {
  /** Delta field names and types. */
  fields: [string, string][];
  partitionColumns?: string[];
  /** One SELECT per file (its columns: the data fields in order), with its partition values. */
  files: { select: string; partition?: Record<string, string | null> }[];
  /** Write min/max statistics (default true); without, only row counts. */
  stats?: boolean;
}

/** Writes a Delta table at version 0, its files named in key order, statistics as the crunch writes them. */
async function writeTable(name: string, spec: TableSpec): Promise<string> {
  const path = join(root, name);
  const partitionColumns = spec.partitionColumns ?? [];
  const schemaString = JSON.stringify({
    type: "struct",
    fields: spec.fields.map(([n, type]) => ({ name: n, type, nullable: true, metadata: {} })),
  });
  const columns = duckdbColumns(parseSchema(schemaString), partitionColumns);
  const engine = await Engine.open({ memoryLimitMb: 256 });
  const adds: unknown[] = [];
  try {
    const leaves = await statLeaves(engine, columns);
    for (const [i, file] of spec.files.entries()) {
      const folder = partitionColumns
        .map((c) => `${c}=${file.partition?.[c] ?? "__HIVE_DEFAULT_PARTITION__"}/`)
        .join("");
      const key = `${folder}part-${String(i).padStart(5, "0")}.parquet`;
      mkdirSync(join(path, folder), { recursive: true });
      const cast = columns.map(
        (c) => `cast(${JSON.stringify(c.name)} as ${c.type}) as ${JSON.stringify(c.name)}`,
      );
      const [row] = await engine.query<Parameters<typeof statsFromCopy>[1]>(
        `copy (select ${cast.join(", ")} from (${file.select})) to ${sqlString(join(path, key))} (format parquet, return_stats true)`,
      );
      const stats = statsFromCopy(leaves, row as Parameters<typeof statsFromCopy>[1]);
      adds.push({
        add: {
          path: key,
          partitionValues: file.partition ?? {},
          size: statSync(join(path, key)).size,
          modificationTime: Date.now(),
          dataChange: true,
          stats: JSON.stringify(spec.stats === false ? { numRecords: stats.numRecords } : stats),
        },
      });
    }
  } finally {
    engine.close();
  }
  mkdirSync(join(path, "_delta_log"), { recursive: true });
  const log = [
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: name,
        format: { provider: "parquet", options: {} },
        schemaString,
        partitionColumns,
        configuration: {},
      },
    },
    ...adds,
  ];
  writeFileSync(join(path, commitKey(0)), `${log.map((a) => JSON.stringify(a)).join("\n")}\n`);
  return path;
}

/** `count` files of `rows` rows each; `select(i)` is file i's select list over `g`, the row's number in the table. */
function files(count: number, rows: number, select: (file: number) => string) {
  return Array.from({ length: count }, (_, f) => ({
    select: `${select(f)} from (select r + ${f * rows} as g from range(${rows}) t(r))`,
  }));
}

function set(
  predicates: OptimusFilterSet["predicates"],
  bytes: number,
  days: Record<string, number> = { "2026-03-01": bytes },
): OptimusFilterSet {
  return {
    predicates,
    columns: predicates.map((p) => p.column),
    queries: Object.keys(days).length,
    bytes_scanned: bytes,
    days: Object.fromEntries(Object.entries(days).map(([d, b]) => [d, { queries: 1, bytes_scanned: b }])),
    examples: [],
  };
}

function payload(path: string, filterSets: OptimusFilterSet[], extra: Partial<LayoutScoringPayload> = {}) {
  return LayoutScoringPayloadSchema.parse({
    submission_id: "sub_1",
    run_id: "job_run",
    table_fqn: "lake.sales",
    table_id: "tbl_test",
    uri: `file://${path}`,
    format: "delta",
    current_layout: null,
    filter_sets: filterSets,
    ...extra,
  });
}

async function score(
  path: string,
  filterSets: OptimusFilterSet[],
  extra: Partial<LayoutScoringPayload> = {},
) {
  const ctx = jobContext(root, "layout_scoring", payload(path, filterSets, extra));
  const result = await runLayoutScoring(ctx, { store: new FileStore(path), memoryLimitMb: 256 });
  return LayoutScoringResultSchema.parse(result);
}

const TB = 2 ** 40;
const scattered = (salt: number, n: number) => `(hash(g, ${salt}) % ${n})::bigint`;

describe("layout scoring", () => {
  it("recommends a linear sort on the date column for a workload of one dominant date range", async () => {
    const path = await writeTable("dates", {
      fields: [
        ["id", "long"],
        ["d", "date"],
        ["x", "long"],
      ],
      files: files(
        20,
        5_000,
        () =>
          `select g as id, date '2025-01-01' + ${scattered(1, 365)}::int as d, ${scattered(2, 1000)} as x`,
      ),
    });
    const result = await score(path, [
      set(
        [
          { column: "D", op: ">=", values: ["2025-03-01"] },
          { column: "d", op: "<", values: ["2025-03-15"] },
        ],
        9 * TB,
      ),
      set([{ column: "x", op: "=", values: ["5"] }], TB),
    ]);
    expect(result.files).toBe(20);
    expect(result.sample_rows).toBe(100_000);
    expect(result.pseudo_files).toBe(20);
    expect(result.recommendation?.layout).toEqual({ type: "linear", columns: ["d"] });
    expect(result.recommendation?.expected_skip_fraction).toBeGreaterThan(0.75);
    expect(result.recommendation?.reason).toMatch(/^d lets the workload skip/);
    expect(result.no_recommendation_reason).toBeNull();
    // Scattered rows: the current order skips next to nothing, and so do the real files.
    expect(result.current.predicted_skip_fraction).toBeLessThan(0.05);
    expect(result.current.measured_skip_fraction).toBeLessThan(0.05);
    expect(result.candidates[0]?.layout).toEqual({ type: "linear", columns: ["d"] });
    const fractions = result.candidates.map((c) => c.skip_fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => b - a));
    expect(result.candidates.map((c) => c.layout)).toContainEqual({ type: "zorder", columns: ["d", "x"] });
  });

  it("recommends a Z-order over two balanced selective columns", async () => {
    const path = await writeTable("balanced", {
      fields: [
        ["a", "long"],
        ["b", "long"],
      ],
      files: files(64, 2_000, () => `select ${scattered(3, 10_000)} as a, ${scattered(4, 10_000)} as b`),
    });
    const result = await score(path, [
      set([{ column: "a", op: "=", values: ["4321"] }], 1.2 * TB),
      set([{ column: "b", op: "in", values: ["17", "18"] }], TB / 2),
      set([{ column: "b", op: "<", values: ["50"] }], TB / 2),
    ]);
    expect(result.recommendation?.layout).toEqual({ type: "zorder", columns: ["a", "b"] });
    const linearA = result.candidates.find(
      (c) => JSON.stringify(c.layout) === '{"type":"linear","columns":["a"]}',
    );
    // A linear sort serves one column's half of the bytes only.
    expect(linearA?.skip_fraction).toBeLessThan(0.6);
    expect(result.recommendation?.expected_skip_fraction).toBeGreaterThan(0.75);
  });

  it("recommends nothing, and says why, for a table already in the best order", async () => {
    const path = await writeTable("sorted", {
      fields: [
        ["ts", "timestamp"],
        ["x", "long"],
      ],
      files: files(
        30,
        2_000,
        () => `select timestamp '2026-01-01' + to_seconds(g * 7) as ts, ${scattered(5, 100)} as x`,
      ),
    });
    const result = await score(path, [
      set([{ column: "ts", op: ">", values: ["2026-01-04 00:00:00"] }], TB),
      set(
        [
          { column: "ts", op: ">=", values: ["2026-01-01T10:00:00Z"] },
          { column: "ts", op: "<", values: ["2026-01-01T11:00:00Z"] },
        ],
        TB,
      ),
    ]);
    expect(result.recommendation).toBeNull();
    expect(result.no_recommendation_reason).toMatch(/^no candidate skips more than the current layout/);
    expect(result.candidates[0]?.layout).toBeNull();
    expect(result.current.predicted_skip_fraction).toBeGreaterThan(0.7);
    // Real statistics of files written in that order skip as much.
    expect(result.current.measured_skip_fraction).toBeCloseTo(result.current.predicted_skip_fraction, 1);
  });

  it("never scores or recommends a low-cardinality column alone", async () => {
    const path = await writeTable("countries", {
      fields: [
        ["country", "string"],
        ["x", "long"],
      ],
      files: files(
        40,
        2_000,
        () =>
          `select ['US','DE','FR','GB','JP','BR','IN','CA'][1 + ${scattered(6, 8)}] as country, ${scattered(7, 100_000)} as x`,
      ),
    });
    const alone = await score(path, [set([{ column: "country", op: "=", values: ["DE"] }], TB)]);
    expect(alone.candidates.map((c) => c.layout)).toEqual([null]);
    expect(alone.recommendation).toBeNull();
    expect(alone.no_recommendation_reason).toMatch(/^no candidate layout to compare/);
    expect(alone.method).toMatch(/low-cardinality \(never a layout alone\): country/);

    const mixed = await score(path, [
      set([{ column: "country", op: "=", values: ["DE"] }], 9 * TB),
      set([{ column: "x", op: "<", values: ["1000"] }], TB),
    ]);
    const layouts = mixed.candidates.map((c) => c.layout);
    expect(layouts).not.toContainEqual({ type: "linear", columns: ["country"] });
    expect(layouts).toContainEqual({ type: "linear", columns: ["country", "x"] });
    expect(layouts).toContainEqual({ type: "linear", columns: ["x"] });
    expect(mixed.recommendation?.layout).not.toEqual({ type: "linear", columns: ["country"] });
    expect(mixed.recommendation?.layout.columns).toContain("country");
  });

  it("reads literals in their columns' types: dates, timestamps, strings, decimals", () => {
    expect(readLiteral("date", "2024-03-01")).toBe(19_783n);
    expect(readLiteral("date", "DATE '2024-03-01'")).toBe(19_783n);
    expect(readLiteral("date", "2024-03-01 00:00:00")).toBe(19_783n);
    expect(readLiteral("date", "2024-03-01 10:00:00")).toBeUndefined();
    expect(readLiteral("date", "2023-02-29")).toBeUndefined();
    expect(readLiteral("timestamp", "2024-03-01 01:00:00")).toBe(1_709_254_800_000_000n);
    expect(readLiteral("timestamp", "2024-03-01T02:00:00+01:00")).toBe(1_709_254_800_000_000n);
    expect(readLiteral("timestamp", "TIMESTAMP '2024-03-01 01:00:00.5'")).toBe(1_709_254_800_500_000n);
    expect(readValue("timestamp", "2024-03-01 01:00:00+00")).toBe(1_709_254_800_000_000n);
    expect(readLiteral("timestamp", "yesterday")).toBeUndefined();
    expect(readLiteral("string", "'O''Brien'")).toBe("O'Brien");
    expect(readLiteral("string", "CA")).toBe("CA");
    const dec = (t: string) => readLiteral("number", t);
    expect(compareValues("number", dec("12.50") as never, dec("12.5") as never)).toBe(0);
    expect(compareValues("number", dec("2000L") as never, dec("1999.99") as never)).toBe(1);
    expect(compareValues("number", dec("-1.5e2") as never, dec("-150") as never)).toBe(0);
    expect(
      compareValues("number", readValue("number", 0.1) as never, dec("0.10000000000000001") as never),
    ).toBe(-1);
    expect(dec("abc")).toBeUndefined();
    expect(dec("NaN")).toBeUndefined();
    // Strings compare by code point (UTF-8 byte order), not UTF-16 units.
    expect(compareValues("string", "\u{1F600}", "\uFFFD")).toBe(1);

    // A predicate is used in its column's type; one that can't be read is ignored and counted.
    const table = {
      names: ["day", "amount", "ts", "code"],
      typeOf: (c: string) =>
        ({ day: "date", amount: "decimal", ts: "timestamp", code: "string" })[c] ?? "string",
    };
    const typed = typeWorkload(
      [
        set(
          [
            { column: "DAY", op: ">=", values: ["2024-03-01"] },
            { column: "amount", op: "<", values: ["12.5"] },
            { column: "ts", op: "=", values: ["not a time"] },
            { column: "missing", op: "=", values: ["1"] },
            { column: "code", op: "in", values: ["'A'", "B"] },
          ],
          1,
        ),
      ],
      table,
    );
    expect(typed.unusable).toBe(2);
    expect(typed.sets[0]?.predicates.map((p) => p.column)).toEqual(["day", "amount", "code"]);
    const [day, amount, code] = typed.sets[0]?.predicates ?? [];
    const bounds = (kind: "date" | "number" | "string", min: string, max: string) => ({
      min: readValue(kind, min),
      max: readValue(kind, max),
    });
    expect(excludes(day as never, bounds("date", "2024-01-01", "2024-02-29"))).toBe(true);
    expect(excludes(day as never, bounds("date", "2024-01-01", "2024-03-01"))).toBe(false);
    expect(excludes(amount as never, { min: readValue("number", 12.5) })).toBe(true);
    expect(excludes(amount as never, { min: readValue("number", "12.49") })).toBe(false);
    expect(excludes(code as never, bounds("string", "C", "Z"))).toBe(true);
    expect(excludes(code as never, bounds("string", "B", "Z"))).toBe(false);
    expect(excludes(code as never, { onlyNulls: true })).toBe(true);
    // Range bounds at the file's edges: strict and inclusive operators differ exactly there.
    const onX = (op: "<" | "<=" | ">" | ">=", v: string) => ({
      column: "x",
      kind: "number" as const,
      op,
      values: [readLiteral("number", v) as never],
    });
    const file = { min: readValue("number", 10), max: readValue("number", 20) };
    expect([excludes(onX("<", "10"), file), excludes(onX("<=", "10"), file)]).toEqual([true, false]);
    expect([excludes(onX(">", "20"), file), excludes(onX(">=", "20"), file)]).toEqual([true, false]);
    expect(excludes(onX(">", "20"), { min: readValue("number", 10) })).toBe(false);
  });

  it("replays the workload on the real files' statistics, overall and per day", async () => {
    const spec: TableSpec = {
      fields: [
        ["x", "long"],
        ["region", "string"],
      ],
      partitionColumns: ["region"],
      files: [
        ["a", 0],
        ["a", 100],
        ["b", 0],
        ["b", 100],
      ].map(([region, from]) => ({
        select: `select ${from} + r as x from range(100) t(r)`,
        partition: { region: String(region) },
      })),
    };
    const path = await writeTable("regions", spec);
    const workload = [
      set([{ column: "x", op: "=", values: ["150"] }], 400, { "2026-03-01": 300, "2026-03-02": 100 }),
      set(
        [
          { column: "region", op: "=", values: ["b"] },
          { column: "x", op: "<", values: ["100"] },
        ],
        300,
        { "2026-03-02": 300 },
      ),
    ];
    const result = await score(path, workload);
    expect(result.current.measured_skip_fraction).toBeCloseTo((400 * 0.5 + 300 * 0.75) / 700, 10);
    expect(result.days).toEqual([
      { day: "2026-03-01", queries: 1, bytes_scanned: 300, measured_skip_fraction: 0.5 },
      {
        day: "2026-03-02",
        queries: 2,
        bytes_scanned: 400,
        measured_skip_fraction: (100 * 0.5 + 300 * 0.75) / 400,
      },
    ]);

    // Files without min/max: the partition column still skips; a data column alone measures nothing.
    const bare = await writeTable("regions-bare", { ...spec, stats: false });
    const partitionOnly = await score(bare, workload);
    expect(partitionOnly.current.measured_skip_fraction).toBeCloseTo((300 * 0.5) / 700, 10);
    const dataOnly = await score(bare, [workload[0] as OptimusFilterSet]);
    expect(dataOnly.current.measured_skip_fraction).toBeNull();
    expect(dataOnly.days.map((d) => d.measured_skip_fraction)).toEqual([null, null]);
  });

  it("spreads a sample over at least 32 files where 2 GiB allow, and never over more than 2,000", () => {
    const sized = (n: number, size: number) => Array.from({ length: n }, () => ({ size }));
    expect(spreadCount(sized(25, 1e6), 13)).toBe(25);
    expect(spreadCount(sized(1_000, 1e6), 13)).toBe(32);
    expect(spreadCount(sized(1_000, 2 ** 30), 1)).toBe(2);
    expect(spreadCount(sized(1_000, 2 ** 30), 5)).toBe(5);
    expect(spreadCount(sized(100_000, 1e3), 50_000)).toBe(2_000);
  });

  it("runs as the agent's layout_scoring handler end to end", async () => {
    const path = await writeTable("handler", {
      fields: [
        ["id", "long"],
        ["amount", "decimal(12,2)"],
      ],
      files: files(
        25,
        4_000,
        () => `select g as id, (${scattered(8, 1_000_000)} / 100.0)::decimal(12,2) as amount`,
      ),
    });
    const handler = optimusHandlers({ memory_limit_mb: 256, s3_force_path_style: false }).find(
      (h) => h.kind === "layout_scoring",
    );
    if (!handler) throw new Error("no layout_scoring handler");
    const raw = {
      submission_id: "sub_1",
      run_id: "job_run",
      table_fqn: "lake.payments",
      table_id: "tbl_test",
      uri: `file://${path}`,
      format: "delta",
      current_layout: { type: "linear", columns: ["id"] } satisfies Layout,
      filter_sets: [
        set([{ column: "amount", op: ">=", values: ["9900.00"] }], 50 * TB, { "2026-03-01": 50 * TB }),
      ],
      window_start: "2026-02-23",
      window_end: "2026-03-01",
      sample_max_rows: 50_000,
    };
    const parsed = handler.payload.parse(raw);
    expect(handler.locations(parsed)).toEqual([`file://${path}`]);
    expect(handler.endpoints?.(parsed)).toEqual([]);
    const ctx = jobContext(root, "layout_scoring", parsed);
    const result = LayoutScoringResultSchema.parse(await handler.run(ctx));
    // 13 files would hold the bound, but a sample spreads over at least 32 (here all 25), thinned evenly.
    expect(result.sample_rows).toBe(50_000);
    expect(result.method).toMatch(/^sample of 50000 rows from 25 of 25 files/);
    expect(result.pseudo_files).toBe(25);
    expect(result.current.layout).toEqual({ type: "linear", columns: ["id"] });
    expect(result.recommendation?.layout).toEqual({ type: "linear", columns: ["amount"] });
    // 50 TiB over the 7 days of the window, times the gain.
    const gain =
      (result.recommendation?.expected_skip_fraction ?? 0) - result.current.predicted_skip_fraction;
    expect(result.recommendation?.bytes_saved_per_day).toBeCloseTo((50 * TB * gain) / 7, -3);
    expect(result.recommendation?.rewrite_bytes).toBe(2 * result.total_bytes);
    expect(ctx.reports.map((r) => r.phase)).toContain("simulating");

    // A column the table does not have in the current layout fails the job, not retried.
    const wrong = jobContext(
      root,
      "layout_scoring",
      handler.payload.parse({ ...raw, current_layout: { type: "linear", columns: ["nope"] } }),
    );
    await expect(handler.run(wrong)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/nope/),
    });
  });
});

describe("pseudo-files", () => {
  it("are as many as a crunch's sorted rewrite at the target file size writes, else as many files as the table has", () => {
    const table = { files: Array.from({ length: 40 }, () => ({ size: 2 * 2 ** 20 })) }; // 80 MiB in 40 files
    // The crunch sizes its first sorted rewrite at half the input's bytes: 40 MiB in 8 MiB files.
    expect(filesAfterRewrite(table, { target_file_size_mb: 8 })).toBe(5);
    expect(filesAfterRewrite(table, { target_file_size_mb: 512 })).toBe(1);
    expect(filesAfterRewrite(table, {})).toBe(40);
  });
});
