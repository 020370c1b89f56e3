/** The Node server drives the scheduler tick from a timer, and a zero interval turns it off. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@lakesmith/shared";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeServer, startNodeServer } from "../src/adapter/node-server.ts";
import type { TestPlane } from "./harness.ts";
import { finishOnboarding } from "./support/tables.ts";

const dirs: string[] = [];
const servers: NodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A server with one due backfill schedule. */
async function serverWithDueSchedule(schedulerIntervalMs: number) {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-timer-"));
  dirs.push(dir);
  const server = await startNodeServer({
    dbUrl: `file:${join(dir, "t.db")}`,
    port: 0,
    clock: new ManualClock(new Date("2026-02-01T00:00:00Z")),
    schedulerIntervalMs,
  });
  servers.push(server);
  const { services } = server;
  const table = await services.tables.create(
    {
      name: "timer.t",
      uri: "s3://lake/t",
      format: "delta",
      priority: "P2",
      target_file_size_mb: 512,
      parquet_v2: false,
    },
    null,
  );
  await finishOnboarding({ services } as TestPlane, table.id);
  await services.schedules.create(table.id, "crunch", {
    schedule_type: "backfill",
    backfill_col: "d",
    backfill_start_date: "2026-01-01",
    backfill_end_date: "2026-01-31",
    enabled: true,
  });
  const crunchJobs = async () =>
    (await services.jobs.list({ tableId: table.id, kinds: ["crunch"] }, 0, 10)).total;
  return { crunchJobs };
}

describe("the Node scheduler timer", () => {
  it("fires due schedules without anyone calling tick", async () => {
    const { crunchJobs } = await serverWithDueSchedule(25);
    const deadline = Date.now() + 5_000;
    while ((await crunchJobs()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await crunchJobs()).toBe(1);
  });

  it("stays off with an interval of 0", async () => {
    const { crunchJobs } = await serverWithDueSchedule(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(await crunchJobs()).toBe(0);
  });
});
