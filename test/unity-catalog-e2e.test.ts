/**
 * A workspace (Unity Catalog) connection end to end, through the public API and a
 * `lakesmith-agent` child process allowed the workspace's endpoint and the tables' folder: a
 * loopback Unity Catalog server (OAuth machine-to-machine, every answer validated against the
 * published description, paging through empty pages) holding Delta tables copied on `file://`.
 * Test with a good and a wrong secret; create; a full sync with sizes read from the Delta logs, the
 * size threshold and a changed one, the `catalog` parameter; an incremental sync that reads again
 * only the table whose `updated_at` changed and marks the one dropped; an external Delta table
 * onboarded through the connection (a managed one refused); delete; the secret nowhere.
 */
import { cpSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";
import {
  startUnityCatalog,
  type TableInit,
  type UnityCatalogServer,
} from "../agent/test/support/unity-catalog.ts";
import type { ChildAgent } from "./support/agents.ts";
import { expectConfirmedDelete, expectSecretNowhere } from "./support/catalog-connections.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "unity-e2e-"));
const SECRET = "unity-sp-secret-7b31";
let unity: UnityCatalogServer;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

/** A Delta table copied into the root, registered in Unity under `catalog.schema.name`. */
function deltaTable(catalog: string, schema: string, name: string, type: "EXTERNAL" | "MANAGED") {
  const folder = join(root, `${catalog}-${schema}-${name}`);
  cpSync(join(DELTA_FIXTURES, "COVID-19_NYT"), folder, { recursive: true });
  unity.state.putTable({
    catalog_name: catalog,
    schema_name: schema,
    name,
    table_type: type,
    data_source_format: "DELTA",
    storage_location: pathToFileURL(folder).href,
  });
}

beforeAll(async () => {
  unity = await startUnityCatalog({ clients: { lakesmith: SECRET }, pageSize: 2, emptyPages: true });
  deltaTable("main", "sales", "orders", "EXTERNAL");
  deltaTable("main", "sales", "returns", "MANAGED");
  deltaTable("main", "ops", "events", "EXTERNAL");
  deltaTable("sandbox", "scratch", "tmp", "EXTERNAL");
});
afterAll(async () => {
  await unity?.close();
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  expect(unity.validationErrors).toEqual([]);
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

const workspace = (secret: string) => ({
  type: "workspace",
  workspace_url: unity.url,
  client_id: "lakesmith",
  client_secret: secret,
});

const names = (page: { items: { full_name: string }[] }) => page.items.map((t) => t.full_name).sort();

describe("a workspace (Unity Catalog) connection end to end", () => {
  it("tests, syncs fully and incrementally with the threshold and the catalog parameter, onboards an external Delta table; the secret never shows", async () => {
    plane = await startPlane();
    const p = plane;
    await connectedChildAgent(
      p,
      "unity-agent",
      {
        LAKESMITH_AGENT_ALLOW: pathToFileURL(root).href,
        LAKESMITH_AGENT_ALLOW_ENDPOINTS: unity.url,
        LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
      },
      children,
    );
    const answers: unknown[] = [];
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await p.api(method, path, body);
      answers.push(res.body);
      return res;
    };
    const sync = async (id: string, query = "") => {
      const res = await api("POST", `/api/v1/catalog-connections/${id}/sync${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const job = await p.waitForJob(res.body.id, ["succeeded", "failed"], 60_000);
      expect(job.status, job.error ?? "").toBe("succeeded");
      return job;
    };
    const tables = async (id: string) =>
      (await api("GET", `/api/v1/catalog-connections/${id}/tables?limit=100`)).body;

    const bad = await api("POST", "/api/v1/catalog-connections/test", workspace("wrong"));
    expect(bad.body).toMatchObject({ ok: false });
    const good = await api("POST", "/api/v1/catalog-connections/test", workspace(SECRET));
    expect(good.body).toMatchObject({ ok: true });
    expect([...good.body.catalogs].sort()).toEqual(["main", "sandbox"]);

    // The copies are a few MB: the 0.1 GB default keeps none of them.
    const created = await api("POST", "/api/v1/catalog-connections", { name: "unity", ...workspace(SECRET) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await sync(id);
    expect((await tables(id)).total).toBe(0);

    expect((await api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 })).status).toBe(200);
    await sync(id, "?catalog=main");
    const main = await tables(id);
    expect(names(main)).toEqual(["main.ops.events", "main.sales.orders", "main.sales.returns"]);
    const orders = main.items.find((t: { full_name: string }) => t.full_name === "main.sales.orders");
    expect(orders).toMatchObject({ format: "delta", table_type: "EXTERNAL" });
    expect(orders.size_bytes).toBeGreaterThan(0);
    await sync(id);
    expect(names(await tables(id))).toEqual([
      "main.ops.events",
      "main.sales.orders",
      "main.sales.returns",
      "sandbox.scratch.tmp",
    ]);

    // Incremental: one table changes, one is dropped; only the changed one is read again (its Delta log).
    const events = unity.state.tables.get("main.ops.events") as TableInit;
    unity.state.putTable({ ...events, updated_at: Date.now() + 60_000 });
    unity.state.dropTable("sandbox.scratch.tmp");
    const incremental = await sync(id, "?mode=incremental");
    expect(names(await tables(id))).toEqual(["main.ops.events", "main.sales.orders", "main.sales.returns"]);
    expect(incremental.result).toMatchObject({
      mode: "incremental",
      tables_count: 1,
      unchanged_count: 2,
      tables_marked_deleted: 1,
    });

    // Onboarding: the external Delta table is a Delta table; the managed one is refused with the reason.
    const managed = await api("POST", "/api/v1/tables", {
      name: "unity.returns",
      catalog_connection_id: id,
      catalog_table: "main.sales.returns",
    });
    expect(managed.status).toBe(422);
    expect(JSON.stringify(managed.body)).toMatch(/credentials Unity vends/);
    const table = await api("POST", "/api/v1/tables", {
      name: "unity.orders",
      catalog_connection_id: id,
      catalog_table: "main.sales.orders",
    });
    expect(table.status, JSON.stringify(table.body)).toBe(201);
    expect(table.body).toMatchObject({ format: "delta", uri: orders.location.replace(/\/$/, "") });
    const onboarded = await p.waitForJob(table.body.onboarding_job_id, ["succeeded", "failed"], 60_000);
    expect(onboarded.status, onboarded.error ?? "").toBe("succeeded");

    answers.push((await api("GET", "/api/v1/jobs?limit=1000")).body);
    await expectSecretNowhere(p, SECRET, answers);
    await expectConfirmedDelete(p, id);
    expect((await api("GET", `/api/v1/tables/${table.body.id}`)).body).toMatchObject({
      catalog_table_deleted: true,
    });
  });
});
