/**
 * Browsing a connection's synced tables: `GET .../catalogs`, `.../catalogs/{catalog_name}/schemas`,
 * `.../tables` with every filter and sort (between syncs from the order kept in memory, while one
 * runs from SQL: the same answers), and `.../tables/{full_name}` with the catalog's detail.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  adminJson,
  lease,
  sendParts,
  succeed,
  syncedTable,
  syncResult,
  WORKSPACE,
} from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-07-01T00:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let id: string;
let emptyId: string;
const day = (d: number) => Date.parse(`2026-06-${String(d).padStart(2, "0")}T00:00:00Z`);

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  id = (await admin("POST", "/api/v1/catalog-connections", { name: "browse", ...WORKSPACE })).body.id;
  emptyId = (await admin("POST", "/api/v1/catalog-connections", { name: "empty", ...WORKSPACE })).body.id;
  const first = (await admin("POST", `/api/v1/catalog-connections/${id}/sync`)).body.id;
  await succeed(
    plane,
    first,
    syncResult([
      syncedTable("main.sales.Orders", { size_bytes: 9_000, has_partitions: true, updated_at: day(5) }),
      syncedTable("main.sales.order_items", { size_bytes: 3_000, has_partitions: true, updated_at: day(7) }),
      syncedTable("main.sales.orderx", { size_bytes: null, has_partitions: null, updated_at: null }),
      syncedTable("main.hr.people", { size_bytes: 1_000, format: "DELTA", updated_at: day(1) }),
      syncedTable("main.hr.100%_done", { size_bytes: 2_000, format: "parquet", table_type: "EXTERNAL" }),
      syncedTable("samples.tpch.lineitem", { size_bytes: 50_000, format: "iceberg", table_type: "ICEBERG" }),
      syncedTable("samples.tpch.gone", { size_bytes: 10 }),
    ]),
  );
  // A second sync a day later: `gone` disappears, `lineitem` is confirmed later than the rest.
  clock.advance(86_400_000);
  const second = (await admin("POST", `/api/v1/catalog-connections/${id}/sync?catalog=samples`)).body.id;
  await succeed(
    plane,
    second,
    syncResult([
      syncedTable("samples.tpch.lineitem", { size_bytes: 50_000, format: "iceberg", table_type: "ICEBERG" }),
    ]),
  );
});
afterAll(() => plane.close());

const tables = async (query = "") => {
  const res = await admin("GET", `/api/v1/catalog-connections/${id}/tables${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { total: number; offset: number; limit: number; items: Record<string, unknown>[] };
};
const names = async (query = "") => (await tables(query)).items.map((t) => t.full_name);

describe("catalogs and schemas", () => {
  it("lists the catalogs of the live tables with their counts", async () => {
    const res = await admin("GET", `/api/v1/catalog-connections/${id}/catalogs`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { name: "main", schemas_count: 2, tables_count: 5 },
        { name: "samples", schemas_count: 1, tables_count: 1 },
      ],
      total: 2,
      offset: 0,
      limit: 100,
    });
    const page = (await admin("GET", `/api/v1/catalog-connections/${id}/catalogs?offset=1&limit=1`)).body;
    expect(page).toMatchObject({ total: 2, items: [{ name: "samples" }] });
    expect((await admin("GET", `/api/v1/catalog-connections/${emptyId}/catalogs`)).body.total).toBe(0);
  });

  it("lists a catalog's schemas, 404 for a catalog with no synced table or an unknown connection", async () => {
    const res = await admin("GET", `/api/v1/catalog-connections/${id}/catalogs/main/schemas`);
    expect(res.body).toEqual({
      items: [
        { catalog: "main", name: "hr", tables_count: 2 },
        { catalog: "main", name: "sales", tables_count: 3 },
      ],
      total: 2,
      offset: 0,
      limit: 100,
    });
    const missing = await admin("GET", `/api/v1/catalog-connections/${id}/catalogs/nope/schemas`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("'nope'");
    expect((await admin("GET", "/api/v1/catalog-connections/con_missing/catalogs")).status).toBe(404);
    expect((await admin("GET", "/api/v1/catalog-connections/con_missing/catalogs/main/schemas")).status).toBe(
      404,
    );
  });
});

describe("the table list", () => {
  it("lists live tables by full_name with their fields, in the list shape", async () => {
    const page = await tables();
    expect(page).toMatchObject({ total: 6, offset: 0, limit: 100 });
    expect(page.items.map((t) => t.full_name)).toEqual([
      "main.hr.100%_done",
      "main.hr.people",
      "main.sales.Orders",
      "main.sales.order_items",
      "main.sales.orderx",
      "samples.tpch.lineitem",
    ]);
    expect(page.items[2]).toEqual({
      full_name: "main.sales.Orders",
      catalog: "main",
      schema: "sales",
      name: "Orders",
      format: "delta",
      table_type: "MANAGED",
      location: "s3://lake/main/sales/Orders",
      size_bytes: 9_000,
      has_partitions: true,
      updated_at: "2026-06-05T00:00:00.000Z",
      synced_at: "2026-07-01T00:00:00.000Z",
      deleted_at: null,
    });
    expect(page.items[2]).not.toHaveProperty("detail");
  });

  it.each([
    ["catalog", "?catalog=samples", ["samples.tpch.lineitem"]],
    ["schema", "?catalog=main&schema=hr", ["main.hr.100%_done", "main.hr.people"]],
    [
      "prefix of the name, either case",
      "?prefix=ORDER",
      ["main.sales.Orders", "main.sales.order_items", "main.sales.orderx"],
    ],
    ["a prefix whose _ is literal", "?prefix=order_", ["main.sales.order_items"]],
    [
      "search within the full name",
      "?search=SALES.ORD",
      ["main.sales.Orders", "main.sales.order_items", "main.sales.orderx"],
    ],
    ["a search whose % is literal", "?search=100%25", ["main.hr.100%_done"]],
    [
      "format, either case",
      "?format=Delta",
      ["main.hr.people", "main.sales.Orders", "main.sales.order_items", "main.sales.orderx"],
    ],
    ["table_type", "?table_type=external", ["main.hr.100%_done"]],
    [
      "a minimum size (unknown sizes left out)",
      "?min_size_bytes=3000",
      ["main.sales.Orders", "main.sales.order_items", "samples.tpch.lineitem"],
    ],
    [
      "a size range",
      "?min_size_bytes=1500&max_size_bytes=9000",
      ["main.hr.100%_done", "main.sales.Orders", "main.sales.order_items"],
    ],
    ["partitioned tables", "?has_partitions=true", ["main.sales.Orders", "main.sales.order_items"]],
    [
      "unpartitioned tables",
      "?has_partitions=false",
      ["main.hr.100%_done", "main.hr.people", "samples.tpch.lineitem"],
    ],
    [
      "several filters at once",
      "?catalog=main&has_partitions=true&max_size_bytes=5000",
      ["main.sales.order_items"],
    ],
  ])("filters by %s", async (_what, query, expected) => {
    const page = await tables(query);
    expect(page.items.map((t) => t.full_name)).toEqual(expected);
    expect(page.total).toBe(expected.length);
  });

  it("includes tables marked deleted only when asked", async () => {
    expect(await names("?catalog=samples")).toEqual(["samples.tpch.lineitem"]);
    const all = await tables("?catalog=samples&include_deleted=true");
    expect(all.items.map((t) => t.full_name)).toEqual(["samples.tpch.gone", "samples.tpch.lineitem"]);
    expect(all.items[0]?.deleted_at).toBe("2026-07-02T00:00:00.000Z");
  });

  it.each([
    [
      "size_bytes",
      "asc",
      [
        "main.hr.people",
        "main.hr.100%_done",
        "main.sales.order_items",
        "main.sales.Orders",
        "samples.tpch.lineitem",
        "main.sales.orderx",
      ],
    ],
    [
      "size_bytes",
      "desc",
      [
        "samples.tpch.lineitem",
        "main.sales.Orders",
        "main.sales.order_items",
        "main.hr.100%_done",
        "main.hr.people",
        "main.sales.orderx",
      ],
    ],
    [
      "name",
      "asc",
      [
        "main.hr.100%_done",
        "main.sales.Orders",
        "samples.tpch.lineitem",
        "main.sales.order_items",
        "main.sales.orderx",
        "main.hr.people",
      ],
    ],
    [
      "updated_at",
      "desc",
      [
        "main.sales.order_items",
        "main.sales.Orders",
        "main.hr.people",
        "main.hr.100%_done",
        "samples.tpch.lineitem",
        "main.sales.orderx",
      ],
    ],
    [
      "synced_at",
      "desc",
      [
        "samples.tpch.lineitem",
        "main.hr.100%_done",
        "main.hr.people",
        "main.sales.Orders",
        "main.sales.order_items",
        "main.sales.orderx",
      ],
    ],
    [
      "full_name",
      "desc",
      [
        "samples.tpch.lineitem",
        "main.sales.orderx",
        "main.sales.order_items",
        "main.sales.Orders",
        "main.hr.people",
        "main.hr.100%_done",
      ],
    ],
  ])("sorts by %s %s, unknown values last, ties by full_name", async (key, order, expected) => {
    expect(await names(`?sort_by=${key}&sort_order=${order}`)).toEqual(expected);
  });

  it("pages with offset and limit after filtering and sorting", async () => {
    const page = await tables("?sort_by=size_bytes&sort_order=desc&offset=1&limit=2");
    expect(page).toMatchObject({ total: 6, offset: 1, limit: 2 });
    expect(page.items.map((t) => t.full_name)).toEqual(["main.sales.Orders", "main.sales.order_items"]);
  });

  it.each([
    "?limit=1001",
    "?limit=0",
    "?sort_by=size",
    "?sort_order=up",
    "?min_size_bytes=-1",
    "?max_size_bytes=big",
    "?has_partitions=yes",
    "?include_deleted=1",
    "?prefix=",
  ])("refuses %s with 422", async (query) => {
    expect((await admin("GET", `/api/v1/catalog-connections/${id}/tables${query}`)).status).toBe(422);
  });

  it("answers 404 for an unknown connection, and an empty page for one never synced", async () => {
    expect((await admin("GET", "/api/v1/catalog-connections/con_missing/tables")).status).toBe(404);
    expect((await admin("GET", `/api/v1/catalog-connections/${emptyId}/tables`)).body).toEqual({
      items: [],
      total: 0,
      offset: 0,
      limit: 100,
    });
  });
});

describe("one table", () => {
  it("answers the table with the catalog's detail", async () => {
    const res = await admin("GET", `/api/v1/catalog-connections/${id}/tables/main.sales.Orders`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      connection_id: id,
      full_name: "main.sales.Orders",
      size_bytes: 9_000,
      detail: { table_id: "uc-Orders", owner: "data-eng", properties: { "delta.minReaderVersion": "1" } },
    });
    const encoded = await admin(
      "GET",
      `/api/v1/catalog-connections/${id}/tables/${encodeURIComponent("main.hr.100%_done")}`,
    );
    expect(encoded.body.full_name).toBe("main.hr.100%_done");
  });

  it("answers 404 for a name never synced and for an unknown connection", async () => {
    const res = await admin("GET", `/api/v1/catalog-connections/${id}/tables/main.sales.nope`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain("main.sales.nope");
    expect((await admin("GET", "/api/v1/catalog-connections/con_missing/tables/a.b.c")).status).toBe(404);
  });
});

describe("the table list while a sync writes it", () => {
  const QUERIES = [
    "",
    "?offset=2&limit=3",
    "?catalog=main&schema=hr",
    "?prefix=order_",
    "?search=SALES.ORD&sort_by=size_bytes",
    "?format=delta&table_type=managed",
    "?min_size_bytes=2000&sort_by=updated_at",
    "?max_size_bytes=3000&sort_by=size_bytes&sort_order=desc&offset=1",
    "?has_partitions=true&sort_by=name&sort_order=desc",
    "?include_deleted=true&sort_by=synced_at",
    "?sort_by=updated_at&sort_order=desc&limit=2&offset=3",
  ];

  it("answers from SQL as from the order kept between syncs, and shows a part as soon as it lands", async () => {
    const between = [];
    for (const query of QUERIES) between.push(await tables(query));
    const job = await lease(plane, (await admin("POST", `/api/v1/catalog-connections/${id}/sync`)).body.id);
    expect((await admin("GET", `/api/v1/catalog-connections/${id}`)).body.sync_status).toBe("running");
    for (const [i, query] of QUERIES.entries()) expect(await tables(query), query).toEqual(between[i]);
    await sendParts(plane, job, [{ tables: [syncedTable("main.hr.zeta", { size_bytes: 2_500 })] }]);
    expect(await names("?catalog=main&schema=hr")).toEqual([
      "main.hr.100%_done",
      "main.hr.people",
      "main.hr.zeta",
    ]);
    await succeed(plane, job, syncResult([]).result);
    // The sync saw only zeta: the order kept for the new state says so, with its total.
    expect(await tables()).toMatchObject({ total: 1, items: [{ full_name: "main.hr.zeta" }] });
    expect((await tables("?include_deleted=true")).total).toBe(8);
  });
});
