import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CrunchSettingsSchema } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  candidateSettings,
  DEFAULT_ROW_GROUP_SIZE,
  Engine,
  pickTrial,
  sqlString,
  type TableColumn,
  type Trial,
  tuneSettings,
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

/** Small snappy files whose rows arrive unsorted by country: sorting by it should pay off. */
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
});

describe("candidateSettings", () => {
  it("tries larger row groups only as far as a row group stays within the byte cap, and sorts only by given columns", () => {
    const wide = candidateSettings({ bytesPerRow: 4_000, clusterColumns: [], enumeratedColumns: [] });
    expect(wide.map((c) => c.row_group_size)).toEqual([
      DEFAULT_ROW_GROUP_SIZE,
      DEFAULT_ROW_GROUP_SIZE,
      DEFAULT_ROW_GROUP_SIZE,
    ]);
    expect(wide.every((c) => c.sort_columns.length === 0 && c.parquet_version === "v1")).toBe(true);
    const narrow = candidateSettings({
      bytesPerRow: 20,
      clusterColumns: ["at"],
      enumeratedColumns: ["country"],
    });
    expect(narrow[1]?.row_group_size).toBe(1_048_576);
    expect(narrow.map((c) => c.sort_columns)).toEqual([[], [], [], ["at"], ["country", "at"]]);
  });
});

describe("tuneSettings", () => {
  it("measures candidates on a bounded sample and returns valid settings with trials and a reason", async () => {
    const inputs = await bin(6, 20_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch"),
      clusterColumns: ["at"],
      enumeratedColumns: ["country", "status"],
      sampleRows: 50_000,
      maxSlowdown: 100,
    });
    expect(CrunchSettingsSchema.parse(settings)).toEqual(settings);
    expect(settings.trials).toHaveLength(5);
    const smallest = Math.min(...settings.trials.map((t) => t.bytes));
    expect(settings.trials.find((t) => t.bytes === smallest)?.settings).toContain(
      `${settings.row_group_size}-row groups`,
    );
    expect(settings.parquet_version).toBe("v1");
    expect(settings.reason).toMatch(/50000-row sample/);
    expect(await readdir(join(dir, "scratch"))).toEqual([]);
  });

  it("tries Parquet v2 only when allowed", async () => {
    const inputs = await bin(2, 5_000);
    const settings = await tuneSettings(engine, {
      inputs,
      columns,
      scratchDir: join(dir, "scratch-v2"),
      allowParquetV2: true,
      maxSlowdown: 100,
    });
    expect(settings.trials.map((t) => t.settings).at(-1)).toMatch(/parquet v2$/);
    expect(settings.trials.slice(0, -1).every((t) => t.settings.endsWith("parquet v1"))).toBe(true);
  });
});
