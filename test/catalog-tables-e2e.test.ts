/**
 * A table onboarded through a Polaris catalog connection, end to end: a copy of lineitem on
 * `file://` registered in the loopback Iceberg REST catalog (which writes its commits' metadata
 * into the copy), a connection, a sync, `POST /api/v1/tables` with the synced table, onboarding
 * and a whole-table crunch by a `lakesmith-agent` child process allowed the folder and the
 * catalog. The commit goes through the catalog, the rows stay the same, the secret shows in no
 * answer and no job row once the jobs ended. The same through document 2's actions: the synced
 * table's first action (compress) onboards it, waits for it, and runs.
 */
import { mkdtempSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IcebergRestCatalogRef } from "@lakesmith/shared/jobs";
import { systemClock } from "@lakesmith/shared/time";
import { createClient } from "@libsql/client";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checksumFiles, Engine } from "../agent/src/engine/index.ts";
import { icebergFormat } from "../agent/src/formats/index.ts";
import { parseJson } from "../agent/src/iceberg/index.ts";
import { FileStore } from "../agent/src/store/index.ts";
import { copyIcebergFixture } from "../agent/test/support/iceberg.ts";
import { type RestCatalogServer, startRestCatalog } from "../agent/test/support/rest-catalog.ts";
import type { ChildAgent } from "./support/agents.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "catalog-tables-e2e-"));
const SECRET = "polaris-secret-9d2b71";
let catalog: RestCatalogServer;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

beforeAll(async () => {
  catalog = await startRestCatalog({ clients: { lakesmith: SECRET } });
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

/** The table's rows as the agent's Iceberg reader sees them through the catalog. */
async function tableRows(folder: string, ref: IcebergRestCatalogRef) {
  const engine = await Engine.open();
  try {
    const scratch = mkdtempSync(join(root, "read-"));
    const store = new FileStore(folder);
    const table = await icebergFormat.load({
      store,
      catalog: ref,
      engine,
      scratchDir: scratch,
      clock: systemClock,
      log: pino({ level: "silent" }),
    });
    const locals: string[] = [];
    for (const [i, f] of table.files.entries()) {
      const local = join(scratch, `${i}.parquet`);
      await store.download(f.key, local);
      locals.push(local);
    }
    return { files: table.files.length, sum: await checksumFiles(engine, locals, table.columns) };
  } finally {
    engine.close();
  }
}

/** The table's Iceberg REST reference in the loopback catalog, with the client's secret. */
const REF: IcebergRestCatalogRef = {
  type: "iceberg_rest",
  uri: "",
  warehouse: "lake",
  namespace: ["tpch", "sf001"],
  table: "lineitem",
  client_id: "lakesmith",
  client_secret: SECRET,
};

/**
 * A copy of lineitem registered in the loopback catalog, a plane with a child agent allowed the
 * copy and the catalog, and a Polaris connection synced: what each scenario starts from. `api`
 * keeps every answer for the secret check.
 */
async function syncedLineitem(name: string) {
  const folder = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, name));
  const metadata = parseJson(await readFile(join(folder, "metadata/v2.metadata.json"), "utf8"));
  await catalog.tables.register(["tpch", "sf001"], "lineitem", { metadata: metadata as never, folder });
  const ref = { ...REF, uri: catalog.uri };
  const before = await tableRows(folder, ref);

  const started = await startPlane();
  plane = started;
  await connectedChildAgent(
    started,
    "catalog-table-agent",
    {
      LAKESMITH_AGENT_CONCURRENCY: "1",
      LAKESMITH_AGENT_ALLOW: `file://${root}`,
      LAKESMITH_AGENT_ALLOW_ENDPOINTS: catalog.uri,
      LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
    },
    children,
  );
  const answers: unknown[] = [];
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await started.api(method, path, body);
    answers.push(res.body);
    return res;
  };

  expect((await api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 })).status).toBe(200);
  const created = await api("POST", "/api/v1/catalog-connections", {
    name: "polaris",
    type: "polaris",
    catalog_url: catalog.uri,
    warehouse: "lake",
    client_id: "lakesmith",
    client_secret: SECRET,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const connectionId = created.body.id as string;
  const sync = await api("POST", `/api/v1/catalog-connections/${connectionId}/sync`);
  expect(sync.status, JSON.stringify(sync.body)).toBe(202);
  const synced = await started.waitForJob(sync.body.id, ["succeeded", "failed"], 60_000);
  expect(synced.status, synced.error ?? "").toBe("succeeded");
  return { plane: started, folder, ref, before, connectionId, api, answers };
}

/** No answer, and no job row once the jobs ended, holds the catalog's secret. */
async function expectSecretNowhere(dbUrl: string, answers: unknown[]) {
  expect(JSON.stringify(answers)).not.toContain(SECRET);
  const db = createClient({ url: dbUrl });
  try {
    const rows = await db.execute("select * from jobs");
    expect(rows.rows.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(rows.rows)).not.toContain(SECRET);
  } finally {
    db.close();
  }
}

describe("a catalog table end to end", () => {
  it("onboards lineitem through a Polaris connection and crunches it through the catalog: same rows, the secret nowhere", async () => {
    const { plane, folder, ref, before, connectionId, api, answers } = await syncedLineitem("lineitem");

    const table = await api("POST", "/api/v1/tables", {
      name: "tpch.lineitem",
      catalog_connection_id: connectionId,
      catalog_table: "lake.tpch.sf001.lineitem",
    });
    expect(table.status, JSON.stringify(table.body)).toBe(201);
    expect(table.body).toMatchObject({
      format: "iceberg",
      catalog_connection_id: connectionId,
      catalog_table: "lake.tpch.sf001.lineitem",
    });
    const onboarded = await plane.waitForJob(table.body.onboarding_job_id, ["succeeded", "failed"], 60_000);
    expect(onboarded.status, onboarded.error ?? "").toBe("succeeded");
    const tableId = table.body.id as string;
    expect((await api("GET", `/api/v1/tables/${tableId}`)).body.onboarding_status).toBe("active");

    const crunch = await api("POST", `/api/v1/tables/${tableId}/crunch`, { whole_table: true });
    expect(crunch.status, JSON.stringify(crunch.body)).toBe(202);
    const done = await plane.waitForJob(crunch.body.id, ["succeeded", "failed"], 90_000);
    expect(done.status, done.error ?? "").toBe("succeeded");
    const metrics = (await api("GET", `/api/v1/crunch/${crunch.body.id}/metrics`)).body.metrics;
    expect(metrics).toMatchObject({ rows_in: 51_793, rows_out: 51_793, files_after: 1 });

    const commits = catalog.calls.filter((c) => c.operation === "updateTable");
    expect(commits.map((c) => c.status)).toEqual([200]);
    const after = await tableRows(folder, ref);
    expect(after.files).toBe(1);
    expect(after.sum).toEqual(before.sum);

    for (const path of [
      `/api/v1/jobs/${table.body.onboarding_job_id}`,
      `/api/v1/jobs/${crunch.body.id}`,
      "/api/v1/jobs?limit=1000",
      `/api/v1/tables/${tableId}`,
      `/api/v1/catalog-connections/${connectionId}`,
    ])
      await api("GET", path);
    await expectSecretNowhere(plane.dbUrl, answers);
  });

  it("compresses lineitem by a document-2 action: the first action onboards it, waits, then runs through the catalog", async () => {
    const { plane, folder, ref, before, connectionId, api, answers } =
      await syncedLineitem("lineitem-action");
    const catalogs = (await api("GET", "/api/v1/catalogs")).body.items as {
      catalog_id: string;
      connection_id: string;
    }[];
    const catalogId = catalogs.find((c) => c.connection_id === connectionId)?.catalog_id;
    const [listed] = (await api("GET", `/api/v1/catalogs/${catalogId}/tables`)).body.items;
    const base = `/api/v1/catalogs/${catalogId}/tables/${encodeURIComponent(listed.table_id)}`;

    const actions = (await api("GET", `${base}/actions`)).body;
    expect(actions.supported.map((a: { action: string }) => a.action)).toEqual([
      "compress",
      "compact",
      "improve_layout",
    ]);
    const refused = await api("POST", `${base}/actions`, { action: "expire_snapshots" });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.errors[0].path).toBe("action");

    const action = await api("POST", `${base}/actions`, { action: "compress" });
    expect(action.status, JSON.stringify(action.body)).toBe(202);
    expect(action.body).toMatchObject({ status: "SCHEDULED", waiting_for_onboarding: true });
    const tableId = action.body.lakesmith_table_id as string;
    const table = (await api("GET", `/api/v1/tables/${tableId}`)).body;
    expect(table).toMatchObject({ format: "iceberg", catalog_table: "lake.tpch.sf001.lineitem" });
    const onboarded = await plane.waitForJob(table.onboarding_job_id, ["succeeded", "failed"], 60_000);
    expect(onboarded.status, onboarded.error ?? "").toBe("succeeded");
    // The scheduler's step releases the held action now that the table is onboarded (this tick, or
    // the server's own timer if it came first).
    await plane.server.services.scheduler.tick();
    const done = await plane.waitForJob(action.body.action_id, ["succeeded", "failed"], 90_000);
    expect(done.status, done.error ?? "").toBe("succeeded");
    const shown = (await api("GET", `${base}/actions/${action.body.action_id}`)).body;
    expect(shown).toMatchObject({ status: "SUCCEEDED", result: { rows_in: 51_793, rows_out: 51_793 } });

    const after = await tableRows(folder, ref);
    expect(after.sum).toEqual(before.sum);
    const runs = (await api("GET", `${base}/runs?trigger=ACTION`)).body.items;
    expect(runs.map((r: { kind: string; status: string }) => [r.kind, r.status])).toEqual([
      ["crunch", "SUCCEEDED"],
      ["onboarding", "SUCCEEDED"],
    ]);
    await expectSecretNowhere(plane.dbUrl, answers);
  });
});
