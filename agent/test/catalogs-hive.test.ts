import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  type CatalogTestResult,
  CatalogTestResultSchema,
  type SyncedTable,
} from "@lakesmith/shared/catalogs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AllowList } from "../src/allow.ts";
import { HIVE_BATCH, HiveCatalog } from "../src/catalogs/hive/catalog.ts";
import { openCatalog, sizeReader } from "../src/catalogs/index.ts";
import { catalogHandlers } from "../src/handlers/catalogs.ts";
import { HandlerRegistry } from "../src/registry.ts";
import { HiveMetastoreServer } from "./support/hive-metastore.ts";
import { copyIcebergFixture } from "./support/iceberg.ts";
import { jobContext } from "./support/maintenance.ts";
import { SyncPlaneStub } from "./support/sync-plane.ts";

const PASSWORD = "hms-s3cret-77a1-never-printed";
const login = { username: "lake", password: PASSWORD };
const DDL = 1_767_225_600; // 2026-01-01T00:00:00Z

let metastore: HiveMetastoreServer;
let scratch: string;

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "catalogs-hive-"));
  metastore = await HiveMetastoreServer.start({ sasl: login });
});

afterEach(async () => {
  await metastore.stop();
  await rm(scratch, { recursive: true, force: true });
});

const connection = (overrides: Record<string, unknown> = {}) => ({
  type: "hive_metastore" as const,
  metastore_uri: metastore.uri,
  ...login,
  ...overrides,
});

async function run(kind: string, payload: Record<string, unknown>, plane = new SyncPlaneStub()) {
  const registry = new HandlerRegistry(
    catalogHandlers({ allow: [], memory_limit_mb: 256, s3_force_path_style: false }),
  );
  const handler = registry.get(kind);
  if (!handler) throw new Error(`no ${kind} handler`);
  return handler.run(jobContext(scratch, kind, handler.payload.parse(payload), { part: plane.part }));
}

async function test(overrides: Record<string, unknown> = {}): Promise<CatalogTestResult> {
  return CatalogTestResultSchema.parse(await run(CATALOG_TEST_KIND, { connection: connection(overrides) }));
}

/** Every table a walk reports, by full name; `allow`: what the size reader may list. */
async function walk(allow: string[] = [], catalog?: string) {
  const sizeOf = sizeReader({
    allow: new AllowList(allow),
    store: {},
    scratchDir: scratch,
    memoryLimitMb: 64,
  });
  const schemas: string[] = [];
  const tables = new Map<string, SyncedTable>();
  await openCatalog(connection(), { sizeOf }).walkTables(
    { ...(catalog ? { catalog } : {}), onSchema: (s) => schemas.push(`${s.catalog}.${s.name}`) },
    (walked) => {
      if (walked.changed) tables.set(walked.table.full_name, walked.table);
    },
  );
  return { schemas, tables };
}

/** Files of a text table on disk, with the ones Hive skips. */
async function rawFiles(): Promise<string> {
  const dir = join(scratch, "lake", "raw");
  await mkdir(join(dir, ".hive-staging_1"), { recursive: true });
  await writeFile(join(dir, "part-0.csv"), "a".repeat(300));
  await writeFile(join(dir, "part-1.csv"), "b".repeat(200));
  await writeFile(join(dir, "_SUCCESS"), "");
  await writeFile(join(dir, ".hive-staging_1", "tmp.csv"), "c".repeat(1000));
  return pathToFileURL(dir).href;
}

describe("catalog_test on a Hive Metastore", () => {
  it("answers the one catalog, hive, through a SASL login", async () => {
    expect(await test()).toMatchObject({ ok: true, catalogs: ["hive"], message: null });
  });

  it("answers a wrong password with the metastore's reason, never the password", async () => {
    const result = await test({ password: "not-the-password" });
    expect(result).toMatchObject({ ok: false, catalogs: [] });
    expect(result.message).toBe(
      `Hive Metastore ${metastore.uri} refused the SASL PLAIN login of user 'lake': Error validating the login`,
    );
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
  });

  it("answers an unreachable metastore as such", async () => {
    const uri = metastore.uri;
    await metastore.stop();
    metastore = await HiveMetastoreServer.start();
    const result = await test({ metastore_uri: uri });
    expect(result.ok).toBe(false);
    expect(result.message).toBe(`Hive Metastore ${uri}: cannot connect (connection refused)`);
  });
});

describe("walking a Hive Metastore's tables", () => {
  beforeEach(async () => {
    metastore.registerParquetTable(
      {
        db: "sales",
        name: "orders",
        location: "s3://bucket/orders",
        partitionKeys: [{ name: "day", type: "string" }],
        ddlTime: DDL,
      },
      [
        { values: ["2026-01-01"], totalSize: 1500 },
        { values: ["2026-01-02"], totalSize: 2500 },
      ],
    );
    metastore.registerParquetTable({
      db: "sales",
      name: "events",
      location: "s3://bucket/events",
      totalSize: 5000,
      parameters: { "spark.sql.sources.schema": '{"type":"struct","fields":[]}', comment: "kept" },
    });
    metastore.registerTextTable({ db: "sales", name: "raw", location: await rawFiles() });
    metastore.registerTransactionalTable({
      db: "sales",
      name: "acid",
      location: "s3://bucket/acid",
      totalSize: 10,
    });
    const ice = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lake", "lineitem"));
    metastore.registerIcebergTable({
      db: "lake",
      name: "lineitem",
      location: pathToFileURL(ice).href,
      metadataLocation: `${pathToFileURL(ice).href}/metadata/v2.metadata.json`,
    });
  });

  it("reports each database as a schema and each table with its format, type, partitioning and size", async () => {
    const { schemas, tables } = await walk([pathToFileURL(join(scratch, "lake")).href]);
    expect(schemas.sort()).toEqual(["hive.lake", "hive.sales"]);
    expect([...tables.keys()].sort()).toEqual([
      "hive.lake.lineitem",
      "hive.sales.acid",
      "hive.sales.events",
      "hive.sales.orders",
      "hive.sales.raw",
    ]);
    expect(tables.get("hive.sales.orders")).toMatchObject({
      catalog: "hive",
      schema: "sales",
      name: "orders",
      format: "parquet",
      table_type: "EXTERNAL_TABLE",
      location: "s3://bucket/orders",
      size_bytes: 4000,
      has_partitions: true,
      updated_at: DDL * 1000,
      detail: {
        size_source: "partition_statistics",
        partition_count: 2,
        transactional: false,
        partition_keys: [{ name: "day", type: "string" }],
      },
    });
    expect(tables.get("hive.sales.events")).toMatchObject({
      format: "parquet",
      size_bytes: 5000,
      has_partitions: false,
      detail: { size_source: "table_statistics" },
    });
    const events = tables.get("hive.sales.events")?.detail.parameters as Record<string, string>;
    expect(events.comment).toBe("kept");
    expect(Object.keys(events).some((k) => k.startsWith("spark.sql.sources.schema"))).toBe(false);
    expect(tables.get("hive.sales.raw")).toMatchObject({
      format: "text",
      size_bytes: 500,
      detail: { size_source: "listing", listed_files: 2 },
    });
    expect(tables.get("hive.sales.acid")).toMatchObject({
      format: "parquet",
      table_type: "MANAGED_TABLE",
      detail: { transactional: true },
    });
    expect(tables.get("hive.lake.lineitem")).toMatchObject({
      format: "iceberg",
      size_bytes: 1_225_526,
      detail: {
        size_source: "iceberg_metadata",
        metadata_location: expect.stringMatching(/v2\.metadata\.json$/),
      },
    });
  });

  it("leaves a size it may not list null, with the reason", async () => {
    const { tables } = await walk([]);
    expect(tables.get("hive.sales.raw")).toMatchObject({
      size_bytes: null,
      detail: { size_note: expect.stringMatching(/^not read: /) },
    });
  });

  it("walks nothing for another catalog, everything for hive", async () => {
    expect((await walk([], "main")).tables.size).toBe(0);
    expect((await walk([], "hive")).tables.size).toBe(5);
  });

  it("reads a large database in batches and leaves out a table dropped after the listing", async () => {
    for (let i = 0; i < 2 * HIVE_BATCH + 5; i++)
      metastore.registerParquetTable({
        db: "many",
        name: `t${i}`,
        location: `s3://bucket/t${i}`,
        totalSize: 1,
      });
    metastore.before("get_table_objects_by_name", ([db]) => {
      if (db === "many") metastore.dropTable("many", "t7");
    });
    const { tables } = await walk();
    const many = [...tables.keys()].filter((n) => n.startsWith("hive.many."));
    expect(many).toHaveLength(2 * HIVE_BATCH + 4);
    expect(tables.has("hive.many.t7")).toBe(false);
    const batches = metastore.callsOf("get_table_objects_by_name").filter(([db]) => db === "many");
    expect(batches.map(([, names]) => (names as string[]).length)).toEqual([HIVE_BATCH, HIVE_BATCH, 5]);
  });

  it("reports a view without format or size, and leaves out a database dropped during its walk", async () => {
    metastore.registerView({ db: "sales", name: "recent", sql: "select * from sales.orders" });
    for (let i = 0; i < HIVE_BATCH + 1; i++)
      metastore.registerParquetTable({
        db: "gone",
        name: `t${i}`,
        location: `s3://bucket/g${i}`,
        totalSize: 1,
      });
    metastore.before("get_table_objects_by_name", ([db]) => {
      if (
        db === "gone" &&
        metastore.callsOf("get_table_objects_by_name").filter(([d]) => d === "gone").length === 2
      )
        metastore.dropDatabase("gone");
    });
    const { tables } = await walk();
    expect(tables.get("hive.sales.recent")).toMatchObject({
      format: null,
      table_type: "VIRTUAL_VIEW",
      location: null,
      size_bytes: null,
      detail: { size_note: "a view has no data of its own to measure" },
    });
    expect([...tables.keys()].filter((n) => n.startsWith("hive.gone.")).length).toBe(HIVE_BATCH);
  });

  it("fails the walk with the metastore's refusal of a wrong password", async () => {
    const catalog = new HiveCatalog(connection({ password: "wrong" }), async () => ({
      size_bytes: null,
      note: "",
    }));
    await expect(catalog.walkTables({}, () => undefined)).rejects.toMatchObject({
      name: "HiveMetastoreError",
      reason: "refused",
    });
  });
});

describe("catalog_sync of a Hive Metastore", () => {
  const sync = (overrides: Record<string, unknown> = {}, plane = new SyncPlaneStub()) =>
    run(
      CATALOG_SYNC_KIND,
      { connection_id: "conn_1", connection: connection(overrides), min_size_bytes: 100 },
      plane,
    );

  it("sends the tables at or above the threshold in parts and counts the others", async () => {
    metastore.registerParquetTable({ db: "sales", name: "big", location: "s3://b/big", totalSize: 500 });
    metastore.registerParquetTable({ db: "sales", name: "small", location: "s3://b/small", totalSize: 50 });
    const plane = new SyncPlaneStub();
    const result = await sync({}, plane);
    expect(plane.tables.map((t) => t.full_name)).toEqual(["hive.sales.big"]);
    expect(result).toMatchObject({ catalogs: ["hive"], below_min_size: 1 });
  });

  it("fails for good on a refused login, and for another try when the metastore is unreachable", async () => {
    await expect(sync({ password: "wrong" })).rejects.toMatchObject({
      name: "JobError",
      retryable: false,
      message: expect.stringContaining("Error validating the login"),
    });
    await metastore.stop();
    const gone = metastore.uri;
    metastore = await HiveMetastoreServer.start();
    await expect(sync({ metastore_uri: gone })).rejects.toMatchObject({
      name: "JobError",
      retryable: true,
      message: `Hive Metastore ${gone}: cannot connect (connection refused)`,
    });
  });
});
