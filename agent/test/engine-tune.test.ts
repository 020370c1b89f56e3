import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CrunchSettingsSchema } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_ROW_GROUP_SIZE,
  describeSettings,
  Engine,
  parquetOptions,
  pickTrial,
  reuseSettings,
  rowGroupSize,
  sortCandidates,
  sqlString,
  type TableColumn,
  type Trial,
  tuneSettings,
  writeAllowance,
} from "../src/engine/index.ts";

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-tune-"));
  engine = await Engine.open({ memoryLimitMb: 256 });
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

const columns: TableColumn[] = [
  { name: "at", type: "TIMESTAMPTZ" },
  { name: "country", type: "VARCHAR" },
  { name: "status", type: "VARCHAR" },
  { name: "amount", type: "DECIMAL(12,2)" },
];

/** Small snappy files of rows in time order with countries and statuses mixed. */
async function bin(files: number, rows: number): Promise<string[]> {
  const folder = join(dir, "bin");
  await mkdir(folder, { recursive: true });
  const paths: string[] = [];
  for (let f = 0; f < files; f++) {
    const path = join(folder, `${f}.parquet`);
    await engine.run(`copy (select timestamptz '2024-01-01 00:00:00+00' + to_seconds(i) as at,
        ['US','DE','FR','GB','IN','BR','JP','CA'][1 + (hash(i) % 8)::int] as country,
        ['paid','shipped','cancelled'][1 + (hash(i, 2) % 3)::int] as status,
        ((hash(i, 3) % 100) * 5)::decimal(12,2) as amount
      from range(${f * rows}, ${(f + 1) * rows}) t(i)) to ${sqlString(path)} (format parquet, compression snappy, row_group_size 2048)`);
    paths.push(path);
  }
  return paths;
}

const trial = (bytes: number, ms: number, level = 3): Trial => ({
  settings: {
    compression: "zstd",
    compression_level: level,
    row_group_size: 1,
    sort_columns: [],
    parquet_version: "v1",
  },
  bytes,
  ms,
});

describe("pickTrial", () => {
  it("picks the smallest output among candidates no slower than the allowance, plain when none qualifies", () => {
    expect(pickTrial([trial(100, 10), trial(80, 14, 9), trial(60, 40, 19)], 1.5).bytes).toBe(80);
    expect(pickTrial([trial(100, 10), trial(120, 5), trial(60, 40)], 1.5).bytes).toBe(100);
  });

  it("breaks a tie in size by the tighter dictionary bound, never by plain encoding", () => {
    const bound = (t: Trial, limit: number | false): Trial => ({
      ...t,
      settings: {
        ...t.settings,
        ...(limit === false
          ? { dictionary_encoding: false, dictionary_size_limit: 0 }
          : { dictionary_size_limit: limit }),
      },
    });
    const plain = bound(trial(100, 10), 6144);
    // Slower than the allowance on the sample: with the same bytes, that is noise.
    const tighter = bound(trial(100, 16), 2048);
    const noDictionaries = bound(trial(100, 9), false);
    expect(pickTrial([plain, tighter, noDictionaries], 1.5)).toBe(tighter);
    expect(pickTrial([plain, bound(trial(101, 9), 2048)], 1.5)).toBe(plain);
    expect(pickTrial([plain, noDictionaries], 1.5)).toBe(plain);
    // Same bound, same size (v1 and v2, say): the earlier trial stays.
    expect(pickTrial([plain, bound(trial(100, 8), 6144)], 1.5)).toBe(plain);
  });
});

describe("rowGroupSize", () => {
  it("gives every thread one row group of the bin, within DuckDB's default and the byte cap", () => {
    expect(rowGroupSize(1_111_930, 40, 2)).toBe(557_056);
    expect(rowGroupSize(50_000, 40, 2)).toBe(DEFAULT_ROW_GROUP_SIZE);
    // 24 MB of 40-byte rows.
    expect(rowGroupSize(8_000_000, 40, 2)).toBe(628_736);
    expect(rowGroupSize(8_000_000, 10, 2)).toBe(1_048_576);
    // Two threads' row groups within an eighth of a 256 MB limit: 16 MB each.
    expect(rowGroupSize(8_000_000, 40, 2, 256)).toBe(417_792);
    expect(rowGroupSize(8_000_000, 4_000, 2)).toBe(DEFAULT_ROW_GROUP_SIZE);
  });
});

describe("sortCandidates", () => {
  it("tries the cluster columns, then low-cardinality columns fewest first ending in the cluster columns", () => {
    const keys = sortCandidates({
      clusterColumns: ["at"],
      enumeratedColumns: [],
      distinct: [
        { name: "at", distinct: 90_000 },
        { name: "id", distinct: 100_000 },
        { name: "county", distinct: 2_000 },
        { name: "state", distinct: 55 },
        { name: "flag", distinct: 1 },
        { name: "kind", distinct: 3 },
      ],
      sampleRows: 100_000,
    });
    expect(keys).toEqual([["at"], ["kind", "state", "county", "at"], ["kind", "state", "at"]]);
  });
});

describe("writeAllowance", () => {
  it("leaves the write what the throughput target spares after tuning, validation and noise", () => {
    expect(writeAllowance(0)).toBeCloseTo(1.25 - 0.15 - 0.05);
  });

  it("lets a candidate write as fast as plain however costly validation is", () => {
    expect(writeAllowance(0.2)).toBe(1);
    expect(writeAllowance(0.9)).toBe(1);
  });
});

describe("reuseSettings", () => {
  const measured = {
    compression: "zstd",
    compression_level: 3,
    row_group_size: 524_288,
    sort_columns: ["country"],
    parquet_version: "v2" as const,
    dictionary_encoding: false,
    reason: "measured",
    trials: [{ settings: "zstd level 3, 524288-row groups, parquet v1", bytes: 10, ms: 5 }],
    tuned_with: {
      columns: "at TIMESTAMPTZ, country VARCHAR, status VARCHAR, amount DECIMAL(12,2)",
      cluster_columns: ["at"],
      enumerated_columns: ["country"],
      parquet_v2: true,
      bytes_per_row: 100,
    },
  };
  const same = {
    columns,
    clusterColumns: ["at"],
    enumeratedColumns: ["country"],
    allowParquetV2: true,
    binRows: 300_000,
    threads: 2,
    memoryLimitMb: 512,
  };

  it("keeps what was measured, sizes row groups to this bin, and says where the settings came from", () => {
    const reused = reuseSettings({ settings: measured, version: 7 }, same);
    expect(reused).toMatchObject({
      sort_columns: ["country"],
      parquet_version: "v2",
      dictionary_encoding: false,
      row_group_size: rowGroupSize(300_000, 100, 2, 512),
      trials: [],
      reused_from_version: 7,
      tuned_with: measured.tuned_with,
    });
    expect(reused?.reason).toMatch(/as measured by the crunch committed at version 7/);
  });

  it("measures again when the columns, cluster or enumerated columns, the layout or the v2 choice changed", () => {
    const earlier = { settings: measured, version: 7 };
    expect(
      reuseSettings(earlier, { ...same, columns: [...columns, { name: "x", type: "INTEGER" }] }),
    ).toBeNull();
    expect(reuseSettings(earlier, { ...same, clusterColumns: ["country"] })).toBeNull();
    expect(reuseSettings(earlier, { ...same, enumeratedColumns: [] })).toBeNull();
    expect(reuseSettings(earlier, { ...same, allowParquetV2: false })).toBeNull();
    expect(
      reuseSettings(earlier, { ...same, layout: { type: "zorder", columns: ["country", "at"] } }),
    ).toBeNull();
  });

  it("measures again when the settings were reused themselves; a sort of a larger bin is reused (it is chunked)", () => {
    expect(reuseSettings({ settings: measured, version: 7 }, { ...same, binRows: 10_000_000 })).toMatchObject(
      {
        sort_columns: ["country"],
        row_group_size: rowGroupSize(10_000_000, 100, 2, 512),
      },
    );
    expect(reuseSettings({ settings: { ...measured, reused_from_version: 3 }, version: 7 }, same)).toBeNull();
  });
});

describe("tuneSettings", () => {
  it("measures candidates on a bounded sample and returns valid settings with trials and a reason", async () => {
    const inputs = await bin(6, 20_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch"),
      enumeratedColumns: ["country", "status"],
      sampleRows: 50_000,
      maxSlowdown: 100,
      timeBudgetMs: 60_000,
    });
    expect(settings).toMatchObject(CrunchSettingsSchema.parse(settings));
    // Plain, a tighter dictionary bound, plain encoding, 2 sort keys, 2 zstd levels.
    expect(settings.trials).toHaveLength(7);
    expect(settings.trials.map((t) => t.settings).slice(0, 3)).toEqual([
      "zstd level 3, 122880-row groups, dictionaries up to 6144, parquet v1",
      "zstd level 3, 122880-row groups, dictionaries up to 2048, parquet v1",
      "zstd level 3, 122880-row groups, plain encoding, parquet v1",
    ]);
    expect(settings.trials.some((t) => /sorted by country, status, parquet v1$/.test(t.settings))).toBe(true);
    // The choice always bounds its dictionaries (or has none): never DuckDB's bound that grows with
    // the row group.
    expect(settings.dictionary_encoding === false || settings.dictionary_size_limit !== undefined).toBe(true);
    expect(parquetOptions(settings)).toMatch(/dictionary_size_limit \d+/);
    // Every candidate qualifies (maxSlowdown 100): the choice wrote the smallest sample (one of
    // them, on a tie).
    const smallest = Math.min(...settings.trials.map((t) => t.bytes));
    const chosen = describeSettings(settings).replace(/\d+-row groups/, "");
    const trial = settings.trials.find((t) => t.settings.replace(/\d+-row groups/, "") === chosen);
    expect(trial?.bytes).toBe(smallest);
    expect(settings.trials.every((t) => t.settings.endsWith("parquet v1"))).toBe(true);
    expect(settings.reason).toMatch(/50000-row sample/);
    expect(await readdir(join(dir, "scratch"))).toEqual([]);
  });

  it("sorts by the cluster columns, choosing among candidates sorted by them, even where unsorted is smaller", async () => {
    const inputs = await bin(4, 20_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-cluster"),
      // Sorting by country breaks the time order the rows arrive in: larger files, asked for anyway.
      clusterColumns: ["country", "at"],
      enumeratedColumns: ["country", "status"],
      sampleRows: 40_000,
      maxSlowdown: 100,
      timeBudgetMs: 60_000,
    });
    expect(settings.sort_columns).toEqual(["country", "at"]);
    // Plain, two dictionary trials, the cluster sort, and two zstd levels of the sorted choice: no
    // other sort key competes with the cluster columns.
    const sorted = settings.trials.filter((t) => t.settings.includes("sorted by"));
    expect(sorted.length).toBe(3);
    expect(sorted.every((t) => /sorted by country, at, parquet v1$/.test(t.settings))).toBe(true);
    const chosen = describeSettings(settings).replace(/\d+-row groups/, "");
    const trial = sorted.find((t) => t.settings.replace(/\d+-row groups/, "") === chosen);
    expect(trial?.bytes).toBe(Math.min(...sorted.map((t) => t.bytes)));
    expect(settings.tuned_with?.cluster_columns).toEqual(["country", "at"]);
    expect(settings.reason).not.toMatch(/not applied/);
  });

  it("refuses the cluster columns' sort when it measures over the allowance, and says so and why", async () => {
    const inputs = await bin(4, 20_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-refuse"),
      clusterColumns: ["country"],
      sampleRows: 40_000,
      // No write is that fast: the sort (the mean of two trials) misses the allowance.
      maxSlowdown: 0,
      timeBudgetMs: 60_000,
    });
    expect(settings.sort_columns).toEqual([]);
    expect(settings.reason).toMatch(
      /^cluster columns country not applied \(files left unsorted\): sorting measured \d+\.\d+x plain's write CPU time on the sample \(the mean of two trials, scaled to the rows sorted at once\), over the allowance of 0\.00x; /,
    );
    expect(settings.trials.some((t) => t.settings.includes("sorted by country"))).toBe(true);
  });

  it("applies a Z-order layout the job names even when it measures over the allowance, and says what it cost", async () => {
    const inputs = await bin(4, 20_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-zorder"),
      // The cluster columns give way to the job's layout.
      clusterColumns: ["country"],
      layout: { type: "zorder", columns: ["country", "at"] },
      enumeratedColumns: ["country", "status"],
      sampleRows: 40_000,
      maxSlowdown: 0,
      timeBudgetMs: 60_000,
    });
    expect(settings).toMatchObject({ sort_columns: ["country", "at"], sort_layout: "zorder" });
    expect(settings.reason).toMatch(
      /^layout zorder\(country,at\) applied as asked although sorting measured \d+\.\d+x plain's write CPU time/,
    );
    // No other sort competes: every sorted trial is the Z-order, and the levels were tried in it.
    const sorted = settings.trials.filter((t) => t.settings.includes("sorted by"));
    expect(sorted.length).toBeGreaterThanOrEqual(1);
    expect(sorted.every((t) => t.settings.includes("sorted by zorder(country,at)"))).toBe(true);
    expect(settings.tuned_with?.layout).toEqual({ type: "zorder", columns: ["country", "at"] });
  });

  it("applies a Z-order layout untried on a crunch too small for trials", async () => {
    const inputs = await bin(2, 3_000);
    const small = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-layout-untried"),
      layout: { type: "zorder", columns: ["status", "amount"] },
    });
    expect(small.trials).toEqual([]);
    expect(small).toMatchObject({ sort_columns: ["status", "amount"], sort_layout: "zorder" });
  });

  it("sorts a crunch too small for trials by the cluster columns, untried", async () => {
    const inputs = await bin(2, 3_000);
    const small = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-untried"),
      clusterColumns: ["status", "at"],
    });
    expect(small.trials).toEqual([]);
    expect(small.sort_columns).toEqual(["status", "at"]);
  });

  it("tries Parquet v2 only when allowed", async () => {
    const inputs = await bin(2, 5_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-v2"),
      allowParquetV2: true,
      crunchBytes: 2 ** 40,
      maxSlowdown: 100,
      timeBudgetMs: 60_000,
    });
    // Right after plain and the dictionary trials, before the time box can run out.
    expect(settings.trials.map((t) => t.settings)[3]).toMatch(/parquet v2$/);
    expect(settings.trials.slice(0, 3).every((t) => t.settings.endsWith("parquet v1"))).toBe(true);
  });
});
