/**
 * Catalog connections end to end, through the public API and a `lakesmith-agent` child process
 * allowed the catalog's endpoint: a loopback Iceberg REST (Polaris) catalog answering only what its
 * published description allows (Unity: `unity-catalog-e2e.test.ts`; Hive: `hive-catalog-e2e.test.ts`). Test with a good
 * and a wrong secret, create, sync, browse, a table dropped from the catalog, delete; the secret
 * appears in no response, no job row after its job, no database column in plain text.
 */
import { mkdtempSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../agent/src/iceberg/index.ts";
import { ICEBERG_FIXTURES } from "../agent/test/support/iceberg.ts";
import { type RestCatalogServer, startRestCatalog } from "../agent/test/support/rest-catalog.ts";
import type { ChildAgent } from "./support/agents.ts";
import { expectConfirmedDelete, expectSecretNowhere } from "./support/catalog-connections.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "catalogs-e2e-"));
const SECRET = "polaris-secret-4f1c9e";
let catalog: RestCatalogServer;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

beforeAll(async () => {
  catalog = await startRestCatalog({ clients: { lakesmith: SECRET }, pageSize: 2, emptyPages: true });
  const metadata = parseJson(
    await readFile(join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/metadata/v2.metadata.json"), "utf8"),
  );
  await catalog.tables.register(["tpch", "sf001"], "lineitem", { metadata: metadata as never });
  await catalog.tables.register(["tpch", "sf001"], "orders", { metadata: metadata as never });
  await catalog.tables.register(["sales"], "events", { metadata: metadata as never });
});
afterAll(async () => {
  await catalog?.close();
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  expect(catalog.validationErrors).toEqual([]);
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

const polaris = (secret: string) => ({
  type: "polaris",
  catalog_url: catalog.uri,
  warehouse: "lake",
  client_id: "lakesmith",
  client_secret: secret,
});

describe("catalog connections end to end", () => {
  it("tests, creates, syncs and browses a Polaris catalog; a dropped table is marked; the secret never shows", async () => {
    plane = await startPlane();
    await connectedChildAgent(
      plane,
      "catalog-agent",
      { LAKESMITH_AGENT_ALLOW: `file://${root}`, LAKESMITH_AGENT_ALLOW_ENDPOINTS: catalog.uri },
      children,
    );

    const bad = await plane.api("POST", "/api/v1/catalog-connections/test", polaris("wrong"));
    expect(bad.status, JSON.stringify(bad.body)).toBe(200);
    expect(bad.body).toMatchObject({ ok: false });
    expect(String(bad.body.message)).toMatch(/client|credential|unauthori/i);
    const good = await plane.api("POST", "/api/v1/catalog-connections/test", polaris(SECRET));
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(good.body).toMatchObject({ ok: true, catalogs: ["lake"] });

    // The sample tables are 1.2 MB each: below the 0.1 GB default, nothing would be synced.
    const setting = await plane.api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 });
    expect(setting.status, JSON.stringify(setting.body)).toBe(200);
    const created = await plane.api("POST", "/api/v1/catalog-connections", {
      name: "polaris-prod",
      ...polaris(SECRET),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;

    const sync = await plane.api("POST", `/api/v1/catalog-connections/${id}/sync`);
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    const synced = await plane.waitForJob(sync.body.id ?? sync.body.job_id, ["succeeded", "failed"], 60_000);
    expect(synced.status, synced.error ?? "").toBe("succeeded");
    const connection = (await plane.api("GET", `/api/v1/catalog-connections/${id}`)).body;
    expect(connection).toMatchObject({ sync_status: "completed" });
    expect(connection.last_synced_at).not.toBeNull();

    const tables = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables?sort_by=full_name`))
      .body;
    expect(tables.items.map((t: { full_name: string }) => t.full_name)).toEqual([
      "lake.sales.events",
      "lake.tpch.sf001.lineitem",
      "lake.tpch.sf001.orders",
    ]);
    expect(tables.items[1]).toMatchObject({ format: "iceberg", size_bytes: 1_225_526 });
    const schemas = (await plane.api("GET", `/api/v1/catalog-connections/${id}/catalogs/lake/schemas`)).body;
    expect(JSON.stringify(schemas)).toContain("tpch.sf001");
    const detail = await plane.api(
      "GET",
      `/api/v1/catalog-connections/${id}/tables/lake.tpch.sf001.lineitem`,
    );
    expect(detail.status).toBe(200);

    // The catalog drops a table; the next full sync marks it, and browsing no longer lists it.
    (catalog.tables as unknown as { tables: Map<string, unknown> }).tables.delete(
      "tpch\u001fsf001\u0000orders",
    );
    const again = await plane.api("POST", `/api/v1/catalog-connections/${id}/sync`);
    await plane.waitForJob(again.body.id ?? again.body.job_id, ["succeeded"], 60_000);
    const after = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables`)).body;
    expect(after.items.map((t: { full_name: string }) => t.full_name)).not.toContain(
      "lake.tpch.sf001.orders",
    );

    // The secret: in no answer, no job row once the job ended, no column of the database in plain text.
    const answers = [
      bad.body,
      good.body,
      created.body,
      connection,
      tables,
      (await plane.api("GET", "/api/v1/catalog-connections")).body,
      (await plane.api("GET", `/api/v1/jobs/${sync.body.id ?? sync.body.job_id}`)).body,
    ];
    await expectSecretNowhere(plane, SECRET, answers);

    await expectConfirmedDelete(plane, id);
  });
});
