import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  CatalogSyncResultSchema,
  type CatalogTestResult,
  CatalogTestResultSchema,
} from "@lakesmith/shared/catalogs";
import { ManualClock } from "@lakesmith/shared/time";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AllowList } from "../src/allow.ts";
import { sizeReader } from "../src/catalogs/index.ts";
import { catalogHandlers } from "../src/handlers/catalogs.ts";
import { HandlerRegistry } from "../src/registry.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";
import { copyIcebergFixture } from "./support/iceberg.ts";
import { jobContext } from "./support/maintenance.ts";
import { SyncPlaneStub } from "./support/sync-plane.ts";
import { startUnityCatalog, type UnityCatalogServer } from "./support/unity-catalog.ts";

const SECRET = "unity-s3cret-81f2-never-printed";
const TOKEN = "dapi-static-0b7e-never-printed";
/** The sum of the `size` of COVID-19_NYT's eight live files. */
const COVID_BYTES = 6_190_485;

let unity: UnityCatalogServer;
let scratch: string;
/** A private copy of the COVID-19_NYT Delta table, which `main.sales.covid` points at. */
let covid: string;
let clock: ManualClock;

function registry(allow: string[]) {
  return new HandlerRegistry(
    catalogHandlers({ allow, memory_limit_mb: 256, s3_force_path_style: false }, { clock }),
  );
}

const oauth = (overrides: Record<string, unknown> = {}) => ({
  type: "workspace",
  workspace_url: unity.url,
  client_id: "sp-agent",
  client_secret: SECRET,
  ...overrides,
});

async function run(
  kind: string,
  payload: Record<string, unknown>,
  allow: string[] = [],
  plane = new SyncPlaneStub(),
) {
  const handler = registry(allow).get(kind);
  if (!handler) throw new Error(`no ${kind} handler`);
  const ctx = jobContext(scratch, kind, handler.payload.parse(payload), { part: plane.part });
  return (await handler.run(ctx)) ?? {};
}

async function test(connection: Record<string, unknown>): Promise<CatalogTestResult> {
  return CatalogTestResultSchema.parse(await run(CATALOG_TEST_KIND, { connection }));
}

const sortedNames = (tables: { full_name: string }[]) => tables.map((t) => t.full_name).sort();

/** A sync's result with the tables its parts carried; `known`: what the plane holds. */
async function sync(
  payload: Record<string, unknown> = {},
  allow: string[] = [],
  known: ReadonlyMap<string, number | null> = new Map(),
) {
  const plane = new SyncPlaneStub(known);
  const result = await run(
    CATALOG_SYNC_KIND,
    { connection_id: "conn_1", connection: oauth(), min_size_bytes: 0, ...payload },
    allow,
    plane,
  );
  return plane.view(CatalogSyncResultSchema.parse(result));
}

const column = (name: string, position: number, partitionIndex?: number) => ({
  name,
  type_name: "STRING",
  type_text: "string",
  position,
  nullable: true,
  ...(partitionIndex === undefined ? {} : { partition_index: partitionIndex }),
});

/**
 * Catalogs `main` (schemas `sales`, `default`, and `information_schema`) and `dev`: a real Delta
 * table, one in S3, a view, a CSV table, a partitioned Delta table whose folder is empty, and
 * enough small tables that pages of two run out several times.
 */
function populate(): void {
  const table = (catalog: string, schema: string, name: string, record: Record<string, unknown> = {}) =>
    unity.state.putTable({
      catalog_name: catalog,
      schema_name: schema,
      name,
      table_type: "MANAGED",
      data_source_format: "DELTA",
      columns: [column("id", 0)],
      ...record,
    });
  table("main", "sales", "covid", {
    storage_location: pathToFileURL(covid).href,
    columns: [column("date", 0), column("county", 1), column("state", 2)],
  });
  table("main", "sales", "events", { table_type: "EXTERNAL", storage_location: "s3://warehouse/events" });
  table("main", "sales", "recent_orders", {
    table_type: "VIEW",
    data_source_format: undefined,
    view_definition: "select * from main.sales.orders where day > current_date() - 7",
  });
  table("main", "sales", "raw_csv", {
    table_type: "EXTERNAL",
    data_source_format: "CSV",
    storage_location: "s3://landing/raw.csv",
  });
  table("main", "sales", "orders", {
    storage_location: pathToFileURL(join(scratch, "lake", "orders")).href,
    columns: [column("id", 0), column("day", 1, 0), column("region", 2, 1)],
  });
  table("main", "information_schema", "tables", { table_type: "VIEW", data_source_format: undefined });
  for (const name of ["t1", "t2", "t3"]) table("main", "default", name);
  table("dev", "scratchpad", "t4", { data_source_format: "PARQUET", table_type: "EXTERNAL" });
}

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "catalogs-unity-"));
  covid = join(scratch, "lake", "covid");
  await cp(join(DELTA_FIXTURES, "COVID-19_NYT"), covid, { recursive: true });
  clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
  unity = await startUnityCatalog({
    token: TOKEN,
    clients: { "sp-agent": SECRET },
    pageSize: 2,
    emptyPages: true,
    clock,
  });
  populate();
});

afterEach(async () => {
  const errors = [...unity.validationErrors];
  await unity.close();
  await rm(scratch, { recursive: true, force: true });
  expect(errors, "every answer the server sent must match the Unity Catalog OpenAPI description").toEqual([]);
});

describe("catalog_test on a Unity Catalog workspace", () => {
  it("lists the catalogs with a service principal's OAuth token", async () => {
    expect(await test(oauth())).toMatchObject({ ok: true, catalogs: ["main", "dev"], message: null });
    expect(unity.calls.filter((c) => c.operation === "getToken")).toHaveLength(1);
  });

  it("lists the catalogs with a static token", async () => {
    const result = await test({ type: "workspace", workspace_url: unity.url, token: TOKEN });
    expect(result).toMatchObject({ ok: true, catalogs: ["main", "dev"] });
    expect(unity.calls.some((c) => c.operation === "getToken")).toBe(false);
  });

  it("answers not ok with the token endpoint's message for a wrong secret, and never the secret", async () => {
    const result = await test(oauth({ client_secret: "wrong-secret-c3" }));
    expect(result).toMatchObject({ ok: false, catalogs: [] });
    expect(result.message).toContain("401 invalid_client: Client authentication failed");
    expect(JSON.stringify(result)).not.toContain("wrong-secret-c3");
  });

  it("answers not ok with Unity's message for a refused static token, and never the token", async () => {
    const result = await test({ type: "workspace", workspace_url: unity.url, token: "dapi-wrong-d4" });
    expect(result.ok).toBe(false);
    expect(result.message).toContain("listCatalogs GET http://127.0.0.1:");
    expect(result.message).toContain("401 UNAUTHENTICATED: Invalid access token or the token has expired.");
    expect(JSON.stringify(result)).not.toContain("dapi-wrong-d4");
  });

  it("answers not ok when the connection has neither a token nor a service principal", async () => {
    const result = await test({ type: "workspace", workspace_url: unity.url, client_id: "sp-agent" });
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining("needs a token") });
    expect(unity.calls).toEqual([]);
  });
});

describe("catalog_sync on a Unity Catalog workspace", () => {
  it("lists every catalog, schema and table across pages, empty pages included", async () => {
    const result = await sync();
    expect(result.catalogs).toEqual(["main", "dev"]);
    expect(result.schemas_count).toBe(3);
    // Schemas are walked side by side: the order across schemas is not the catalog's.
    expect(sortedNames(result.tables)).toEqual([
      "dev.scratchpad.t4",
      "main.default.t1",
      "main.default.t2",
      "main.default.t3",
      "main.sales.covid",
      "main.sales.events",
      "main.sales.orders",
      "main.sales.raw_csv",
      "main.sales.recent_orders",
    ]);
    const empty = unity.calls.filter((c) => c.operation === "listTables" && /page_token=e/.test(c.query));
    expect(empty.length).toBeGreaterThan(0);
    expect(unity.calls.every((c) => c.status === 200)).toBe(true);
  });

  it("takes format, type, location and partitioning from Unity's record", async () => {
    const { tables } = await sync();
    const orders = tables.find((t) => t.name === "orders");
    expect(orders).toMatchObject({
      catalog: "main",
      schema: "sales",
      format: "delta",
      table_type: "MANAGED",
      location: pathToFileURL(join(scratch, "lake", "orders")).href,
      has_partitions: true,
      updated_at: clock.now().getTime(),
      detail: { partition_columns: ["day", "region"], column_count: 3, table_id: expect.any(String) },
    });
    expect(orders?.detail).not.toHaveProperty("columns");
    expect(tables.find((t) => t.name === "t1")).toMatchObject({ has_partitions: false });
    expect(tables.find((t) => t.name === "t4")).toMatchObject({ format: "parquet", table_type: "EXTERNAL" });
  });

  it("reads a Delta table's size from its log where the allow list covers it", async () => {
    const { tables } = await sync({}, [pathToFileURL(join(scratch, "lake")).href]);
    expect(tables.find((t) => t.name === "covid")).toMatchObject({
      size_bytes: COVID_BYTES,
      detail: { size_source: "delta_log", delta_version: 0, live_files: 8 },
    });
    const orders = tables.find((t) => t.name === "orders");
    expect(orders?.size_bytes).toBeNull();
    expect(orders?.detail.size_note).toMatch(/^could not read the size from file:.*orders: .*no Delta log/);
  });

  it("reports a null size and why where the allow list does not cover the table, or there is no log", async () => {
    const { tables } = await sync();
    const size = (name: string) => tables.find((t) => t.name === name);
    expect(size("covid")).toMatchObject({ size_bytes: null });
    expect(size("covid")?.detail.size_note).toMatch(
      /^not read: location 'file:.*' is outside this agent's allow list/,
    );
    expect(size("events")?.detail.size_note).toMatch(/^not read: location 's3:\/\/warehouse\/events'/);
    expect(size("recent_orders")?.detail.size_note).toBe("a view has no data of its own to measure");
    expect(size("raw_csv")?.detail.size_note).toMatch(
      /reads sizes from Delta logs and Iceberg metadata only/,
    );
    expect(tables.every((t) => t.size_bytes === null)).toBe(true);
  });

  it("keeps tables of unknown size and drops measured ones below the threshold", async () => {
    const allow = [pathToFileURL(join(scratch, "lake")).href];
    expect((await sync({ min_size_bytes: COVID_BYTES }, allow)).tables.map((t) => t.name)).toContain("covid");
    const above = await sync({ min_size_bytes: COVID_BYTES + 1 }, allow);
    expect(above.tables.map((t) => t.name)).not.toContain("covid");
    expect(above.tables).toHaveLength(8);
    expect(above.below_min_size).toBe(1);
  });

  it("syncs only the catalog asked for", async () => {
    const result = await sync({ catalog: "dev" });
    expect(result).toMatchObject({ catalogs: ["dev"], schemas_count: 1 });
    expect(result.tables.map((t) => t.full_name)).toEqual(["dev.scratchpad.t4"]);
  });

  it("re-reads in incremental mode only tables whose updated_at changed; unchanged are named, dropped absent", async () => {
    const allow = [pathToFileURL(join(scratch, "lake")).href];
    const first = await sync({}, allow);
    const updatedAt = (name: string) => first.tables.find((t) => t.name === name)?.updated_at ?? null;

    clock.advance(60_000);
    unity.state.putTable({ catalog_name: "main", schema_name: "default", name: "t1", table_type: "MANAGED" });
    unity.state.dropTable("main.default.t2");
    unity.state.putTable({ catalog_name: "main", schema_name: "default", name: "t5", table_type: "MANAGED" });
    // The Delta table's log is gone: an unchanged table must not be read again.
    await rm(covid, { recursive: true });

    const result = await sync(
      {
        mode: "incremental",
      },
      allow,
      new Map(first.tables.map((t) => [t.full_name, updatedAt(t.name)])),
    );
    expect(result.mode).toBe("incremental");
    expect(sortedNames(result.tables)).toEqual(["main.default.t1", "main.default.t5"]);
    expect(result.tables.every((t) => t.updated_at === clock.now().getTime())).toBe(true);
    expect(result).toMatchObject({ tables_count: 2, unchanged_count: 7 });
    expect([...result.unchanged].sort()).toEqual([
      "dev.scratchpad.t4",
      "main.default.t3",
      "main.sales.covid",
      "main.sales.events",
      "main.sales.orders",
      "main.sales.raw_csv",
      "main.sales.recent_orders",
    ]);
  });

  it("replaces the OAuth token shortly before it expires, without a refused request", async () => {
    await unity.close();
    unity = await startUnityCatalog({ clients: { "sp-agent": SECRET }, tokenLifetimeS: 120, clock });
    populate();
    const handler = registry([]).get(CATALOG_SYNC_KIND);
    const payload = handler?.payload.parse({ connection_id: "c", connection: oauth(), min_size_bytes: 0 });
    const plane = new SyncPlaneStub();
    const ctx = jobContext(scratch, CATALOG_SYNC_KIND, payload, { part: plane.part });
    // Each schema's progress report moves the clock on by 40 s (main's two schemas start side by
    // side): the walk outlives a token.
    ctx.progress = () => clock.advance(40_000);
    const result = CatalogSyncResultSchema.parse(await handler?.run(ctx));
    expect(result.tables_count).toBe(9);
    expect(plane.tables).toHaveLength(9);
    expect(unity.calls.filter((c) => c.operation === "getToken")).toHaveLength(2);
    expect(unity.calls.every((c) => c.status === 200)).toBe(true);
  });

  it("fails for good with Unity's message when the credentials are refused", async () => {
    const failure = run(CATALOG_SYNC_KIND, {
      connection_id: "c",
      connection: { type: "workspace", workspace_url: unity.url, token: "dapi-bad-e5" },
      min_size_bytes: 0,
    });
    await expect(failure).rejects.toMatchObject({
      name: "JobError",
      retryable: false,
      message: expect.stringContaining("UNAUTHENTICATED"),
    });
    await expect(failure).rejects.not.toMatchObject({ message: expect.stringContaining("dapi-bad-e5") });
  });
});

describe("table sizes from the table's own metadata", () => {
  it("reads an Iceberg table's size from its current snapshot's summary", async () => {
    const table = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lake", "lineitem"));
    const sizeOf = sizeReader({
      allow: new AllowList([pathToFileURL(join(scratch, "lake")).href]),
      store: {},
      scratchDir: scratch,
      memoryLimitMb: 64,
    });
    expect(await sizeOf(pathToFileURL(table).href, "iceberg")).toMatchObject({
      size_bytes: 1_225_526,
      source: "iceberg_metadata",
      facts: { snapshot_id: "2354745328521181395" },
    });
    expect(await sizeOf(pathToFileURL(covid).href, "delta")).toMatchObject({ size_bytes: COVID_BYTES });
  });
});
