import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlIdent, sqlList, sqlString } from "../src/engine/duckdb.ts";
import {
  applyTransform,
  currentSchema,
  decodeValue,
  encodeValue,
  isPrimitive,
  loadIcebergTable,
  type ManifestEntry,
  type PrimitiveType,
  readSnapshotFiles,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import {
  type GeneratedColumn,
  type GeneratedTableOptions,
  icebergValue,
  icebergValueSql,
  writeIcebergTable,
} from "./support/iceberg-tables.ts";

let engine: Engine;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-tables-test-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});
afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** Columns of every type the generator writes, with nulls in `n`. */
const COLUMNS: GeneratedColumn[] = [
  { name: "id", type: "long", sql: "i" },
  { name: "n", type: "int", sql: "case when i % 10 = 0 then null else i % 1000 - 500 end" },
  { name: "label", type: "string", sql: "'row-' || i" },
  { name: "amount", type: "decimal(10,2)", sql: "i * 1.25 - 100" },
  { name: "score", type: "double", sql: "i / 7.0" },
  { name: "flag", type: "boolean", sql: "i % 3 = 0" },
  { name: "day", type: "date", sql: "DATE '1969-12-28' + (i % 8)::INTEGER" },
  { name: "local", type: "timestamp", sql: "TIMESTAMP '2024-02-28 23:00:00' + to_minutes(i)" },
];

interface Case {
  name: string;
  /** The partition source column `p`. */
  type: string;
  sql: string;
  transform: string;
  partitions: number;
  /** The partition folders expected, where worked out by hand. */
  folders?: string[];
}

const CASES: Case[] = [
  { name: "identity on long", type: "long", sql: "i % 6", transform: "identity", partitions: 6 },
  {
    name: "identity on long with nulls",
    type: "long",
    sql: "case when i % 7 = 0 then null else i % 3 end",
    transform: "identity",
    partitions: 4,
    folders: ["p=null", "p=1", "p=2", "p=0"],
  },
  {
    name: "identity on string",
    type: "string",
    sql: "['a/b', 'x=y', 'plain', 'ü'][1 + i % 4]",
    transform: "identity",
    partitions: 4,
    folders: ["p=a%2Fb", "p=x%3Dy", "p=plain", "p=ü"],
  },
  { name: "bucket[4] on long", type: "long", sql: "i * 7919", transform: "bucket[4]", partitions: 4 },
  {
    name: "truncate[3] on string",
    type: "string",
    sql: "['abcdef', 'äöüß', 'xyz', 'abd'][1 + i % 4] || i",
    transform: "truncate[3]",
    partitions: 4,
    folders: ["p_trunc=abc", "p_trunc=äöü", "p_trunc=xyz", "p_trunc=abd"],
  },
  {
    name: "truncate[10] on long",
    type: "long",
    sql: "i % 50 - 25",
    transform: "truncate[10]",
    partitions: 6,
    folders: ["p_trunc=-30", "p_trunc=-20", "p_trunc=-10", "p_trunc=0", "p_trunc=10", "p_trunc=20"],
  },
  {
    name: "year on timestamptz",
    type: "timestamptz",
    sql: "TIMESTAMPTZ '1969-06-01 00:00:00+00' + to_hours(i * 13)",
    transform: "year",
    partitions: 4,
    folders: ["p_year=1969", "p_year=1970", "p_year=1971", "p_year=1972"],
  },
  {
    name: "month on timestamptz",
    type: "timestamptz",
    sql: "TIMESTAMPTZ '1969-11-20 00:00:00+00' + to_minutes(i * 40)",
    transform: "month",
    partitions: 3,
    folders: ["p_month=1969-11", "p_month=1969-12", "p_month=1970-01"],
  },
  {
    name: "day on timestamptz",
    type: "timestamptz",
    sql: "TIMESTAMPTZ '1969-12-29 12:00:00+00' + to_minutes(i * 5)",
    transform: "day",
    partitions: 8,
  },
  {
    name: "hour on timestamptz",
    type: "timestamptz",
    sql: "TIMESTAMPTZ '1969-12-31 20:30:00+00' + to_seconds(i * 15)",
    transform: "hour",
    partitions: 9,
  },
  {
    name: "day on date",
    type: "date",
    sql: "DATE '1969-12-28' + (i % 8)::INTEGER",
    transform: "day",
    partitions: 8,
    folders: [28, 29, 30, 31]
      .map((d) => `p_day=1969-12-${d}`)
      .concat(["01", "02", "03", "04"].map((d) => `p_day=1970-01-${d}`)),
  },
  {
    name: "void on long",
    type: "long",
    sql: "i",
    transform: "void",
    partitions: 1,
    folders: ["p_null=null"],
  },
];

/** Every check a table of `options` must pass, whatever its partitioning; returns its live data files. */
async function checkTable(options: GeneratedTableOptions): Promise<ManifestEntry[]> {
  const store = new FileStore(options.dir);
  const table = await loadIcebergTable(store);
  const { entries, snapshot } = await readSnapshotFiles(store, table);
  const data = entries.filter((e) => e.content === "data");
  expect(data).toHaveLength(options.files);
  expect(data.reduce((n, e) => n + e.recordCount, 0)).toBe(options.rows);
  const paths = data.map((e) => join(options.dir, e.key ?? ""));
  const [all] = await engine.query<{ n: number }>(
    `select count(*)::INTEGER as n from read_parquet(${sqlList(paths)})`,
  );
  expect(all?.n).toBe(options.rows);

  expect(table.metadata.formatVersion).toBe(options.formatVersion ?? 2);
  const snapshots = table.metadata.snapshots;
  expect(snapshots).toHaveLength(options.commits ?? 1);
  expect(snapshots.map((s) => s.summary.operation)).toEqual(snapshots.map(() => "append"));
  expect(snapshots.map((s) => s.parentSnapshotId)).toEqual([
    null,
    ...snapshots.slice(0, -1).map((s) => s.snapshotId),
  ]);
  expect(snapshot.summary["total-records"]).toBe(String(options.rows));

  const schema = currentSchema(table);
  const spec = table.metadata.partitionSpecs[0]?.fields ?? [];
  for (const [i, entry] of data.entries()) {
    const path = sqlString(paths[i] as string);
    const ids = await engine.query<{ name: string; field_id: number }>(
      `select name, field_id::INTEGER as field_id from parquet_schema(${path}) where field_id is not null`,
    );
    expect(ids).toEqual(schema.fields.map((f) => ({ name: f.name, field_id: f.id })));
    for (const field of spec) {
      const source = schema.fields.find((f) => f.id === field.sourceId);
      if (!source || !isPrimitive(source.type)) throw new Error(`no source column for ${field.name}`);
      const type = source.type;
      const values = await engine.query<{ v: unknown }>(
        `select ${icebergValueSql(type, sqlIdent(source.name))} as v from read_parquet(${path})`,
      );
      const expected = entry.partitionById.get(field.fieldId);
      expect(values.map((r) => applyTransform(field.transform, type, icebergValue(type, r.v)))).toEqual(
        values.map(() => expected),
      );
    }
    await checkMetrics(
      entry,
      paths[i] as string,
      schema.fields.map((f) => [f.id, f.name, f.type as PrimitiveType]),
    );
  }
  return data;
}

/** The entry's counts and bounds are those of the file's columns. */
async function checkMetrics(entry: ManifestEntry, path: string, columns: [number, string, PrimitiveType][]) {
  for (const [id, name, type] of columns) {
    const col = sqlIdent(name);
    const [row] = await engine.query<Record<string, unknown>>(
      `select count(*)::INTEGER as n, count(${col})::INTEGER as c, ${icebergValueSql(type, `min(${col})`)} as lo, ${icebergValueSql(type, `max(${col})`)} as hi from read_parquet(${sqlString(path)})`,
    );
    expect([entry.valueCounts.get(id), entry.nullValueCounts.get(id)]).toEqual([
      row?.n,
      Number(row?.n) - Number(row?.c),
    ]);
    // Bounds round-trip through the single-value encoding.
    const bound = (raw: unknown) => {
      const value = icebergValue(type, raw);
      return value === null ? undefined : decodeValue(type, encodeValue(type, value));
    };
    expect([entry.lowerBounds.get(id), entry.upperBounds.get(id)]).toEqual([bound(row?.lo), bound(row?.hi)]);
  }
}

/** The partition folder of a file, `data/` and the name left off. */
const folderOf = (e: ManifestEntry) => (e.key ?? "").split("/").slice(1, -1).join("/");

describe("writeIcebergTable", () => {
  for (const c of CASES)
    it(`writes a v2 table partitioned by ${c.name}: files of one partition each, tuples that match their rows`, async () => {
      const options: GeneratedTableOptions = {
        dir: join(scratch, c.name.replaceAll(/\W+/g, "-")),
        columns: [...COLUMNS, { name: "p", type: c.type, sql: c.sql }],
        partition: [{ source: "p", transform: c.transform }],
        rows: 2_000,
        files: 12,
      };
      expect(await writeIcebergTable(options)).toEqual({ dir: options.dir, rows: 2_000, files: 12 });
      const data = await checkTable(options);
      const folders = new Set(data.map(folderOf));
      expect(folders.size).toBe(c.partitions);
      if (c.folders) expect([...folders].sort()).toEqual([...c.folders].sort());
    });

  it("writes a v1 table in several appends, partitioned by two fields", async () => {
    const options: GeneratedTableOptions = {
      dir: join(scratch, "v1"),
      formatVersion: 1,
      columns: [...COLUMNS, { name: "region", type: "string", sql: "'r' || (i % 3)" }],
      partition: [
        { source: "region", transform: "identity" },
        { source: "id", transform: "bucket[4]", name: "shard" },
      ],
      rows: 2_000,
      files: 15,
      commits: 3,
      compression: "zstd",
    };
    expect(await writeIcebergTable(options)).toMatchObject({ files: 15 });
    const data = await checkTable(options);
    expect(new Set(data.map(folderOf)).size).toBe(12);
    expect(data.every((e) => /^region=r[0-2]\/shard=[0-3]$/.test(folderOf(e)))).toBe(true);
    expect(data.every((e) => e.dataSequenceNumber === 0)).toBe(true);
  });

  it("writes an unpartitioned table whose files split the rows in order", async () => {
    const options: GeneratedTableOptions = {
      dir: join(scratch, "unpartitioned"),
      columns: COLUMNS,
      partition: [],
      rows: 1_000,
      files: 4,
      commits: 2,
    };
    await writeIcebergTable(options);
    const data = await checkTable(options);
    expect(data.map((e) => e.recordCount)).toEqual([250, 250, 250, 250]);
    expect(data.map((e) => e.lowerBounds.get(1)).sort()).toEqual([0n, 250n, 500n, 750n]);
  });

  it("records the location given, for a table to be uploaded there", async () => {
    const options: GeneratedTableOptions = {
      dir: join(scratch, "located"),
      location: "s3://lake/warehouse/t",
      columns: COLUMNS,
      partition: [{ source: "day", transform: "identity" }],
      rows: 100,
      files: 8,
    };
    await writeIcebergTable(options);
    const data = await checkTable(options);
    expect(data.every((e) => e.path.startsWith("s3://lake/warehouse/t/data/day=19"))).toBe(true);
    const table = await loadIcebergTable(new FileStore(options.dir));
    expect(table.metadata.location).toBe("s3://lake/warehouse/t");
  });

  it("refuses more partitions than files, naming both", async () => {
    const attempt = writeIcebergTable({
      dir: join(scratch, "too-few-files"),
      columns: COLUMNS,
      partition: [{ source: "day", transform: "identity" }],
      rows: 100,
      files: 4,
    });
    await expect(attempt).rejects.toThrow(/fall into 8 partitions, so they fit in 8 to 100 files, not 4/);
  });
});
