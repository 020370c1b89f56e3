/**
 * A Hive table end to end through the public API and a `lakesmith-agent` child process: a table of
 * Parquet partitions on `file://` registered in a loopback metastore (a real Thrift server, behind
 * SASL PLAIN); a hive_metastore connection synced; `POST /api/v1/tables` with the synced table;
 * onboarding and a crunch that moves each partition to its rewritten folder in the metastore; the
 * old folders' files listed as pending deletions (action crunch, reason superseded); recovering
 * one record moves its whole partition back. The rows read at the metastore's locations stay the
 * same throughout, and the password shows in no answer and no job row.
 */
import { mkdtempSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checksumFiles, Engine } from "../agent/src/engine/index.ts";
import { HiveMetastoreServer } from "../agent/test/support/hive-metastore.ts";
import { writeHiveTable } from "../agent/test/support/hive-tables.ts";
import type { ChildAgent } from "./support/agents.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "hive-tables-e2e-"));
const PASSWORD = "hms-tables-pa55-41c7";
let metastore: HiveMetastoreServer;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

beforeAll(async () => {
  metastore = await HiveMetastoreServer.start({ sasl: { username: "lakesmith", password: PASSWORD } });
});
afterAll(async () => {
  await metastore?.stop();
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

/** Each partition's rows, read from the files directly in the folder the metastore names. */
async function rowsByPartition(table: string) {
  const entry = metastore.tables.get(`lake.${table}`);
  if (!entry) throw new Error(`no table ${table}`);
  const engine = await Engine.open();
  try {
    const sums = new Map<string, { rows: number; rowHash: string }>();
    for (const [name, partition] of entry.partitions) {
      const folder = partition.sd.location.replace(/^file:\/*/, "/");
      const files = (await readdir(folder)).filter((n) => n.endsWith(".parquet")).map((n) => join(folder, n));
      const sum = await checksumFiles(engine, files, [
        { name: "id", type: "BIGINT" },
        { name: "name", type: "VARCHAR" },
        { name: "amount", type: "DECIMAL(12,2)" },
        { name: "tags", type: "VARCHAR[]" },
      ]);
      sums.set(name, { rows: sum.rows, rowHash: sum.rowHash });
    }
    return sums;
  } finally {
    engine.close();
  }
}

describe("a Hive table end to end", () => {
  it("onboards a metastore table, crunches it by moving partitions, lists the old folders as pending deletions and recovers one", async () => {
    const dir = join(root, "events");
    const written = await writeHiveTable(dir, {
      partitions: ["2026-06-01", "2026-06-02"],
      filesPerPartition: 4,
    });
    metastore.addDatabase("lake");
    metastore.registerParquetTable(
      { db: "lake", name: "events", location: pathToFileURL(dir).href, ...written.spec },
      written.partitions,
    );
    const before = await rowsByPartition("events");

    plane = await startPlane();
    await connectedChildAgent(
      plane,
      "hive-tables-agent",
      {
        LAKESMITH_AGENT_CONCURRENCY: "1",
        LAKESMITH_AGENT_ALLOW: pathToFileURL(root).href,
        LAKESMITH_AGENT_ALLOW_ENDPOINTS: metastore.uri,
        LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
      },
      children,
    );
    const answers: unknown[] = [];
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await (plane as TestPlane).api(method, path, body);
      answers.push(res.body);
      return res;
    };
    const finished = async (jobId: string) => {
      const job = await (plane as TestPlane).waitForJob(jobId, ["succeeded", "failed"], 90_000);
      expect(job.status, job.error ?? "").toBe("succeeded");
      return job;
    };

    expect((await api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 })).status).toBe(200);
    const created = await api("POST", "/api/v1/catalog-connections", {
      name: "metastore",
      type: "hive_metastore",
      metastore_uri: metastore.uri,
      username: "lakesmith",
      password: PASSWORD,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const connectionId = created.body.id as string;
    const sync = await api("POST", `/api/v1/catalog-connections/${connectionId}/sync`);
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    await finished(sync.body.id);
    const listed = await api("GET", `/api/v1/catalog-connections/${connectionId}/tables`);
    const fullName = (listed.body.items as { full_name: string }[]).find((t) =>
      t.full_name.endsWith(".lake.events"),
    )?.full_name;
    expect(fullName, JSON.stringify(listed.body)).toBeDefined();

    const table = await api("POST", "/api/v1/tables", {
      name: "lake.events",
      catalog_connection_id: connectionId,
      catalog_table: fullName,
    });
    expect(table.status, JSON.stringify(table.body)).toBe(201);
    expect(table.body).toMatchObject({ format: "hive", catalog_connection_id: connectionId });
    await finished(table.body.onboarding_job_id);
    const tableId = table.body.id as string;
    expect((await api("GET", `/api/v1/tables/${tableId}`)).body).toMatchObject({
      onboarding_status: "active",
    });

    // Vacuum is not for Hive tables: their old folders are pending deletions already.
    const vacuum = await api("POST", `/api/v1/tables/${tableId}/vacuum`, {});
    expect(vacuum.status).toBe(422);

    const crunch = await api("POST", `/api/v1/tables/${tableId}/crunch`, { whole_table: true });
    expect(crunch.status, JSON.stringify(crunch.body)).toBe(202);
    await finished(crunch.body.id);
    const metrics = (await api("GET", `/api/v1/crunch/${crunch.body.id}/metrics`)).body.metrics;
    expect(metrics).toMatchObject({ rows_in: 1600, rows_out: 1600, files_before: 8, files_after: 2 });
    for (const p of metastore.tables.get("lake.events")?.partitions.values() ?? [])
      expect(p.sd.location).toMatch(/\/events\/_lakesmith\/[^/]+\/dt=2026-06-0\d$/);
    expect(await rowsByPartition("events")).toEqual(before);

    const pending = await api(
      "GET",
      `/api/v1/pending-deletions?table_id=${tableId}&action_type=crunch&limit=100`,
    );
    expect(pending.status).toBe(200);
    const records = pending.body.items as { id: string; partition: string; reason: string; path: string }[];
    expect(records).toHaveLength(8);
    expect(new Set(records.map((r) => r.reason))).toEqual(new Set(["superseded"]));
    const first = records.find((r) => r.partition === "dt=2026-06-01");
    if (!first) throw new Error("no record of dt=2026-06-01");

    const recover = await api("POST", `/api/v1/pending-deletions/${first.id}/recover`, {
      reason: "a reader still lists the old folder",
    });
    expect(recover.status, JSON.stringify(recover.body)).toBe(202);
    await finished(recover.body.recover_job_id);
    const after = await api(
      "GET",
      `/api/v1/pending-deletions?table_id=${tableId}&action_type=crunch&status=RECOVERED&limit=100`,
    );
    expect((after.body.items as { partition: string }[]).map((r) => r.partition)).toEqual(
      Array(4).fill("dt=2026-06-01"),
    );
    expect(metastore.partition("lake", "events", "dt=2026-06-01")?.sd.location).toBe(
      `${pathToFileURL(dir).href}/dt=2026-06-01`,
    );
    expect(await rowsByPartition("events")).toEqual(before);

    for (const path of [
      `/api/v1/jobs/${crunch.body.id}`,
      "/api/v1/jobs?limit=1000",
      `/api/v1/tables/${tableId}`,
    ])
      await api("GET", path);
    expect(JSON.stringify(answers)).not.toContain(PASSWORD);
    const db = createClient({ url: plane.dbUrl });
    try {
      const rows = await db.execute("select * from jobs");
      expect(JSON.stringify(rows.rows)).not.toContain(PASSWORD);
    } finally {
      db.close();
    }
  });
});
