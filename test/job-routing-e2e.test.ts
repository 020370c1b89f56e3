/**
 * Jobs go to agents that may take them, tried the way a customer would run it: a real Node control
 * plane, real agents in this process with the real table handlers, each allowed a different folder,
 * and real Delta tables in those folders. Each agent gets only its own tables' jobs (onboarding, a
 * manual crunch, a scheduled vacuum), and a table no connected agent may use waits, saying why,
 * until an agent allowed to use it connects; its schedule's run is kept, not lost.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../agent/src/agent.ts";
import { parseConfig } from "../agent/src/config.ts";
import { diagnosticHandlers } from "../agent/src/handlers/diagnostic.ts";
import { tableHandlers } from "../agent/src/handlers/tables.ts";
import { HandlerRegistry } from "../agent/src/registry.ts";
import { writeEventsTable } from "./support/delta-tables.ts";
import { eventually, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "lakesmith-routing-"));
const lake = (name: string) => pathToFileURL(join(root, name)).href;
let plane: TestPlane | undefined;
const agents: Agent[] = [];

beforeAll(async () => {
  for (const name of ["lake-a", "lake-b", "lake-c"])
    await writeEventsTable(join(root, name, "events"), { days: 2, filesPerDay: 2, rowsPerFile: 200 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await plane?.stop();
  plane = undefined;
});

/** A real agent allowed to use `allow` only, connected; returns its id. */
async function agent(p: TestPlane, name: string, allow: string[]): Promise<string> {
  const { id, token } = await p.createAgentToken(name);
  const config = parseConfig({
    control_plane: p.url,
    token,
    concurrency: 2,
    allow,
    scratch: mkdtempSync(join(root, "scratch-")),
    memory_limit_mb: 256,
    log_level: "silent",
  });
  const a = new Agent({
    config,
    registry: new HandlerRegistry([...diagnosticHandlers, ...tableHandlers(config)]),
    log: pino({ level: "silent" }),
  });
  agents.push(a);
  await a.start();
  await eventually(() => (a.connected ? true : undefined), 5000, `agent ${name}'s session`);
  return id;
}

const ended = (p: TestPlane, id: string) => p.waitForJob(id, ["succeeded", "failed"], 20_000);

async function register(p: TestPlane, name: string, uri: string) {
  const created = await p.api("POST", "/api/v1/tables", { name, uri, format: "delta" });
  expect(created.status).toBe(201);
  return created.body as { id: string; onboarding_job_id: string };
}

async function vacuumSchedule(p: TestPlane, tableId: string) {
  const res = await p.api("POST", `/api/v1/tables/${tableId}/schedule?job_type=vacuum`, {
    schedule_type: "backfill",
    backfill_col: "event_date",
    backfill_start_date: "2026-01-01",
    backfill_end_date: "2026-01-02",
  });
  expect(res.status).toBe(201);
}

/** Fires the due schedules (a backfill is due at once), and returns the table's scheduled vacuum job. */
async function scheduledVacuum(p: TestPlane, tableId: string) {
  await p.server.services.scheduler.tick();
  const page = await p.api("GET", `/api/v1/jobs?table_id=${tableId}&kind=vacuum`);
  const job = page.body.items.find((j: { trigger: string }) => j.trigger === "schedule");
  expect(job).toBeDefined();
  return job.id as string;
}

describe("jobs routed by the agents' allow lists", () => {
  it("gives each of two agents only its own tables' onboarding, manual crunch and scheduled vacuum", async () => {
    plane = await startPlane();
    const a = await agent(plane, "agent-a", [lake("lake-a")]);
    const b = await agent(plane, "agent-b", [lake("lake-b")]);

    for (const [folder, owner] of [
      ["lake-a", a],
      ["lake-b", b],
    ] as const) {
      const table = await register(plane, `routing.${folder}`, `${lake(folder)}/events`);
      const onboarding = await ended(plane, table.onboarding_job_id);
      expect(onboarding).toMatchObject({ status: "succeeded", agent_id: owner });

      const crunch = await plane.api("POST", `/api/v1/tables/${table.id}/crunch`, {
        backfill_start_date: "2026-01-01",
        backfill_end_date: "2026-01-02",
      });
      expect(crunch.status).toBe(202);
      expect(await ended(plane, crunch.body.id)).toMatchObject({ status: "succeeded", agent_id: owner });

      await vacuumSchedule(plane, table.id);
      const vacuum = await scheduledVacuum(plane, table.id);
      expect(await ended(plane, vacuum)).toMatchObject({ status: "succeeded", agent_id: owner, attempt: 1 });
    }
  });

  it("keeps a table's jobs queued while no connected agent may use it, and runs them when one connects", async () => {
    plane = await startPlane();
    await agent(plane, "agent-a", [lake("lake-a")]);
    const table = await register(plane, "routing.lake-c", `${lake("lake-c")}/events`);

    const waiting = await eventually(async () => {
      const job = await plane?.job(table.onboarding_job_id);
      return job?.waiting_for?.startsWith("an agent allowed to use") ? job : undefined;
    });
    expect(waiting).toMatchObject({ status: "queued", attempt: 0, agent_id: null });
    expect(waiting.waiting_for).toContain(`${lake("lake-c")}/events`);
    expect(waiting.waiting_for).toContain(`agent-a: ${lake("lake-a")}`);

    const c = await agent(plane, "agent-c", [lake("lake-c")]);
    expect(await ended(plane, table.onboarding_job_id)).toMatchObject({ status: "succeeded", agent_id: c });

    // The allowed agent goes away; the schedule's run waits for the next one instead of failing.
    await vacuumSchedule(plane, table.id);
    await agents.pop()?.drain(1000);
    const vacuum = await scheduledVacuum(plane, table.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(await plane.job(vacuum)).toMatchObject({ status: "queued", attempt: 0 });
    const again = await agent(plane, "agent-c2", [lake("lake-c")]);
    expect(await ended(plane, vacuum)).toMatchObject({ status: "succeeded", agent_id: again });
  });
});
