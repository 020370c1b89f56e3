/**
 * `POST/GET /api/v1/catalog-connections`, `GET/PUT/DELETE .../{connection_id}`: each type's fields,
 * the 422s that name the field, name conflicts, the confirm that guards a delete, and the secrets:
 * encrypted in their column under the connection's name, never in an answer.
 */
import { ManualClock } from "@lakesmith/shared";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogConnectionAad } from "../src/secrets/stored.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  ALL_SECRETS,
  adminJson,
  HIVE,
  HIVE_PASSWORD,
  POLARIS,
  rawRow,
  succeed,
  syncedTable,
  syncResult,
  UC_TOKEN,
  WORKSPACE,
  WORKSPACE_SECRET,
} from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-04-01T08:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
});
afterAll(() => plane.close());

const BASE = "/api/v1/catalog-connections";
let seq = 0;
const named = () => `conn-${++seq}`;

async function create(body: Record<string, unknown>) {
  const res = await admin("POST", BASE, { name: named(), ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The fields a 422 names, sorted. */
async function invalid(res: { status: number; body: { errors?: { path: string }[] } }) {
  expect(res.status).toBe(422);
  return [...new Set((res.body.errors ?? []).map((e) => e.path))].sort();
}

function expectNoSecret(text: string) {
  for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
}

describe("creating a connection", () => {
  it("answers 201 with the workspace's plain fields, whether a secret is stored, and never the secret", async () => {
    const res = await admin("POST", BASE, { name: "unity-prod", ...WORKSPACE });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^con_[0-9a-z]{20}$/),
      name: "unity-prod",
      type: "workspace",
      workspace_url: "https://dbc-1.cloud.databricks.com",
      client_id: "sp-client-1",
      has_client_secret: true,
      has_token: false,
      endpoints: ["https://dbc-1.cloud.databricks.com:443"],
      is_active: true,
      sync_interval_hours: 24,
      sync_status: "idle",
      last_synced_at: null,
      last_sync_error: null,
      last_sync_job_id: null,
      next_sync_at: "2026-04-02T08:00:00.000Z",
      tables_count: 0,
      created_by: expect.any(String),
      created_at: "2026-04-01T08:00:00.000Z",
      updated_at: "2026-04-01T08:00:00.000Z",
    });
    expectNoSecret(res.text);
  });

  it("takes a Hive Metastore and a Polaris catalog with their own fields", async () => {
    const hive = await create({ ...HIVE, sync_interval_hours: 6, is_active: false });
    expect(hive).toMatchObject({
      type: "hive_metastore",
      metastore_uri: "thrift://hms.internal:9083",
      username: "lakesmith",
      has_password: true,
      endpoints: ["thrift://hms.internal:9083"],
      is_active: false,
      sync_interval_hours: 6,
      next_sync_at: null,
    });
    expect(hive).not.toHaveProperty("workspace_url");
    const polaris = await create(POLARIS);
    expect(polaris).toMatchObject({
      type: "polaris",
      catalog_url: "https://polaris.example.com/api/catalog",
      warehouse: "analytics",
      client_id: "polaris-client",
      token_url: "https://auth.example.com/oauth/token",
      scope: "PRINCIPAL_ROLE:ALL",
      has_client_secret: true,
      // The token URL is on another host: an agent must be allowed both.
      endpoints: ["https://polaris.example.com:443", "https://auth.example.com:443"],
    });
    const minimal = await create({ type: "hive_metastore", metastore_uri: "thrift://hms2" });
    expect(minimal).toMatchObject({
      username: null,
      has_password: false,
      transport: null,
      endpoints: ["thrift://hms2:9083"],
    });
    const framed = await create({
      type: "hive_metastore",
      metastore_uri: "thrift://hms3",
      transport: "framed",
    });
    expect(framed).toMatchObject({ transport: "framed" });
    const udp = await admin("POST", BASE, {
      name: `udp-${Date.now()}`,
      type: "hive_metastore",
      metastore_uri: "thrift://hms4",
      transport: "udp",
    });
    expect(udp.status, udp.text).toBe(422);
    expect(udp.text).toContain("transport");
    const token = await create({ type: "workspace", workspace_url: "http://uc.local:8080", token: UC_TOKEN });
    expect(token).toMatchObject({ client_id: null, has_client_secret: false, has_token: true });
  });

  it("refuses a taken name with 409 naming it", async () => {
    await create({ ...WORKSPACE, name: "taken" });
    const res = await admin("POST", BASE, { ...WORKSPACE, name: "taken" });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("'taken'");
    expect(res.body.errors).toEqual([{ path: "name", message: "already exists" }]);
  });

  it.each([
    ["a field of another type", { ...WORKSPACE, metastore_uri: "thrift://h:1" }, ["metastore_uri"]],
    ["two fields of another type", { ...HIVE, warehouse: "w", scope: "s" }, ["scope", "warehouse"]],
    ["a missing required URL", { type: "workspace" }, ["workspace_url"]],
    [
      "a Polaris catalog without its client",
      { type: "polaris", catalog_url: POLARIS.catalog_url },
      ["client_id", "client_secret"],
    ],
    [
      "a client id without its secret",
      { type: "workspace", workspace_url: WORKSPACE.workspace_url, client_id: "x" },
      ["client_secret"],
    ],
    [
      "a client secret without its id",
      { type: "workspace", workspace_url: WORKSPACE.workspace_url, client_secret: "x" },
      ["client_id"],
    ],
    ["a token beside client credentials", { ...WORKSPACE, token: "t" }, ["token"]],
    [
      "a metastore URI that is not thrift://host:port",
      { type: "hive_metastore", metastore_uri: "http://hms:9083" },
      ["metastore_uri"],
    ],
    [
      "a URL that is not a URL",
      { ...WORKSPACE, workspace_url: "dbc-1.cloud.databricks.com" },
      ["workspace_url"],
    ],
    [
      "a URL that carries credentials",
      { ...WORKSPACE, workspace_url: "https://me:pw@dbc-1.example.com" },
      ["workspace_url"],
    ],
    ["a URL of another scheme", { ...POLARIS, token_url: "ftp://auth.example.com/token" }, ["token_url"]],
    ["an unknown type", { ...WORKSPACE, type: "glue" }, ["type"]],
    ["an interval of 0 hours", { ...WORKSPACE, sync_interval_hours: 0 }, ["sync_interval_hours"]],
    ["a fractional interval", { ...WORKSPACE, sync_interval_hours: 1.5 }, ["sync_interval_hours"]],
    ["an empty secret", { ...WORKSPACE, client_secret: "" }, ["client_secret"]],
  ])("refuses %s with 422 naming the fields", async (_what, body, fields) => {
    expect(await invalid(await admin("POST", BASE, { name: named(), ...body }))).toEqual(fields);
  });

  it("refuses an unknown field and a name with surrounding spaces with 422", async () => {
    const unknown = await admin("POST", BASE, { name: named(), ...WORKSPACE, region: "eu" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toContain("region");
    expect(await invalid(await admin("POST", BASE, { ...WORKSPACE, name: " padded" }))).toEqual(["name"]);
  });

  it("stores no connection for a refused request", async () => {
    const before = (await admin("GET", BASE)).body.total;
    await admin("POST", BASE, { name: named(), type: "workspace" });
    expect((await admin("GET", BASE)).body.total).toBe(before);
  });
});

describe("the secrets at rest", () => {
  it("keeps the secret fields only as an envelope under the connection's name, and the rest in plain JSON", async () => {
    const created = await create(WORKSPACE);
    const raw = await rawRow(plane, "catalog_connections", created.id);
    expect(raw).not.toContain(WORKSPACE_SECRET);
    const [row] = await plane.services.db.all<{ secrets: string; settings: string; secret_fields: string }>(
      sql`select secrets, settings, secret_fields from catalog_connections where id = ${created.id}`,
    );
    expect(row?.secrets).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(JSON.parse(row?.settings ?? "")).toEqual({
      workspace_url: WORKSPACE.workspace_url,
      client_id: WORKSPACE.client_id,
    });
    expect(JSON.parse(row?.secret_fields ?? "")).toEqual(["client_secret"]);
    const keyring = plane.services.secrets;
    expect(JSON.parse(await keyring.decrypt(row?.secrets ?? "", catalogConnectionAad(created.id)))).toEqual({
      client_secret: WORKSPACE_SECRET,
    });
    // Copied to another connection, the envelope does not decrypt.
    await expect(keyring.decrypt(row?.secrets ?? "", catalogConnectionAad("con_other"))).rejects.toThrow(
      /does not decrypt/,
    );
  });

  it("never answers a secret: get, list and update", async () => {
    const hive = await create(HIVE);
    expectNoSecret((await admin("GET", `${BASE}/${hive.id}`)).text);
    expectNoSecret((await admin("GET", `${BASE}?limit=1000`)).text);
    expectNoSecret((await admin("PUT", `${BASE}/${hive.id}`, { password: `${HIVE_PASSWORD}-2` })).text);
  });
});

describe("reading and listing", () => {
  it("answers 404 for an unknown connection", async () => {
    const res = await admin("GET", `${BASE}/con_missing`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain("con_missing");
  });

  it("lists by name with offset, limit and the is_active filter", async () => {
    const fresh = await startTestPlane({ clock });
    try {
      const call = adminJson(fresh);
      for (const [name, active] of [
        ["c", true],
        ["a", false],
        ["b", true],
      ] as const)
        expect((await call("POST", BASE, { name, ...WORKSPACE, is_active: active })).status).toBe(201);
      const all = (await call("GET", BASE)).body;
      expect(all).toMatchObject({ total: 3, offset: 0, limit: 100 });
      expect(all.items.map((c: { name: string }) => c.name)).toEqual(["a", "b", "c"]);
      const page = (await call("GET", `${BASE}?offset=1&limit=1`)).body;
      expect(page.items.map((c: { name: string }) => c.name)).toEqual(["b"]);
      const active = (await call("GET", `${BASE}?is_active=true`)).body;
      expect(active).toMatchObject({ total: 2 });
      expect(active.items.map((c: { name: string }) => c.name)).toEqual(["b", "c"]);
      expect(
        (await call("GET", `${BASE}?is_active=false`)).body.items.map((c: { name: string }) => c.name),
      ).toEqual(["a"]);
      expect((await call("GET", `${BASE}?is_active=yes`)).status).toBe(422);
      expect((await call("GET", `${BASE}?limit=1001`)).status).toBe(422);
    } finally {
      fresh.close();
    }
  });
});

describe("updating a connection", () => {
  it("changes only the fields sent, and moves the next scheduled sync with the interval", async () => {
    const created = await create(WORKSPACE);
    clock.advance(60_000);
    const res = await admin("PUT", `${BASE}/${created.id}`, {
      sync_interval_hours: 2,
      name: `${created.name}-x`,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: `${created.name}-x`,
      sync_interval_hours: 2,
      workspace_url: WORKSPACE.workspace_url,
      has_client_secret: true,
      next_sync_at: new Date(Date.parse(created.created_at) + 2 * 3_600_000).toISOString(),
      updated_at: clock.now().toISOString(),
    });
    const inactive = (await admin("PUT", `${BASE}/${created.id}`, { is_active: false })).body;
    expect(inactive).toMatchObject({ is_active: false, next_sync_at: null });
  });

  it("re-encrypts a changed secret and keeps the stored one when none is sent", async () => {
    const created = await create(WORKSPACE);
    const envelope = async () =>
      (
        await plane.services.db.all<{ secrets: string }>(
          sql`select secrets from catalog_connections where id = ${created.id}`,
        )
      )[0]?.secrets ?? "";
    const before = await envelope();
    await admin("PUT", `${BASE}/${created.id}`, { sync_interval_hours: 48 });
    expect(await envelope()).toBe(before);
    const res = await admin("PUT", `${BASE}/${created.id}`, { client_secret: "rotated-secret-99" });
    expect(res.status).toBe(200);
    const after = await envelope();
    expect(after).not.toBe(before);
    expect(after).not.toContain("rotated-secret-99");
    expect(JSON.parse(await plane.services.secrets.decrypt(after, catalogConnectionAad(created.id)))).toEqual(
      { client_secret: "rotated-secret-99" },
    );
    // A plain field changed alone keeps the secret.
    await admin("PUT", `${BASE}/${created.id}`, { client_id: "sp-client-2" });
    expect(
      JSON.parse(await plane.services.secrets.decrypt(await envelope(), catalogConnectionAad(created.id))),
    ).toEqual({
      client_secret: "rotated-secret-99",
    });
  });

  it("lands concurrent updates of different credential fields, none lost", async () => {
    const created = await create(POLARIS);
    const updates = [
      { client_secret: "rotated-a-1" },
      { scope: "PRINCIPAL_ROLE:reader" },
      { token_url: "https://auth.example.com/oauth/v2/token" },
      { warehouse: "analytics-2" },
      { client_id: "polaris-client-2" },
    ];
    const answers = await Promise.all(updates.map((u) => admin("PUT", `${BASE}/${created.id}`, u)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const stored = (await admin("GET", `${BASE}/${created.id}`)).body;
    expect(stored).toMatchObject({
      scope: "PRINCIPAL_ROLE:reader",
      token_url: "https://auth.example.com/oauth/v2/token",
      warehouse: "analytics-2",
      client_id: "polaris-client-2",
    });
    const [row] = await plane.services.db.all<{ secrets: string }>(
      sql`select secrets from catalog_connections where id = ${created.id}`,
    );
    expect(
      JSON.parse(await plane.services.secrets.decrypt(row?.secrets ?? "", catalogConnectionAad(created.id))),
    ).toEqual({
      client_secret: "rotated-a-1",
    });
  });

  it("clears an optional field sent as null, and switches a workspace from client credentials to a token", async () => {
    const hive = await create(HIVE);
    expect((await admin("PUT", `${BASE}/${hive.id}`, { password: null, username: null })).body).toMatchObject(
      {
        username: null,
        has_password: false,
      },
    );
    const ws = await create(WORKSPACE);
    const switched = await admin("PUT", `${BASE}/${ws.id}`, {
      client_id: null,
      client_secret: null,
      token: UC_TOKEN,
    });
    expect(switched.body).toMatchObject({ client_id: null, has_client_secret: false, has_token: true });
  });

  it.each([
    ["a type change", { type: "polaris" }, ["type"]],
    ["a field of another type", { metastore_uri: "thrift://h:1" }, ["metastore_uri"]],
    ["a required field cleared", { workspace_url: null }, ["workspace_url"]],
    ["a token beside the stored client credentials", { token: "t" }, ["token"]],
    ["a half-cleared client", { client_secret: null }, ["client_secret"]],
    ["nothing to update", {}, ["(body)"]],
  ])("refuses %s with 422 naming the field, and changes nothing", async (_what, patch, fields) => {
    const ws = await create(WORKSPACE);
    expect(await invalid(await admin("PUT", `${BASE}/${ws.id}`, patch))).toEqual(fields);
    expect((await admin("GET", `${BASE}/${ws.id}`)).body).toEqual(ws);
  });

  it("accepts the connection's own type, refuses a taken name with 409, and an unknown id with 404", async () => {
    const ws = await create(WORKSPACE);
    expect((await admin("PUT", `${BASE}/${ws.id}`, { type: "workspace", is_active: false })).status).toBe(
      200,
    );
    const other = await create(WORKSPACE);
    const taken = await admin("PUT", `${BASE}/${ws.id}`, { name: other.name });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain(other.name);
    expect((await admin("PUT", `${BASE}/con_missing`, { is_active: true })).status).toBe(404);
  });
});

describe("deleting a connection", () => {
  it("refuses without confirm=true with 422 naming confirm, and deletes nothing", async () => {
    const ws = await create(WORKSPACE);
    for (const query of ["", "?confirm=false", "?confirm=1", "?confirm=TRUE"]) {
      const res = await admin("DELETE", `${BASE}/${ws.id}${query}`);
      expect(await invalid(res)).toEqual(["confirm"]);
      expect(res.body.detail).toContain("can't be undone");
    }
    expect((await admin("GET", `${BASE}/${ws.id}`)).status).toBe(200);
  });

  it("deletes the connection and its synced tables with confirm=true, and cancels its active sync", async () => {
    const ws = await create(WORKSPACE);
    const first = (await admin("POST", `${BASE}/${ws.id}/sync`)).body;
    await succeed(plane, first.id, syncResult([syncedTable("main.a.t1"), syncedTable("main.a.t2")]));
    expect((await admin("GET", `${BASE}/${ws.id}`)).body.tables_count).toBe(2);
    const second = (await admin("POST", `${BASE}/${ws.id}/sync`)).body;
    const res = await admin("DELETE", `${BASE}/${ws.id}?confirm=true`);
    expect(res.status).toBe(204);
    expect((await admin("GET", `${BASE}/${ws.id}`)).status).toBe(404);
    const [left] = await plane.services.db.all<{ n: number }>(
      sql`select count(*) as n from catalog_tables where connection_id = ${ws.id}`,
    );
    expect(left?.n).toBe(0);
    const cancelled = await plane.services.jobs.get(second.id);
    expect(cancelled?.status).toBe("cancelled");
    expectNoSecret(await rawRow(plane, "jobs", second.id));
    expect((await admin("DELETE", `${BASE}/${ws.id}?confirm=true`)).status).toBe(404);
  });
});
