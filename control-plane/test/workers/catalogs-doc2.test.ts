// Document 2's catalog browse through the Worker build on D1: a sync completed by an answering
// agent, then the catalogs listed, paged by token, and a catalog's namespaces and tables read.
import { describe, expect, it } from "vitest";
import { answeringAgent, type Json, json, until } from "./support/client.ts";

function table(catalog: string, schema: string, name: string, size: number): Json {
  return {
    full_name: `${catalog}.${schema}.${name}`,
    catalog,
    schema,
    name,
    format: "ICEBERG",
    table_type: "MANAGED",
    location: `s3://lake/${schema}/${name}`,
    size_bytes: size,
    has_partitions: false,
    updated_at: 1_767_225_600_000,
    detail: { owner: "ops" },
  };
}

const TABLES = [
  table("main", "sales", "orders", 300),
  table("main", "sales.eu", "orders", 200),
  table("main", "sales.eu", "returns", 100),
  table("lake", "raw", "events", 5),
];

describe("document 2 catalog browse in workerd", () => {
  it("lists catalogs and a catalog's namespaces and tables on D1, paged by token", async () => {
    await answeringAgent(
      "workerd-catalogs-doc2",
      { kinds: ["catalog_sync"], capabilities: [], allow: [], endpoints: ["https://uc2.workerd.test"] },
      () => ({
        parts: [{ tables: TABLES }],
        result: {
          mode: "full",
          catalogs: ["lake", "main"],
          schemas_count: 3,
          tables_count: TABLES.length,
          unchanged_count: 0,
          below_min_size: 0,
          duration_ms: 4,
        },
      }),
    );
    const connection = await json(
      "/api/v1/catalog-connections",
      {
        method: "POST",
        body: {
          name: "workerd-doc2",
          type: "workspace",
          workspace_url: "https://uc2.workerd.test",
          token: "t",
        },
      },
      201,
    );
    await json(`/api/v1/catalog-connections/${connection.id}/sync`, { method: "POST" }, 202);
    await until(
      () => json(`/api/v1/catalog-connections/${connection.id}`),
      (c) => c.sync_status === "completed" || c.sync_status === "failed",
    );

    const catalogs = await json("/api/v1/catalogs?page_size=100");
    const mine = catalogs.items.filter((c: Json) => c.connection_id === connection.id);
    expect(mine.map((c: Json) => [c.name, c.tables_count, c.size_bytes])).toEqual([
      ["lake", 1, 5],
      ["main", 3, 600],
    ]);
    const main = mine[1].catalog_id;

    const namespaces = await json(`/api/v1/catalogs/${main}/namespaces`);
    expect(namespaces.items.map((n: Json) => [n.namespace, n.children_count, n.total_tables_count])).toEqual([
      ["sales", 1, 3],
      ["sales.eu", 0, 2],
    ]);

    const first = await json(`/api/v1/catalogs/${main}/tables?page_size=2&type=iceberg`);
    expect(first.items.map((t: Json) => t.full_name)).toEqual([
      "main.sales.eu.orders",
      "main.sales.eu.returns",
    ]);
    expect(first.total).toBe(3);
    const second = await json(
      `/api/v1/catalogs/${main}/tables?page_size=2&type=iceberg&page_token=${first.next_page_token}`,
    );
    expect(second).toMatchObject({
      items: [{ full_name: "main.sales.orders", type: "iceberg" }],
      next_page_token: null,
    });
    const detail = await json(`/api/v1/catalogs/${main}/tables/${second.items[0].table_id}`);
    expect(detail).toMatchObject({ full_name: "main.sales.orders", metadata: { owner: "ops" } });
    const found = await json(`/api/v1/catalogs/${main}/tables?q=re*&prefix=sales.eu`);
    expect(found.items.map((t: Json) => t.name)).toEqual(["returns"]);
  });
});
