/**
 * Catalog connections end to end against a real Node control plane: a real WebSocket agent allowed
 * the workspace's endpoint answers a connection test while the request waits (200), then a sync
 * whose tables are browsed. The agent's offers carry the credentials; no answer, no job row once
 * the job ended, and no log line ever does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type NodeServer, startNodeServer } from "../src/adapter/node-server.ts";
import { connectAgent, hello, type TestAgentSocket } from "./support/agent-client.ts";
import {
  ALL_SECRETS,
  SyncReport,
  syncedTable,
  syncResult,
  testResult,
  WORKSPACE,
  WORKSPACE_SECRET,
} from "./support/catalogs.ts";

const ADMIN_KEY = `lsk_${"c".repeat(40)}`;
let dir: string;
let plane: NodeServer;
let socket: TestAgentSocket;
const logged: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "lakesmith-catalogs-"));
  for (const method of ["log", "warn", "error", "info"] as const)
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logged.push(
        args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : JSON.stringify(a))).join(" "),
      );
    });
  plane = await startNodeServer({
    dbUrl: `file:${join(dir, "plane.db")}`,
    port: 0,
    schedulerIntervalMs: 0,
    leaseTimings: { preflightWaitMs: 60_000 },
    bootstrap: { adminPassword: "catalogs-admin-password", adminApiKey: ADMIN_KEY },
    log: (level, message, fields) => logged.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
  });
  const agent = await api("POST", "/api/v1/agents", { name: "catalog-agent" });
  socket = await connectAgent(plane.url, agent.body.token);
  socket.send(
    hello({
      kinds: ["catalog_test", "catalog_sync"],
      capabilities: [],
      endpoints: ["https://dbc-1.cloud.databricks.com"],
    }),
  );
  await socket.next("welcome");
});

afterAll(async () => {
  socket.terminate();
  await plane.stop();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${plane.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  for (const secret of ALL_SECRETS) expect(text, `${method} ${path}`).not.toContain(secret);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * Takes the next offer, acknowledges it and answers once leased: a sync's tables one part each
 * (the first sent twice, as after a lost ack: both are acknowledged), then `result`; returns the offer.
 */
async function answer(report: object | SyncReport) {
  const { job: offer } = await socket.next("offer");
  const ref = { job_id: offer.id, fence: offer.fence };
  socket.send({ type: "ack", ...ref });
  await socket.next("leased");
  let result = report;
  if (report instanceof SyncReport) {
    for (const [i, table] of report.tables.entries()) {
      const times = i === 0 ? 2 : 1;
      for (let n = 0; n < times; n++) {
        socket.send({ type: "part", ...ref, seq: i + 1, part: { tables: [table] } });
        expect(await socket.next("part_ack")).toEqual({ type: "part_ack", ...ref, seq: i + 1 });
      }
    }
    result = report.result;
  }
  socket.send({ type: "result", ...ref, outcome: "succeeded", result });
  return offer;
}

async function rawJob(id: string): Promise<string> {
  return JSON.stringify(await plane.services.db.all(sql`select * from jobs where id = ${id}`));
}

describe("catalog connections with an agent on a socket", () => {
  it("answers a test with 200 while the request waits, the agent having got the credentials", async () => {
    const asked = api("POST", "/api/v1/catalog-connections/test", WORKSPACE);
    const offer = await answer(testResult({ catalogs: ["main", "hive_metastore"] }));
    expect(offer).toMatchObject({ kind: "catalog_test", payload: { connection: WORKSPACE } });
    const res = await asked;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ job_id: offer.id, ok: true, catalogs: ["main", "hive_metastore"] });
    expect(await rawJob(offer.id)).not.toContain(WORKSPACE_SECRET);
  });

  it("syncs a connection through the agent and browses its tables", async () => {
    const created = await api("POST", "/api/v1/catalog-connections", { name: "unity", ...WORKSPACE });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const queued = await api("POST", `/api/v1/catalog-connections/${id}/sync`);
    expect(queued.status).toBe(202);
    const offer = await answer(
      syncResult([syncedTable("main.sales.orders", { size_bytes: 2 ** 31 }), syncedTable("main.hr.people")]),
    );
    expect(offer).toMatchObject({
      id: queued.body.id,
      kind: "catalog_sync",
      payload: {
        connection_id: id,
        connection: WORKSPACE,
        mode: "full",
        min_size_bytes: Math.floor(0.1 * 2 ** 30),
      },
    });
    let connection = await api("GET", `/api/v1/catalog-connections/${id}`);
    for (let i = 0; i < 200 && connection.body.sync_status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      connection = await api("GET", `/api/v1/catalog-connections/${id}`);
    }
    expect(connection.body).toMatchObject({ sync_status: "completed", tables_count: 2 });
    const tables = await api(
      "GET",
      `/api/v1/catalog-connections/${id}/tables?sort_by=size_bytes&sort_order=desc`,
    );
    expect(tables.body.items.map((t: { full_name: string }) => t.full_name)).toEqual([
      "main.sales.orders",
      "main.hr.people",
    ]);
    expect(await rawJob(offer.id)).not.toContain(WORKSPACE_SECRET);
    const [row] = await plane.services.db.all<{ n: number }>(
      sql`select count(*) as n from jobs where payload like ${`%${WORKSPACE_SECRET}%`}`,
    );
    expect(row?.n).toBe(0);
  });

  it("logged no secret", () => {
    for (const line of logged) for (const secret of ALL_SECRETS) expect(line).not.toContain(secret);
  });
});
