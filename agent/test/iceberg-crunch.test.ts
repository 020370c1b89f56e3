/**
 * Onboarding and crunch of Iceberg tables through the agent's jobs (`runInspection`, `runCrunch`)
 * on copies of real tables other engines wrote: the rows read from the new snapshot equal the rows
 * before, the new files carry the schema's field ids, the commit is a `replace` snapshot that
 * records the job, and a retried job reports its earlier commit instead of committing again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { systemClock } from "@lakesmith/shared/time";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { runCrunch } from "../src/crunch/run.ts";
import { checksumFiles, compareChecksums, Engine, sqlList } from "../src/engine/index.ts";
import { icebergFormat, type Table } from "../src/formats/index.ts";
import { currentSnapshot, loadIcebergTable, parseJson, stringifyJson } from "../src/iceberg/index.ts";
import { runInspection } from "../src/inspect/run.ts";
import { FileStore, type WriteIfAbsentResult, type WriteSource } from "../src/store/index.ts";
import { copyIcebergFixture } from "./support/iceberg.ts";
import { writeIcebergTable } from "./support/iceberg-tables.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "iceberg-crunch-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function payloadFor(dir: string, extra: Partial<CrunchPayload> = {}): CrunchPayload {
  return { table_id: "tbl_ice", uri: `file://${dir}`, format: "iceberg", ...extra };
}

/** The table as the agent's Iceberg format reads it, with every partition's checksum of its rows. */
async function readTable(store: FileStore, dir: string) {
  const engine = await Engine.open();
  try {
    const table: Table = await icebergFormat.load({
      store,
      engine,
      scratchDir: mkdtempSync(join(root, "load-")),
      clock: systemClock,
      log: pino({ level: "silent" }),
    });
    const byPartition = new Map<string, string[]>();
    for (const f of table.files) {
      const key = JSON.stringify(f.partitionValues);
      byPartition.set(key, [...(byPartition.get(key) ?? []), join(dir, f.key)]);
    }
    const sums = new Map<string, Awaited<ReturnType<typeof checksumFiles>>>();
    for (const [key, files] of byPartition) {
      const values = JSON.parse(key) as Record<string, string | null>;
      sums.set(key, await checksumFiles(engine, files, table.columnsFor(values)));
    }
    const paths = table.files.map((f) => join(dir, f.key));
    const [plain] = await engine.query<{ n: string }>(
      `select count(*)::bigint as n from read_parquet(${sqlList(paths)})`,
    );
    return { table, sums, rows: Number(plain?.n ?? 0), paths };
  } finally {
    engine.close();
  }
}

function expectSameRows(
  before: Awaited<ReturnType<typeof readTable>>,
  after: Awaited<ReturnType<typeof readTable>>,
) {
  expect([...after.sums.keys()].sort()).toEqual([...before.sums.keys()].sort());
  for (const [key, sum] of before.sums) {
    const other = after.sums.get(key);
    if (!other) throw new Error(`partition ${key} is gone`);
    expect(compareChecksums(sum, other), key).toEqual([]);
  }
}

async function metadataFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "metadata"))).filter((n) => n.endsWith(".metadata.json")).sort();
}

describe("Iceberg crunch", () => {
  it("onboards lineitem and crunches it: the same rows in one file with field ids, a replace snapshot that names the job", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, "lineitem"));
    const store = new FileStore(dir);
    const recipe = await runInspection(jobContext(root, "onboarding", payloadFor(dir)), {
      store,
      memoryLimitMb: 256,
    });
    expect(recipe).toMatchObject({ partition_columns: [], partition_pattern: null });

    const before = await readTable(store, dir);
    expect(before.rows).toBe(51_793);
    const ctx = jobContext(root, "crunch", payloadFor(dir));
    const result = await runCrunch("crunch", ctx, { store, memoryLimitMb: 256 });
    expect(result).toMatchObject({
      job_type: "crunch",
      table_version_before: 2,
      committed_version: 3,
      rows_in: 51_793,
      rows_out: 51_793,
      files_after: 1,
    });
    expect(result.files_before).toBe(before.paths.length);

    const after = await readTable(store, dir);
    expectSameRows(before, after);
    expect(after.rows).toBe(51_793);
    expect(after.table.version).toBe(3);

    // The new file names every column by the id the schema gives it.
    const engine = await Engine.open();
    try {
      const ids = await engine.query<{ name: string; field_id: string | null }>(
        `select name, field_id from parquet_schema(${sqlList(after.paths)}) where name <> 'duckdb_schema'`,
      );
      const metadata = await loadIcebergTable(store);
      const schema = metadata.metadata.schemas.find((s) => s.schemaId === metadata.metadata.currentSchemaId);
      expect(ids.map((r) => [r.name, Number(r.field_id)])).toEqual(schema?.fields.map((f) => [f.name, f.id]));
      const snapshot = currentSnapshot(metadata);
      expect(snapshot?.summary).toMatchObject({
        operation: "replace",
        "lakesmith.job-id": ctx.job.id,
        "added-records": "51793",
        "deleted-records": "51793",
      });
    } finally {
      engine.close();
    }

    // The same job again (a retry after a crash) reports its commit and commits nothing more.
    const files = await metadataFiles(dir);
    const again = await runCrunch(
      "crunch",
      jobContext(root, "crunch", payloadFor(dir), { jobId: ctx.job.id }),
      {
        store,
        memoryLimitMb: 256,
      },
    );
    expect(again.committed_version).toBe(3);
    expect(await metadataFiles(dir)).toEqual(files);

    // A new crunch finds the one file it wrote in shape.
    const next = await runCrunch("crunch", jobContext(root, "crunch", payloadFor(dir)), {
      store,
      memoryLimitMb: 256,
    });
    expect(next).toMatchObject({ committed_version: null, files_before: 0, partitions_skipped: 1 });
  });

  it("writes an identity partition's value into the new files where the old ones kept it in the metadata only", async () => {
    const dir = await copyIcebergFixture("partition_integer", join(root, "partition-integer"));
    const store = new FileStore(dir);
    const before = await readTable(store, dir);
    expect(before.table.partitionColumns).toEqual(["partition_col"]);
    const result = await runCrunch("crunch", jobContext(root, "crunch", payloadFor(dir)), {
      store,
      memoryLimitMb: 256,
    });
    expect(result.committed_version).toBe((before.table.version ?? 0) + 1);
    const after = await readTable(store, dir);
    expectSameRows(before, after);

    const engine = await Engine.open();
    try {
      for (const file of after.table.files) {
        const [row] = await engine.query<{ values: string }>(
          `select string_agg(distinct partition_col::varchar, ',') as values from read_parquet(${sqlList([join(dir, file.key)])})`,
        );
        expect(row?.values, file.key).toBe(file.partitionValues.partition_col);
        expect(file.key.startsWith(`data/partition_col=${file.partitionValues.partition_col}/`)).toBe(true);
      }
    } finally {
      engine.close();
    }
  });

  it("loses a race to another writer, reloads, and commits on top of it without losing its rows", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, "race"));
    const store = new RacingStore(dir);
    const before = await readTable(store, dir);
    // Another writer sets a table property at the moment the crunch commits: v3 is theirs.
    store.beforeMetadataWrite = async (key) => {
      store.beforeMetadataWrite = undefined;
      const json = parseJson(await readFile(join(dir, "metadata/v2.metadata.json"), "utf8")) as {
        properties?: Record<string, string>;
      };
      json.properties = { ...(json.properties ?? {}), owner: "someone else" };
      await writeFile(join(dir, key), stringifyJson(json));
    };
    const result = await runCrunch("crunch", jobContext(root, "crunch", payloadFor(dir)), {
      store,
      memoryLimitMb: 256,
    });
    expect(result.committed_version).toBe(4);
    const after = await readTable(store, dir);
    expectSameRows(before, after);
    expect((await loadIcebergTable(store)).metadata.properties.owner).toBe("someone else");
  });
});

/** Generated tables of small files, one per transform, columns every transform can take. */
const COLUMNS = [
  { name: "id", type: "long", sql: "i" },
  { name: "grp", type: "int", sql: "i % 8" },
  { name: "name", type: "string", sql: "'customer-' || (i % 97)" },
  { name: "ts", type: "timestamptz", sql: "timestamptz '2026-01-01 00:00:00+00' + to_hours(i % 72)" },
  { name: "day", type: "date", sql: "date '2025-11-01' + (i % 9)::int" },
  { name: "amount", type: "decimal(10,2)", sql: "(i % 1000) / 100" },
];
const TRANSFORMS: { source: string; transform: string; dateColumn?: string }[] = [
  { source: "grp", transform: "identity" },
  { source: "name", transform: "identity" },
  { source: "id", transform: "bucket[4]" },
  { source: "name", transform: "truncate[10]" },
  { source: "id", transform: "truncate[1000]" },
  { source: "ts", transform: "year" },
  { source: "ts", transform: "month" },
  { source: "ts", transform: "day", dateColumn: "ts_day" },
  { source: "ts", transform: "hour" },
  { source: "day", transform: "day", dateColumn: "day_day" },
  { source: "id", transform: "void" },
];

describe("Iceberg crunch, cancelled, killed, or on a busy table", () => {
  const generated = async (name: string) => {
    const dir = join(root, name);
    await writeIcebergTable({
      dir,
      columns: COLUMNS,
      partition: [{ source: "ts", transform: "day" }],
      rows: 3_000,
      files: 30,
      commits: 2,
    });
    return { dir, store: new RacingStore(dir) };
  };

  it("commits nothing when cancelled", async () => {
    const { dir, store } = await generated("cancelled");
    const files = await metadataFiles(dir);
    const controller = new AbortController();
    const ctx = jobContext(root, "crunch", payloadFor(dir), { signal: controller.signal });
    ctx.progress = (p) => {
      if (p.phase === "rewriting") controller.abort(new Error("cancelled"));
    };
    await expect(runCrunch("crunch", ctx, { store, memoryLimitMb: 256 })).rejects.toThrow();
    expect(await metadataFiles(dir)).toEqual(files);
  });

  it("finishes once when retried after it died before its commit", async () => {
    const { dir, store } = await generated("killed");
    const before = await readTable(store, dir);
    store.beforeMetadataWrite = async () => {
      store.beforeMetadataWrite = undefined;
      throw new Error("the agent's machine went away");
    };
    const first = jobContext(root, "crunch", payloadFor(dir));
    await expect(runCrunch("crunch", first, { store, memoryLimitMb: 256 })).rejects.toThrow("went away");
    expect((await readTable(store, dir)).table.version).toBe(before.table.version);
    const retry = jobContext(root, "crunch", payloadFor(dir), { jobId: first.job.id });
    const result = await runCrunch("crunch", retry, { store, memoryLimitMb: 256 });
    expect(result.committed_version).toBe(before.table.version + 1);
    const after = await readTable(store, dir);
    expectSameRows(before, after);
    const ours = (await loadIcebergTable(store)).metadata.snapshots.filter(
      (s) => s.summary["lakesmith.job-id"] === first.job.id,
    );
    expect(ours).toHaveLength(1);
  });

  it("runs as optimize when another writer's snapshot is within the mutation interval", async () => {
    const { dir, store } = await generated("busy");
    const result = await runCrunch(
      "crunch",
      jobContext(root, "crunch", payloadFor(dir, { mutation_interval_minutes: 30, cluster_columns: ["id"] })),
      { store, memoryLimitMb: 256 },
    );
    expect(result.job_type).toBe("optimize");
    expect(result.job_type_reason).toContain("mutation interval of 30 minutes");
    expect(result.settings?.sort_columns).toEqual([]);
  });
});

describe("Iceberg crunch of every partition transform", () => {
  it.each(TRANSFORMS)("onboards and crunches a table partitioned by $transform($source)", async (part) => {
    const dir = join(root, `t-${part.transform.replace(/\W/g, "")}-${part.source}`);
    const rowsPerFile = 50;
    const rows = 6_000;
    await writeIcebergTable({
      dir,
      columns: COLUMNS,
      partition: [{ source: part.source, transform: part.transform }],
      rows,
      files: rows / rowsPerFile,
      commits: 3,
    });
    const store = new FileStore(dir);
    const recipe = await runInspection(jobContext(root, "onboarding", payloadFor(dir)), {
      store,
      memoryLimitMb: 256,
    });
    if (part.dateColumn) expect(recipe.date_filter_column).toBe(part.dateColumn);

    const before = await readTable(store, dir);
    const result = await runCrunch(
      "crunch",
      jobContext(
        root,
        "crunch",
        payloadFor(dir, {
          recipe,
          ...(part.dateColumn
            ? { date_range: { start: "2020-01-01", end: "2030-12-31" }, backfill_col: part.dateColumn }
            : {}),
        }),
      ),
      { store, memoryLimitMb: 256 },
    );
    expect(result.committed_version).toBe(before.table.version + 1);
    expect(result.rows_in).toBe(rows);
    expect(result.rows_out).toBe(rows);
    const after = await readTable(store, dir);
    expectSameRows(before, after);
    expect(after.rows).toBe(rows);
    expect(after.paths.length).toBeLessThan(before.paths.length);
  });
});

/** A real file store with a hook that runs before each new metadata file is written. */
class RacingStore extends FileStore {
  beforeMetadataWrite: ((key: string) => Promise<void>) | undefined;
  override async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    if (key.endsWith(".metadata.json") && this.beforeMetadataWrite) await this.beforeMetadataWrite(key);
    return super.writeIfAbsent(key, source);
  }
}
