// Catalog connections through the Worker build on D1: a connection whose secret is stored only
// encrypted, a sync the AgentHub Durable Object offers to an agent allowed the catalog's endpoint
// on a real WebSocket, its tables sent in parts and upserted into D1 as they come, its end written
// by the finish hook (the connection completed, the credentials purged from the job row), and the
// tables browsed.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, type Json, json, type PartedAnswer, until } from "./support/client.ts";

const SECRET = "workerd-catalog-secret-5e7a";

function table(fullName: string, size: number | null): Json {
  const [catalog, schema, name] = fullName.split(".");
  return {
    full_name: fullName,
    catalog,
    schema,
    name,
    format: "delta",
    table_type: "MANAGED",
    location: `s3://lake/${name}`,
    size_bytes: size,
    has_partitions: false,
    updated_at: 1_767_225_600_000,
    detail: { owner: "data-eng" },
  };
}

function answer(kind: string, payload: Json): Json | PartedAnswer {
  if (kind === "catalog_test") return { ok: true, catalogs: ["main"], message: null, duration_ms: 3 };
  expect(payload.connection.client_secret).toBe(SECRET);
  return {
    parts: [
      { tables: [table("main.sales.orders", 5_000_000_000)] },
      { tables: [table("main.sales.returns", 200_000_000)] },
    ],
    result: {
      mode: "full",
      catalogs: ["main"],
      schemas_count: 1,
      tables_count: 2,
      unchanged_count: 0,
      below_min_size: 1,
      duration_ms: 9,
    },
  };
}

describe("catalog connections in workerd", () => {
  it("creates a connection, syncs it through an answering agent, and browses its tables on D1", async () => {
    await answeringAgent(
      "workerd-catalogs",
      {
        kinds: ["catalog_test", "catalog_sync"],
        capabilities: [],
        allow: [],
        endpoints: ["https://uc.workerd.test"],
      },
      answer,
    );
    const connection = await json(
      "/api/v1/catalog-connections",
      {
        method: "POST",
        body: {
          name: "workerd-unity",
          type: "workspace",
          workspace_url: "https://uc.workerd.test",
          client_id: "sp",
          client_secret: SECRET,
        },
      },
      201,
    );
    expect(connection).toMatchObject({ has_client_secret: true, endpoints: ["https://uc.workerd.test:443"] });
    const stored = await env.DB.prepare("select secrets from catalog_connections where id = ?")
      .bind(connection.id)
      .first<{ secrets: string }>();
    expect(stored?.secrets).toMatch(/^enc:v1:/);
    expect(stored?.secrets).not.toContain(SECRET);

    const sync = await json(`/api/v1/catalog-connections/${connection.id}/sync`, { method: "POST" }, 202);
    const done = await until(
      () => json(`/api/v1/catalog-connections/${connection.id}`),
      (c) => c.sync_status === "completed" || c.sync_status === "failed",
    );
    expect(done).toMatchObject({ sync_status: "completed", tables_count: 2, last_sync_job_id: sync.id });

    const tables = await json(
      `/api/v1/catalog-connections/${connection.id}/tables?sort_by=size_bytes&sort_order=desc&min_size_bytes=1000`,
    );
    expect(tables.items.map((t: Json) => t.full_name)).toEqual(["main.sales.orders", "main.sales.returns"]);
    const catalogs = await json(`/api/v1/catalog-connections/${connection.id}/catalogs`);
    expect(catalogs.items).toEqual([{ name: "main", schemas_count: 1, tables_count: 2 }]);
    const detail = await json(`/api/v1/catalog-connections/${connection.id}/tables/main.sales.orders`);
    expect(detail.detail).toEqual({ owner: "data-eng" });

    const job = await env.DB.prepare("select payload, result from jobs where id = ?")
      .bind(sync.id)
      .first<{ payload: string; result: string }>();
    expect(job?.payload).not.toContain(SECRET);
    expect(JSON.parse(job?.result ?? "{}")).toMatchObject({ tables_count: 2, tables_marked_deleted: 0 });
    const view = await json(`/api/v1/jobs/${sync.id}`);
    expect(JSON.stringify(view)).not.toContain(SECRET);
  });
});
