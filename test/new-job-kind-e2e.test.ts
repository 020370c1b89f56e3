/**
 * A job kind added the way every later kind will be: one declaration for the control plane and one
 * handler for the agent, and nothing else. The kind here (`prefix_census`, a count of the objects
 * under a prefix) is declared in this file only; the test runs it end to end through a real Node
 * control plane and a real agent, including its routing, its overlap rule and its finish hook.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { eq, sql } from "drizzle-orm";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent } from "../agent/src/agent.ts";
import { parseConfig } from "../agent/src/config.ts";
import { diagnosticHandlers } from "../agent/src/handlers/diagnostic.ts";
import { tableHandlers } from "../agent/src/handlers/tables.ts";
import { defineHandler, HandlerRegistry } from "../agent/src/registry.ts";
import { storeFor } from "../agent/src/store/index.ts";
import { type NodeServer, startNodeServer } from "../control-plane/src/adapter/node-server.ts";
import { jobs } from "../control-plane/src/db/schema.ts";
import { defineJobKind, JobKindRegistry, prefixScope } from "../control-plane/src/jobs/kinds.ts";
import { PLATFORM_JOB_KINDS } from "../control-plane/src/kinds.ts";
import { eventually, FAST_TIMINGS } from "./support/plane.ts";

// ---- the declaration (control plane) ----

const CensusPayload = z.object({ prefix: z.string().min(1) });

const censusKind = defineJobKind({
  kind: "prefix_census",
  label: "prefix census",
  payload: CensusPayload,
  needs: (payload) => ({ locations: [payload.prefix] }),
  // Two censuses of overlapping prefixes never run at once.
  exclusive: { group: "prefix_census", grain: "prefix", scopes: (payload) => [prefixScope(payload.prefix)] },
  // The finish hook stamps the result in the batch that ends the job.
  finish: ({ db }, job, end, ended) =>
    end.status === "succeeded"
      ? [
          db
            .update(jobs)
            .set({ result: sql`json_set(${jobs.result}, '$.recorded_by_hook', json('true'))` })
            .where(sql`${jobs.id} = ${job.id} and ${ended}`),
        ]
      : [],
  retry: { maxAttempts: 2 },
});

// ---- the handler (agent) ----

const censusHandler = defineHandler({
  kind: "prefix_census",
  payload: CensusPayload,
  locations: (payload) => [payload.prefix],
  async run({ payload }) {
    let objects = 0;
    for await (const _ of storeFor(payload.prefix).list()) objects++;
    return { objects };
  },
});

// ---- the run ----

let server: NodeServer | undefined;
let agent: Agent | undefined;
let dir: string | undefined;

afterEach(async () => {
  await agent?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  agent = server = dir = undefined;
});

describe("a job kind added through one declaration and one agent handler", () => {
  it("is queued, routed to an agent allowed its prefix, run once at a time per prefix, and finished by its hook", async () => {
    dir = mkdtempSync(join(tmpdir(), "lakesmith-new-kind-"));
    const lake = join(dir, "lake");
    mkdirSync(join(lake, "raw"), { recursive: true });
    for (const name of ["a.json", "b.json", "c.json"]) writeFileSync(join(lake, "raw", name), "{}");
    server = await startNodeServer({
      dbUrl: `file:${join(dir, "plane.db")}`,
      port: 0,
      leaseTimings: FAST_TIMINGS,
      jobKinds: [...PLATFORM_JOB_KINDS, censusKind],
      bootstrap: { adminPassword: "new-kind-admin-password" },
    });
    const { jobs: engine, agents } = server.services;

    const prefix = pathToFileURL(join(lake, "raw")).href;
    const outside = pathToFileURL(join(dir, "elsewhere")).href;
    const { job: census } = await engine.enqueue({ kind: "prefix_census", payload: { prefix } });
    const { job: nested } = await engine.enqueue({
      kind: "prefix_census",
      payload: { prefix: `${prefix}/` },
    });
    const { job: stranger } = await engine.enqueue({ kind: "prefix_census", payload: { prefix: outside } });
    expect(census).toMatchObject({ exclusion: "prefix_census", locks: [`prefix:${prefix}/`] });

    const { token } = await agents.create("census-agent", null);
    const config = parseConfig({
      control_plane: server.url,
      token,
      concurrency: 3,
      allow: [pathToFileURL(lake).href],
      scratch: join(dir, "scratch"),
      log_level: "silent",
    });
    agent = new Agent({
      config,
      registry: new HandlerRegistry([...diagnosticHandlers, ...tableHandlers(config), censusHandler]),
      log: pino({ level: "silent" }),
    });
    await agent.start();

    const done = async (id: string) =>
      eventually(async () => {
        const job = await engine.get(id);
        return job && ["succeeded", "failed"].includes(job.status) ? job : undefined;
      });
    const first = await done(census.id);
    const second = await done(nested.id);
    expect(first).toMatchObject({ status: "succeeded", result: { objects: 3, recorded_by_hook: true } });
    expect(second).toMatchObject({ status: "succeeded", result: { objects: 3, recorded_by_hook: true } });
    // The overlapping second census started only after the first ended.
    expect((second.startedAt as Date).getTime()).toBeGreaterThanOrEqual((first.finishedAt as Date).getTime());

    const waiting = await engine.get(stranger.id);
    expect(waiting).toMatchObject({ status: "queued", attempt: 0, refusals: [] });
    const [row] = await server.services.db.select().from(jobs).where(eq(jobs.id, stranger.id));
    expect(row?.locations).toEqual([`${outside}/`]);
  });

  it("fails at start when a kind is declared twice", () => {
    expect(() => new JobKindRegistry([...PLATFORM_JOB_KINDS, censusKind, censusKind])).toThrow(
      "job kind 'prefix_census' is declared twice",
    );
    expect(() => new JobKindRegistry([...PLATFORM_JOB_KINDS, ...PLATFORM_JOB_KINDS.slice(0, 1)])).toThrow(
      "job kind 'onboarding' is declared twice",
    );
  });
});
