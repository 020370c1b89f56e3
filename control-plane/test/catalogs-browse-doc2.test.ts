/**
 * Document 2's catalog browse over synced tables: `GET /api/v1/catalogs`, `.../namespaces`,
 * `.../tables` and `.../tables/{table_id}`, for two connections that both have a catalog `main`,
 * with namespaces several levels deep and a table a later sync marked deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId } from "../src/catalogs/ids.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson, HIVE, succeed, syncedTable, syncResult, WORKSPACE } from "./support/catalogs.ts";

let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let unity: string;
let hive: string;
let unityMain: string;
let hiveMain: string;

/** A table in a namespace of any depth: `full_name` is `<catalog>.<namespace>.<name>`. */
const deep = (catalog: string, namespace: string, name: string, extra = {}) =>
  syncedTable(`${catalog}.${namespace}.${name}`, { catalog, schema: namespace, name, ...extra });

const UNITY_MAIN = [
  deep("main", "sales", "Orders", { size_bytes: 9_000, format: "DELTA" }),
  deep("main", "sales", "order_items", { size_bytes: 3_000 }),
  deep("main", "sales", "orderx", { size_bytes: null, format: null }),
  deep("main", "sales.eu", "orders", { size_bytes: 1_000, format: "iceberg" }),
  deep("main", "sales.eu.de", "orders", { size_bytes: 1_000, format: "iceberg" }),
  deep("main", "sales.eu.de", "100%_done", { size_bytes: 500, format: "parquet" }),
  deep("main", "sales-archive", "a_b", { size_bytes: 10 }),
  deep("main", "hr", "people", { size_bytes: 2_000 }),
];
const RETIRED = deep("main", "hr", "retired", { size_bytes: 7_777 });

beforeAll(async () => {
  plane = await startTestPlane();
  admin = adminJson(plane);
  unity = (await admin("POST", "/api/v1/catalog-connections", { name: "unity", ...WORKSPACE })).body.id;
  hive = (await admin("POST", "/api/v1/catalog-connections", { name: "hive", ...HIVE })).body.id;
  const first = (await admin("POST", `/api/v1/catalog-connections/${unity}/sync`)).body.id;
  await succeed(plane, first, syncResult([...UNITY_MAIN, RETIRED, syncedTable("samples.tpch.lineitem")]));
  // A later sync of `main` no longer reports `retired`: it is marked deleted.
  const second = (await admin("POST", `/api/v1/catalog-connections/${unity}/sync?catalog=main`)).body.id;
  await succeed(plane, second, syncResult(UNITY_MAIN));
  const third = (await admin("POST", `/api/v1/catalog-connections/${hive}/sync`)).body.id;
  await succeed(
    plane,
    third,
    syncResult([
      deep("main", "ops", "events", { size_bytes: 40, format: "hive", table_type: "EXTERNAL" }),
      deep("zeta", "z", "t", { size_bytes: 1 }),
    ]),
  );
  const paused = await admin("PUT", `/api/v1/catalog-connections/${hive}`, { is_active: false });
  expect(paused.status, paused.text).toBe(200);
  unityMain = catalogId({ connectionId: unity, catalog: "main" });
  hiveMain = catalogId({ connectionId: hive, catalog: "main" });
});
afterAll(() => plane.close());

const get = async (path: string, status = 200) => {
  const res = await admin("GET", path);
  expect(res.status, res.text).toBe(status);
  return res.body;
};
const tableNames = async (catalog: string, query = "") =>
  (await get(`/api/v1/catalogs/${catalog}/tables${query}`)).items.map(
    (t: { full_name: string }) => t.full_name,
  );

/** Every item of a keyset list, one page of `size` at a time, following the tokens. */
async function walk(path: string, size: number): Promise<unknown[]> {
  const all: unknown[] = [];
  let token: string | null = null;
  const sep = path.includes("?") ? "&" : "?";
  for (let pages = 0; pages < 50; pages++) {
    const page: { items: unknown[]; next_page_token: string | null; page_size: number } = await get(
      `${path}${sep}page_size=${size}${token ? `&page_token=${encodeURIComponent(token)}` : ""}`,
    );
    expect(page.items.length).toBeLessThanOrEqual(size);
    expect(page.page_size).toBe(size);
    all.push(...page.items);
    token = page.next_page_token;
    if (token === null) return all;
  }
  throw new Error("the tokens never ended");
}

describe("GET /api/v1/catalogs", () => {
  it("lists every connection's catalogs, active or not, each (connection, name) with its own id", async () => {
    const body = await get("/api/v1/catalogs");
    const hiveFirst = hive < unity;
    const mains = hiveFirst ? [hive, unity] : [unity, hive];
    expect(body.items.map((c: { name: string; connection_id: string }) => [c.name, c.connection_id])).toEqual(
      [
        ["main", mains[0]],
        ["main", mains[1]],
        ["samples", unity],
        ["zeta", hive],
      ],
    );
    expect(body).toMatchObject({ total: 4, page_size: 100, next_page_token: null });
    const byId = Object.fromEntries(body.items.map((c: { catalog_id: string }) => [c.catalog_id, c]));
    expect(byId[unityMain]).toEqual({
      catalog_id: unityMain,
      name: "main",
      connection_id: unity,
      connection_name: "unity",
      connection_type: "workspace",
      connection_is_active: true,
      tables_count: 8,
      size_bytes: 9_000 + 3_000 + 1_000 + 1_000 + 500 + 10 + 2_000,
    });
    expect(byId[hiveMain]).toMatchObject({
      connection_name: "hive",
      connection_type: "hive_metastore",
      connection_is_active: false,
      tables_count: 1,
      size_bytes: 40,
    });
    expect(unityMain).not.toBe(hiveMain);
    expect(unityMain).toMatch(/^cat_[A-Za-z0-9_-]+$/);
  });

  it("pages with tokens to the same list, and refuses a bad token or page_size with 422", async () => {
    const whole = (await get("/api/v1/catalogs")).items;
    expect(await walk("/api/v1/catalogs", 1)).toEqual(whole);
    expect(await walk("/api/v1/catalogs", 3)).toEqual(whole);
    for (const bad of ["page_token=%25%25", "page_token=bm90IGpzb24", "page_size=0", "page_size=1001"]) {
      const res = await get(`/api/v1/catalogs?${bad}`, 422);
      expect(res.errors[0].path, bad).toBe(bad.split("=")[0]);
    }
    // A token of another list (its key has another shape) is not one of this list.
    const tablesToken = (await get(`/api/v1/catalogs/${unityMain}/tables?page_size=1`)).next_page_token;
    expect((await get(`/api/v1/catalogs?page_token=${tablesToken}`, 422)).errors).toEqual([
      { path: "page_token", message: expect.stringContaining("next_page_token") },
    ]);
  });
});

describe("GET /api/v1/catalogs/{catalog_id}/namespaces", () => {
  it("gives the tree depth first with parents, children and table counts", async () => {
    const body = await get(`/api/v1/catalogs/${unityMain}/namespaces`);
    expect(body.items.map((n: { namespace: string }) => n.namespace)).toEqual([
      "hr",
      "sales",
      "sales.eu",
      "sales.eu.de",
      "sales-archive",
    ]);
    expect(body).toMatchObject({ total: 5, next_page_token: null });
    expect(body.items[1]).toEqual({
      namespace: "sales",
      levels: ["sales"],
      parent: null,
      depth: 1,
      children_count: 1,
      tables_count: 3,
      total_tables_count: 6,
    });
    expect(body.items[3]).toMatchObject({
      namespace: "sales.eu.de",
      levels: ["sales", "eu", "de"],
      parent: "sales.eu",
      depth: 3,
      children_count: 0,
      tables_count: 2,
    });
    // `retired` was marked deleted: hr counts only `people`.
    expect(body.items[0]).toMatchObject({ namespace: "hr", tables_count: 1, total_tables_count: 1 });
  });

  it("restricts to the subtree strictly beneath prefix, by whole levels", async () => {
    const names = async (prefix: string) =>
      (await get(`/api/v1/catalogs/${unityMain}/namespaces?prefix=${prefix}`)).items.map(
        (n: { namespace: string }) => n.namespace,
      );
    expect(await names("sales")).toEqual(["sales.eu", "sales.eu.de"]);
    expect(await names("sales.eu")).toEqual(["sales.eu.de"]);
    expect(await names("sale")).toEqual([]);
    expect(await names("SALES")).toEqual([]);
  });

  it("pages with tokens and gives the other connection's main its own tree", async () => {
    const whole = (await get(`/api/v1/catalogs/${unityMain}/namespaces`)).items;
    expect(await walk(`/api/v1/catalogs/${unityMain}/namespaces`, 2)).toEqual(whole);
    expect(await walk(`/api/v1/catalogs/${unityMain}/namespaces?prefix=sales`, 1)).toEqual(whole.slice(2, 4));
    const other = await get(`/api/v1/catalogs/${hiveMain}/namespaces`);
    expect(other.items).toEqual([expect.objectContaining({ namespace: "ops", tables_count: 1 })]);
    await get(`/api/v1/catalogs/${unityMain}/namespaces?page_token=xyz`, 422);
  });
});

describe("GET /api/v1/catalogs/{catalog_id}/tables", () => {
  it("lists the live tables by full_name with their ids and types", async () => {
    const body = await get(`/api/v1/catalogs/${unityMain}/tables`);
    expect(body.items.map((t: { full_name: string }) => t.full_name)).toEqual(
      UNITY_MAIN.map((t) => t.full_name).sort(),
    );
    expect(body).toMatchObject({ total: 8, page_size: 100, next_page_token: null });
    const orders = body.items.find((t: { full_name: string }) => t.full_name === "main.sales.Orders");
    expect(orders).toEqual({
      table_id: `${unityMain}.sales.Orders`,
      catalog_id: unityMain,
      full_name: "main.sales.Orders",
      namespace: "sales",
      name: "Orders",
      type: "delta",
      table_type: "MANAGED",
      location: "s3://lake/main/sales/Orders",
      size_bytes: 9_000,
      has_partitions: false,
      updated_at: "2026-01-01T00:00:00.000Z",
      synced_at: expect.any(String),
    });
    expect(body.items.find((t: { name: string }) => t.name === "orderx").type).toBeNull();
    expect(await tableNames(hiveMain)).toEqual(["main.ops.events"]);
  });

  it("matches q as a whole-name wildcard, * and ? only, % and _ literally, either case", async () => {
    expect(await tableNames(unityMain, "?q=ord*")).toEqual([
      "main.sales.Orders",
      "main.sales.eu.de.orders",
      "main.sales.eu.orders",
      "main.sales.order_items",
      "main.sales.orderx",
    ]);
    expect(await tableNames(unityMain, "?q=order?")).toEqual([
      "main.sales.Orders",
      "main.sales.eu.de.orders",
      "main.sales.eu.orders",
      "main.sales.orderx",
    ]);
    expect(await tableNames(unityMain, "?q=ORDERS")).toHaveLength(3);
    expect(await tableNames(unityMain, "?q=sales*")).toEqual([]);
    expect(await tableNames(unityMain, "?q=100%25*")).toEqual(["main.sales.eu.de.100%_done"]);
    expect(await tableNames(unityMain, "?q=100_*")).toEqual([]);
    expect(await tableNames(unityMain, "?q=a_b")).toEqual(["main.sales-archive.a_b"]);
    expect(await tableNames(unityMain, "?q=a%25b")).toEqual([]);
  });

  it("filters by namespace prefix (whole levels, beneath included) and by type", async () => {
    expect(await tableNames(unityMain, "?prefix=sales.eu")).toEqual([
      "main.sales.eu.de.100%_done",
      "main.sales.eu.de.orders",
      "main.sales.eu.orders",
    ]);
    expect(await tableNames(unityMain, "?prefix=sales.eu.de&q=o*")).toEqual(["main.sales.eu.de.orders"]);
    expect(await tableNames(unityMain, "?prefix=sales-archive")).toEqual(["main.sales-archive.a_b"]);
    expect(await tableNames(unityMain, "?prefix=sale")).toEqual([]);
    expect(await tableNames(unityMain, "?type=ICEBERG")).toEqual([
      "main.sales.eu.de.orders",
      "main.sales.eu.orders",
    ]);
    expect(await tableNames(unityMain, "?type=delta")).toEqual([
      "main.hr.people",
      "main.sales-archive.a_b",
      "main.sales.Orders",
      "main.sales.order_items",
    ]);
    expect(await tableNames(hiveMain, "?type=hive")).toEqual(["main.ops.events"]);
    const filtered = await get(`/api/v1/catalogs/${unityMain}/tables?type=iceberg&page_size=1`);
    expect(filtered).toMatchObject({ total: 2, page_size: 1, next_page_token: expect.any(String) });
  });

  it("pages across pages with tokens, filters kept, and refuses bad tokens and sizes with 422", async () => {
    const path = `/api/v1/catalogs/${unityMain}/tables`;
    const whole = (await get(path)).items;
    expect(await walk(path, 3)).toEqual(whole);
    expect(await walk(path, 1)).toEqual(whole);
    expect(await walk(`${path}?prefix=sales&q=*o*`, 2)).toEqual(
      whole.filter(
        (t: { namespace: string; name: string }) => t.namespace.startsWith("sales") && /o/i.test(t.name),
      ),
    );
    for (const bad of ["page_token=!!!", "page_token=WyJhIiwiYiJd", "page_size=0", "page_size=x", "type="]) {
      const res = await get(`${path}?${bad}`, 422);
      expect(res.errors[0].path, bad).toBe(bad.split("=")[0]);
    }
  });
});

describe("GET /api/v1/catalogs/{catalog_id}/tables/{table_id}", () => {
  it("gives the table with the catalog's metadata", async () => {
    const id = `${unityMain}.sales.eu.de.100%_done`;
    const body = await get(`/api/v1/catalogs/${unityMain}/tables/${encodeURIComponent(id)}`);
    expect(body).toMatchObject({
      table_id: id,
      catalog_id: unityMain,
      connection_id: unity,
      catalog: "main",
      full_name: "main.sales.eu.de.100%_done",
      namespace: "sales.eu.de",
      name: "100%_done",
      type: "parquet",
      format: "parquet",
      metadata: { owner: "data-eng", properties: { "delta.minReaderVersion": "1" } },
    });
    const listed = (await get(`/api/v1/catalogs/${unityMain}/tables?q=orders&prefix=sales.eu.de`)).items[0];
    const detail = await get(`/api/v1/catalogs/${unityMain}/tables/${listed.table_id}`);
    expect(detail).toMatchObject({ ...listed, metadata: expect.any(Object) });
  });

  it("is a 404 for a deleted table, another catalog's table, and unknown ids", async () => {
    const missing = [
      `/api/v1/catalogs/${unityMain}/tables/${unityMain}.hr.retired`,
      `/api/v1/catalogs/${hiveMain}/tables/${unityMain}.hr.people`,
      `/api/v1/catalogs/${unityMain}/tables/${unityMain}.hr.nobody`,
      `/api/v1/catalogs/${unityMain}/tables/main.hr.people`,
      `/api/v1/catalogs/cat_nope/tables/cat_nope.hr.people`,
      `/api/v1/catalogs/main/tables`,
      `/api/v1/catalogs/${catalogId({ connectionId: unity, catalog: "nope" })}/tables`,
      `/api/v1/catalogs/${catalogId({ connectionId: "con_gone", catalog: "main" })}/namespaces`,
    ];
    for (const path of missing) {
      const res = await admin("GET", path);
      expect(res.status, path).toBe(404);
      expect(res.body.detail, path).toMatch(/GET \/api\/v1\/catalogs/);
    }
  });
});

describe("access", () => {
  it("lets a Viewer and a key with catalogs:read (or write) browse, and no other scope", async () => {
    const viewer = (await plane.userWithRole("Viewer")).token;
    const read = (await plane.apiKey(["catalogs:read"])).key;
    const write = (await plane.apiKey(["catalogs:write"])).key;
    const connections = (await plane.apiKey(["connections:read"])).key;
    const paths = [
      "/api/v1/catalogs",
      `/api/v1/catalogs/${unityMain}/namespaces`,
      `/api/v1/catalogs/${unityMain}/tables`,
      `/api/v1/catalogs/${unityMain}/tables/${unityMain}.hr.people`,
    ];
    for (const path of paths) {
      for (const token of [viewer, read, write])
        expect((await plane.call("GET", path, { token })).status, path).toBe(200);
      expect((await plane.call("GET", path, { token: connections })).status, path).toBe(403);
      expect((await plane.call("GET", path)).status, path).toBe(401);
    }
  });
});
