import { cp, mkdtemp, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DeltaLogError,
  dataFileLocation,
  duckdbColumns,
  encodePath,
  loadSnapshot,
  parseSchema,
  type Snapshot,
  schemaRefusal,
  writeCheckpoint,
} from "../src/delta/index.ts";
import { Engine, sqlList, sqlString } from "../src/engine/duckdb.ts";
import { FileStore } from "../src/store/index.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const FIXTURES = DELTA_FIXTURES;
let engine: Engine;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "delta-snapshot-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});

afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

const load = (table: string, version?: number) =>
  loadSnapshot(new FileStore(join(FIXTURES, table)), engine, { scratchDir: join(scratch, "dl"), version });
const rowsFromStats = (s: Snapshot) => s.files.reduce((n, f) => n + (f.stats?.numRecords ?? 0), 0);
const pad10 = (n: number) => String(n).padStart(10, "0");
const paths = (s: Snapshot) => s.files.map((f) => f.path).sort();

describe("loadSnapshot on real tables", () => {
  it("reads COVID-19_NYT: 8 files whose stats count 1,111,930 rows, as the Parquet files do", async () => {
    const s = await load("COVID-19_NYT");
    expect(s.version).toBe(0);
    expect(s.files).toHaveLength(8);
    expect(rowsFromStats(s)).toBe(1_111_930);
    const files = s.files.map((f) => join(FIXTURES, "COVID-19_NYT", f.path));
    const [row] = await engine.query<{ n: string }>(
      `SELECT count(*) AS n FROM read_parquet(${sqlList(files)})`,
    );
    expect(Number(row?.n)).toBe(1_111_930);
    expect(s.metadata.schema.fields.map((f) => f.name)).toEqual([
      "date",
      "county",
      "state",
      "fips",
      "cases",
      "deaths",
    ]);
    expect(s.commits[0]?.commitInfo?.operation).toBeDefined();
  });

  it("starts from the checkpoint and replays the commits after it (simple_table_with_checkpoint)", async () => {
    const s = await load("simple_table_with_checkpoint");
    expect(s.checkpointVersion).toBe(10);
    expect(s.version).toBe(10);
    expect(s.commits).toHaveLength(0);
    expect(s.files).toHaveLength(11);
  });

  it("gets the same snapshot from a checkpoint as from the JSON commits alone", async () => {
    const copy = await mkdtemp(join(scratch, "json-only-"));
    await cp(join(FIXTURES, "simple_table_with_checkpoint"), copy, { recursive: true });
    await unlink(join(copy, "_delta_log/00000000000000000010.checkpoint.parquet"));
    await unlink(join(copy, "_delta_log/_last_checkpoint"));
    const fromJson = await loadSnapshot(new FileStore(copy), engine, { scratchDir: join(scratch, "dl") });
    const fromCheckpoint = await load("simple_table_with_checkpoint");
    expect(fromJson.checkpointVersion).toBeNull();
    expect(paths(fromCheckpoint)).toEqual(paths(fromJson));
    expect(fromCheckpoint.metadata.id).toBe(fromJson.metadata.id);
    expect(fromCheckpoint.protocol).toEqual(fromJson.protocol);
  });

  it("reads a multi-part checkpoint, and ignores one with a part missing", async () => {
    const copy = await mkdtemp(join(scratch, "multipart-"));
    await cp(join(FIXTURES, "checkpoints"), copy, { recursive: true });
    const store = new FileStore(copy);
    const fromJson = await loadSnapshot(store, engine, { scratchDir: join(scratch, "dl") });
    await writeCheckpoint(store, engine, fromJson, { scratchDir: join(scratch, "dl") });
    const single = join(copy, "_delta_log/00000000000000000012.checkpoint.parquet");
    const part = (i: number, n: number) =>
      sqlString(join(copy, `_delta_log/00000000000000000012.checkpoint.${pad10(i)}.${pad10(n)}.parquet`));
    await engine.run(
      `COPY (SELECT * FROM read_parquet(${sqlString(single)}) WHERE add IS NULL) TO ${part(1, 2)}`,
    );
    await engine.run(
      `COPY (SELECT * FROM read_parquet(${sqlString(single)}) WHERE add IS NOT NULL) TO ${part(2, 2)}`,
    );
    await engine.run(`COPY (SELECT * FROM read_parquet(${sqlString(single)})) TO ${part(1, 3)}`);
    await unlink(single);
    // Commits 0-12 must not be what the snapshot is built from.
    for (let v = 0; v <= 12; v++) await unlink(join(copy, `_delta_log/${String(v).padStart(20, "0")}.json`));
    const fromParts = await loadSnapshot(store, engine, { scratchDir: join(scratch, "dl") });
    expect(fromParts.checkpointVersion).toBe(12);
    expect(paths(fromParts)).toEqual(paths(fromJson));
  });

  it("uses the newest complete checkpoint even when _last_checkpoint is stale", async () => {
    const s = await load("table_failed_last_checkpoint_update");
    expect(s.checkpointVersion).toBe(3);
    expect(s.version).toBe(3);
    expect(s.files).toHaveLength(4);
  });

  it("finds a checkpoint by listing when _last_checkpoint is missing", async () => {
    const s = await load("with_checkpoint_no_last_checkpoint");
    expect(s.checkpointVersion).toBe(2);
    expect(s.version).toBe(3);
    expect(s.commits.map((c) => c.version)).toEqual([3]);
    expect(rowsFromStats(s)).toBe(5);
  });

  it("loads a vacuumed history from its checkpoint and refuses a version whose commits are gone", async () => {
    const s = await load("checkpoints_vacuumed");
    expect(s.checkpointVersion).toBe(10);
    expect(s.files).toHaveLength(12);
    await expect(load("checkpoints_vacuumed", 3)).rejects.toThrow(DeltaLogError);
    await expect(load("checkpoints_vacuumed", 3)).rejects.toThrow(/commit 0 is missing/);
  });

  it("time-travels to an older version", async () => {
    const s = await load("checkpoints", 4);
    expect(s.version).toBe(4);
    expect(s.files).toHaveLength(4);
    const latest = await load("checkpoints");
    expect(latest.files).toHaveLength(12);
    await expect(load("checkpoints", 99)).rejects.toThrow(/version 99 does not exist/);
  });

  it("reads statistics a checkpoint holds only as a struct (stats_parsed)", async () => {
    const s = await load("delta-1.2.1-only-struct-stats");
    expect(s.checkpointVersion).toBe(10);
    const fromCheckpoint = s.files.filter((f) => f.stats?.numRecords === 1);
    expect(fromCheckpoint.length).toBe(12);
    expect(fromCheckpoint.every((f) => f.stats?.minValues !== undefined)).toBe(true);
  });

  it("keeps tombstones with their deletion timestamps, and domain metadata", async () => {
    const s = await load("simple_table");
    expect(s.tombstones).toHaveLength(31);
    expect(s.tombstones.every((t) => typeof t.deletionTimestamp === "number")).toBe(true);
    const withDomains = await load("table-with-domain-metadata");
    expect(withDomains.version).toBe(108);
    expect([...withDomains.domains.keys()].sort()).toContain("delta.rowTracking");
  });

  it("decodes file paths once and maps them to store keys", async () => {
    const s = await load("delta-0.8.0-special-partition");
    expect(paths(s)[0]).toMatch(/^x=A%2FA\/part-/);
    const file = s.files.find((f) => f.partitionValues.x === "A/A");
    expect(file).toBeDefined();
    const store = new FileStore(join(FIXTURES, "delta-0.8.0-special-partition"));
    const location = dataFileLocation(store, file as Snapshot["files"][number]);
    expect(location).toEqual({ key: file?.path });
    expect(await store.head((location as { key: string }).key)).toBeDefined();
    expect(encodePath(file?.path ?? "")).toBe(file?.rawPath);
    expect(dataFileLocation(store, { rawPath: `${store.uri}a%20b.parquet` })).toEqual({ key: "a b.parquet" });
    expect(dataFileLocation(store, { rawPath: "s3://elsewhere/x.parquet" })).toEqual({
      uri: "s3://elsewhere/x.parquet",
    });
  });

  it("reads null partition values as null", async () => {
    const s = await load("delta-0.8.0-null-partition");
    expect(s.files.map((f) => f.partitionValues.k).sort()).toEqual(["A", null]);
  });

  it("says clearly when a folder is not a Delta table", async () => {
    const empty = await mkdtemp(join(scratch, "empty-"));
    await expect(
      loadSnapshot(new FileStore(empty), engine, { scratchDir: join(scratch, "dl") }),
    ).rejects.toMatchObject({ code: "not_a_table" });
  });
});

describe("Delta schema to DuckDB columns", () => {
  it("maps every primitive, decimal and nested type, leaving out partition columns", async () => {
    const schema = parseSchema(
      JSON.stringify({
        type: "struct",
        fields: [
          { name: "b", type: "byte", nullable: true, metadata: {} },
          { name: "s", type: "short", nullable: true, metadata: {} },
          { name: "i", type: "integer", nullable: true, metadata: {} },
          { name: "l", type: "long", nullable: false, metadata: {} },
          { name: "f", type: "float", nullable: true, metadata: {} },
          { name: "d", type: "double", nullable: true, metadata: {} },
          { name: "dec", type: "decimal(38,6)", nullable: true, metadata: {} },
          { name: "str", type: "string", nullable: true, metadata: {} },
          { name: "bin", type: "binary", nullable: true, metadata: {} },
          { name: "dt", type: "date", nullable: true, metadata: {} },
          { name: "ts", type: "timestamp", nullable: true, metadata: {} },
          { name: "ntz", type: "timestamp_ntz", nullable: true, metadata: {} },
          { name: "ok", type: "boolean", nullable: true, metadata: {} },
          {
            name: "nested",
            type: {
              type: "struct",
              fields: [
                {
                  name: "a b",
                  type: { type: "array", elementType: "integer", containsNull: true },
                  nullable: true,
                },
                {
                  name: "m",
                  type: { type: "map", keyType: "string", valueType: "double", valueContainsNull: true },
                  nullable: true,
                },
              ],
            },
            nullable: true,
            metadata: {},
          },
          { name: "part", type: "string", nullable: true, metadata: {} },
        ],
      }),
    );
    expect(duckdbColumns(schema, ["part"])).toEqual([
      { name: "b", type: "TINYINT" },
      { name: "s", type: "SMALLINT" },
      { name: "i", type: "INTEGER" },
      { name: "l", type: "BIGINT" },
      { name: "f", type: "FLOAT" },
      { name: "d", type: "DOUBLE" },
      { name: "dec", type: "DECIMAL(38,6)" },
      { name: "str", type: "VARCHAR" },
      { name: "bin", type: "BLOB" },
      { name: "dt", type: "DATE" },
      { name: "ts", type: "TIMESTAMPTZ" },
      { name: "ntz", type: "TIMESTAMP" },
      { name: "ok", type: "BOOLEAN" },
      { name: "nested", type: 'STRUCT("a b" INTEGER[], "m" MAP(VARCHAR, DOUBLE))' },
    ]);
    // DuckDB accepts every type the mapping produces.
    const columns = duckdbColumns(schema, ["part"]);
    await engine.run(`CREATE TEMP TABLE typed (${columns.map((c) => `"${c.name}" ${c.type}`).join(", ")})`);
  });

  it("refuses a type it can't map, naming the column", async () => {
    const schema = parseSchema(
      '{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]}',
    );
    expect(schemaRefusal(schema)).toMatch(/column 'v' has type 'variant'/);
    expect(() => duckdbColumns(schema, [])).toThrow(/column 'v'/);
    const s = await load("partition-type-primitives");
    expect(schemaRefusal(s.metadata.schema)).toBeNull();
    expect(duckdbColumns(s.metadata.schema, s.metadata.partitionColumns).length).toBeGreaterThan(0);
  });
});
