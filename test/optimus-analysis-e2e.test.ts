/**
 * An Optimus run end to end, through the public API and a `lakesmith-agent` child process: a
 * submission's Spark event logs on `file://` name a scan of a registered Delta table (by the
 * location Spark prints) and one of a folder Lakesmith doesn't know; sync-now queues the run, the
 * agent reads the logs and sends the table's workload, and the plane stores it for the run.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";
import { scanNode, sparkLog } from "../agent/test/support/spark-log.ts";
import type { ChildAgent } from "./support/agents.ts";
import { connectedChildAgent, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

let root: string;
let plane: TestPlane;
const children: ChildAgent[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "optimus-e2e-"));
  plane = await startPlane();
  await connectedChildAgent(plane, "optimus-agent", { LAKESMITH_AGENT_ALLOW: `file://${root}` }, children);
}, 60_000);

afterAll(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  await rm(root, { recursive: true, force: true });
});

describe("Optimus analysis end to end", () => {
  it("maps the logged scans to the registered table and stores its workload for the run", async () => {
    const orders = join(root, "lake/orders");
    await cp(join(DELTA_FIXTURES, "simple_table"), orders, { recursive: true });
    const { table, job: onboarding } = await onboardTable(plane, "sales.orders", `file://${orders}`);
    expect(onboarding.status, onboarding.error ?? "").toBe("succeeded");

    // Yesterday is in the window of a run asked today (lookback 7 days, ending yesterday).
    const yesterday = Date.now() - 86_400_000;
    const day = new Date(yesterday).toISOString().slice(0, 10);
    await mkdir(join(root, "logs"), { recursive: true });
    await writeFile(
      join(root, "logs/app-20260101-0001"),
      sparkLog([
        {
          id: 1,
          time: yesterday,
          description: "orders above 5",
          bytes: 4_096,
          scans: [
            // Spark prints local paths as `file:/…`.
            scanNode("spark_catalog.sales.orders", `file:${orders}`, {
              data: "[isnotnull(id#0L), (id#0L > 5)]",
            }),
            scanNode("spark_catalog.tmp.scratch", `file:${root}/scratch`),
          ],
        },
      ]),
    );

    const created = await plane.api("POST", "/api/v1/optimus/runs", {
      name: "spark e2e",
      engine: "spark",
      daily_sync_time_utc: "03:00",
      query_logs_uri: `file://${root}/logs`,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // The daily time has passed today, so the scheduler may have fired the first run already.
    const synced = await plane.api("POST", `/api/v1/optimus/runs/${created.body.id}/sync-now`);
    expect([202, 409], JSON.stringify(synced.body)).toContain(synced.status);
    const detail = await plane.api("GET", `/api/v1/optimus/runs/${created.body.id}`);
    const jobId = synced.status === 202 ? synced.body.job_id : detail.body.runs[0].job_id;
    const run = await plane.waitForJob(jobId, ["succeeded", "failed"], 60_000);
    expect(run.status, run.error ?? "").toBe("succeeded");
    expect(run.result).toMatchObject({
      logs: 1,
      queries_read: 1,
      queries_in_window: 1,
      scans: 2,
      scans_matched: 1,
      tables: 1,
      unmatched: [{ name: "spark_catalog.tmp.scratch", queries: 1, bytes_scanned: 2_048 }],
    });

    const db = createClient({ url: plane.dbUrl });
    try {
      const rows = await db.execute({
        sql: "select table_id, table_fqn, queries, bytes_scanned, filter_sets, other from optimus_workloads where run_id = ?",
        args: [run.id],
      });
      expect(rows.rows).toHaveLength(1);
      const stored = rows.rows[0] as Record<string, unknown>;
      expect(stored).toMatchObject({ table_id: table.id, queries: 1, bytes_scanned: 2_048 });
      expect(JSON.parse(String(stored.filter_sets))).toEqual([
        {
          predicates: [{ column: "id", op: ">", values: ["5"] }],
          columns: ["id"],
          queries: 1,
          bytes_scanned: 2_048,
          days: { [day]: { queries: 1, bytes_scanned: 2_048 } },
          examples: ["orders above 5"],
        },
      ]);
      expect(JSON.parse(String(stored.other))).toEqual({ queries: 0, bytes_scanned: 0 });
    } finally {
      db.close();
    }
  }, 120_000);
});
