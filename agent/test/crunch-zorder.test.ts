/**
 * Z-order against linear sorts, measured: a generated table of 200,000 rows with two selective,
 * independent columns (`a`, skewed integers; `b`, uniform strings) in 20 files of random order is
 * rewritten three ways by the crunch's own bin rewrite (linear on a, linear on b, zorder(a,b)) into
 * 50 files each. From the written files' Parquet statistics (per-file min/max, read with DuckDB's
 * `parquet_metadata`) a mixed workload of range predicates (on a alone, on b alone, on both) is
 * replayed, counting the files a reader must open. The figures are printed; docs/benchmarks.md
 * keeps them ("Z-order vs linear sorts").
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchSettings, Layout } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Phases } from "../src/crunch/metrics.ts";
import { rewriteBin } from "../src/crunch/rewrite.ts";
import {
  compareChecksums,
  Engine,
  PLAIN_SETTINGS,
  sortSettingsOf,
  sqlList,
  sqlString,
  type TableColumn,
} from "../src/engine/index.ts";
import type { TableFile } from "../src/formats/index.ts";
import { FileStore } from "../src/store/index.ts";

const ROWS = 200_000;
const INPUT_FILES = 20;
const OUTPUT_FILES = 50;
const COLUMNS: TableColumn[] = [
  { name: "id", type: "BIGINT" },
  { name: "a", type: "INTEGER" },
  { name: "b", type: "VARCHAR" },
  { name: "payload", type: "VARCHAR" },
];

const root = mkdtempSync(join(tmpdir(), "crunch-zorder-"));
let engine: Engine;
let inputs: TableFile[];
beforeAll(async () => {
  engine = await Engine.open({ memoryLimitMb: 512, tempDir: join(root, "spill") });
  // Rows in a random order (by hash), so no input file covers a narrow range of a or b.
  inputs = [];
  mkdirSync(join(root, "in"));
  for (let f = 0; f < INPUT_FILES; f++) {
    const key = `in/part-${f}.parquet`;
    await engine.run(
      `copy (select id, floor(pow((hash(id, 1) % 1000000) / 1e6, 3) * 1000000)::integer as a,
               'b-' || lpad((hash(id, 2) % 1000000)::varchar, 6, '0') as b,
               md5(id::varchar) as payload
             from (select hash(i, 9) as h, i as id from range(${ROWS}) t(i))
             where h % ${INPUT_FILES} = ${f}) to ${sqlString(join(root, key))} (format parquet, compression snappy)`,
    );
    inputs.push({
      key,
      path: key,
      size: (await stat(join(root, key))).size,
      rows: undefined,
      partitionValues: {},
    });
  }
});
afterAll(() => {
  engine.close();
  rmSync(root, { recursive: true, force: true });
});

/** The bin rewritten in `layout` into about `OUTPUT_FILES` files; its files' paths. */
async function rewrite(layout: Layout, name: string): Promise<string[]> {
  const settings: CrunchSettings = {
    ...PLAIN_SETTINGS,
    ...sortSettingsOf(layout),
    reason: "test",
    trials: [],
  };
  const bytes = inputs.reduce((n, f) => n + f.size, 0);
  const rewritten = await rewriteBin(engine, new Phases(), {
    store: new FileStore(root),
    bin: inputs,
    inputs: inputs.map((f) => join(root, f.key)),
    columns: COLUMNS,
    settings,
    fieldIds: null,
    // At an output ratio of 1, the bin's bytes over the target is the number of files.
    targetBytes: bytes / OUTPUT_FILES,
    outputRatio: 1,
    binDir: join(root, name),
  });
  expect(compareChecksums(rewritten.before, rewritten.after)).toEqual([]);
  return rewritten.files.map((f) => f.path);
}

interface FileRange {
  a: [number, number];
  b: [string, string];
}

/** Each file's min and max of a and b, from its Parquet statistics (no data read). */
async function fileRanges(files: string[]): Promise<FileRange[]> {
  const rows = await engine.query<{ file: string; amin: number; amax: number; bmin: string; bmax: string }>(
    `select file_name as file,
       min(try_cast(stats_min_value as integer)) filter (where path_in_schema = 'a') as amin,
       max(try_cast(stats_max_value as integer)) filter (where path_in_schema = 'a') as amax,
       min(stats_min_value) filter (where path_in_schema = 'b') as bmin,
       max(stats_max_value) filter (where path_in_schema = 'b') as bmax
     from parquet_metadata(${sqlList(files)}) group by file_name`,
  );
  expect(rows.length).toBe(files.length);
  return rows.map((r) => ({ a: [r.amin, r.amax], b: [r.bmin, r.bmax] }));
}

type Query = { a?: [number, number]; b?: [string, string] };

/**
 * The workload: 30 range predicates on a, 30 on b, 30 on both. Bounds are the data's own quantiles,
 * so each one-column predicate selects 2% of the rows and each two-column one 15% of each column
 * (about 2% together), at positions spread over the whole range.
 */
async function workload(): Promise<{ name: string; queries: Query[] }[]> {
  const steps = Array.from({ length: 101 }, (_, i) => i / 100);
  const [row] = await engine.query<{ qa: number[]; qb: string[] }>(
    `select quantile_disc(a, [${steps.join(", ")}]) as qa, quantile_disc(b, [${steps.join(", ")}]) as qb
     from read_parquet(${sqlList(inputs.map((f) => join(root, f.key)))})`,
  );
  const qa = row?.qa ?? [];
  const qb = row?.qb ?? [];
  const range = <T>(q: T[], start: number, width: number): [T, T] => [
    q[start] as T,
    q[Math.min(100, start + width)] as T,
  ];
  const starts = Array.from({ length: 30 }, (_, i) => (i * 37) % 98);
  return [
    { name: "a alone", queries: starts.map((s) => ({ a: range(qa, s, 2) })) },
    { name: "b alone", queries: starts.map((s) => ({ b: range(qb, (s * 7) % 98, 2) })) },
    {
      name: "a and b",
      queries: starts.map((s) => ({ a: range(qa, s % 85, 15), b: range(qb, (s * 11) % 85, 15) })),
    },
  ];
}

/** Files a reader must open for `query`: those whose ranges overlap every predicate. */
function filesRead(files: FileRange[], query: Query): number {
  const overlaps = <T>(r: [T, T], q: [T, T] | undefined) => !q || (r[0] <= q[1] && r[1] >= q[0]);
  return files.filter((f) => overlaps(f.a, query.a) && overlaps(f.b, query.b)).length;
}

describe("Z-order vs linear sorts", () => {
  it("skips more files over a mixed workload than either linear sort, from the written files' statistics", async () => {
    const layouts: { name: string; layout: Layout }[] = [
      { name: "linear(a)", layout: { type: "linear", columns: ["a"] } },
      { name: "linear(b)", layout: { type: "linear", columns: ["b"] } },
      { name: "zorder(a,b)", layout: { type: "zorder", columns: ["a", "b"] } },
    ];
    const groups = await workload();
    const results: Record<string, Record<string, number> & { files: number; total: number }> = {};
    for (const { name, layout } of layouts) {
      const files = await fileRanges(await rewrite(layout, name.replace(/\W/g, "-")));
      expect(files.length).toBe(OUTPUT_FILES);
      const read = Object.fromEntries(
        groups.map((g) => [g.name, g.queries.reduce((n, q) => n + filesRead(files, q), 0)]),
      );
      const total = Object.values(read).reduce((n, v) => n + v, 0);
      results[name] = { ...read, files: files.length, total };
    }
    const queries = groups.reduce((n, g) => n + g.queries.length, 0);
    console.log(
      `files read of ${OUTPUT_FILES} per layout, summed over ${queries} queries (30 per kind), ${ROWS} rows:\n` +
        Object.entries(results)
          .map(
            ([name, r]) =>
              `  ${name.padEnd(12)} a alone ${r["a alone"]}, b alone ${r["b alone"]}, a and b ${r["a and b"]}: ` +
              `total ${r.total} (${(r.total / queries).toFixed(1)} files a query)`,
          )
          .join("\n"),
    );
    const z = results["zorder(a,b)"];
    const la = results["linear(a)"];
    const lb = results["linear(b)"];
    if (!z || !la || !lb) throw new Error("a layout is missing");
    // The measurement can go either way: each linear sort is best on its own column alone...
    expect(la["a alone"]).toBeLessThan(z["a alone"] as number);
    expect(lb["b alone"]).toBeLessThan(z["b alone"] as number);
    // ...and Z-order wins the mixed workload.
    expect(z.total).toBeLessThan(la.total);
    expect(z.total).toBeLessThan(lb.total);
  });
});
