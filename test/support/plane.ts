/**
 * A real Node control plane for end-to-end tests: a libSQL file in a temporary folder, a port on
 * loopback, lease timings short enough that a lapse takes a second or two, and a reaper on a short
 * interval standing in for the scheduler tick. `restart()` stops it and starts a successor on the
 * same port and database file, as a deploy would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Clock } from "@lakesmith/shared";
import { expect } from "vitest";
import { type NodeServer, startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { type ChildAgent, spawnAgent } from "./agents.ts";

export const ADMIN_KEY = `lsk_${"e".repeat(40)}`;
export const FAST_TIMINGS = {
  leaseMs: 2000,
  offerTimeoutMs: 1000,
  heartbeatMs: 300,
  retryBaseMs: 100,
  retryMaxMs: 400,
  // Long enough that a validate a real agent answers is always answered 200, however busy the machine.
  preflightWaitMs: 60_000,
};
const REAP_INTERVAL_MS = 100;

export interface JobView {
  id: string;
  kind: string;
  status: string;
  attempt: number;
  agent_id: string | null;
  error: string | null;
  result: Record<string, unknown> | null;
  waiting_for: string | null;
}

export interface TestPlane {
  readonly server: NodeServer;
  readonly url: string;
  api(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{
    status: number;
    body: // biome-ignore lint/suspicious/noExplicitAny: JSON of any endpoint
    any;
  }>;
  /** The plane's libSQL database file, for tests that read what is stored. */
  readonly dbUrl: string;
  createAgentToken(name?: string): Promise<{ id: string; token: string }>;
  enqueue(
    kind: "noop" | "sleep",
    payload?: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<string>;
  job(id: string): Promise<JobView>;
  /** Polls the job until `accept` holds (default: it reached one of `statuses`). */
  waitForJob(id: string, statuses: string[], timeoutMs?: number): Promise<JobView>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface PlaneOptions {
  /** How often the hub looks for work on its own; push delivery must not depend on it. */
  dispatchIntervalMs?: number;
  /** The plane's clock (default: the system's); `offset-clock.ts` moves a running one. */
  clock?: Clock;
  /** How often the plane's own scheduler ticks (default 15 s; 0: never, the test calls it). */
  schedulerIntervalMs?: number;
}

export async function startPlane(options: PlaneOptions = {}): Promise<TestPlane> {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-e2e-"));
  const dbUrl = `file:${join(dir, "plane.db")}`;
  let server: NodeServer;
  let reaper: NodeJS.Timeout | undefined;
  const boot = async (port: number) => {
    server = await startNodeServer({
      dbUrl,
      port,
      leaseTimings: FAST_TIMINGS,
      dispatchIntervalMs: options.dispatchIntervalMs ?? 100,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.schedulerIntervalMs !== undefined
        ? { schedulerIntervalMs: options.schedulerIntervalMs }
        : {}),
      bootstrap: { adminPassword: "e2e-admin-password", adminApiKey: ADMIN_KEY },
    });
    reaper = setInterval(() => {
      server.services.jobs.reap().catch(() => {});
    }, REAP_INTERVAL_MS);
  };
  const halt = async () => {
    clearInterval(reaper);
    await server.stop();
  };
  await boot(0);

  const plane: TestPlane = {
    get server() {
      return server;
    },
    get url() {
      return server.url;
    },
    dbUrl,
    async api(method, path, body) {
      const request = () =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      // After a restart the first request may go out on a pooled connection to the old server.
      const res = await request().catch(request);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async createAgentToken(name = "e2e-agent") {
      const res = await plane.api("POST", "/api/v1/agents", { name });
      if (res.status !== 201) throw new Error(`agent token: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async enqueue(kind, payload = {}, extra = {}) {
      const res = await plane.api("POST", "/api/v1/jobs", { kind, payload, ...extra });
      if (res.status !== 201) throw new Error(`enqueue: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id;
    },
    async job(id) {
      const res = await plane.api("GET", `/api/v1/jobs/${id}`);
      if (res.status !== 200) throw new Error(`job ${id}: ${res.status}`);
      return res.body;
    },
    async waitForJob(id, statuses, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const job = await plane.job(id);
        if (statuses.includes(job.status)) return job;
        if (Date.now() > deadline)
          throw new Error(`job ${id} is ${job.status}, not ${statuses.join("/")}: ${JSON.stringify(job)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async restart() {
      const port = server.port;
      await halt();
      await boot(port);
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return plane;
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A `lakesmith-agent` child process connected to `p` under a new token, with `env` on top of the
 * connection settings, once its session is established; added to `children` for the suite to stop.
 */
export async function connectedChildAgent(
  p: TestPlane,
  name: string,
  env: Record<string, string>,
  children: ChildAgent[],
): Promise<ChildAgent> {
  const { token } = await p.createAgentToken(name);
  const c = spawnAgent({ LAKESMITH_CONTROL_PLANE: p.url, LAKESMITH_AGENT_TOKEN: token, ...env });
  children.push(c);
  await c.waitForLog((l) => l.msg === "session established", 15_000);
  return c;
}

/**
 * A `lakesmith-agent` child connected to `p` (`connectedChildAgent`) that may read and write the
 * tables under `folder` and call the catalog at `endpoint`, with `env` on top.
 */
export function connectedCatalogAgent(
  p: TestPlane,
  name: string,
  folder: string,
  endpoint: string,
  children: ChildAgent[],
  env: Record<string, string> = {},
): Promise<ChildAgent> {
  return connectedChildAgent(
    p,
    name,
    {
      LAKESMITH_AGENT_ALLOW: pathToFileURL(folder).href,
      LAKESMITH_AGENT_ALLOW_ENDPOINTS: endpoint,
      LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
      ...env,
    },
    children,
  );
}

/** Calls the API and expects `status` (the body in the failure message); returns the body. */
export async function apiOk(p: TestPlane, method: string, path: string, body?: unknown, status = 200) {
  const res = await p.api(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** Registers a Delta table through the API and waits for its onboarding to end; returns both. */
export async function onboardTable(
  p: TestPlane,
  name: string,
  uri: string,
  format: "delta" | "iceberg" | "hive" = "delta",
) {
  const created = await p.api("POST", "/api/v1/tables", { name, uri, format });
  expect(created.status).toBe(201);
  const job = await p.waitForJob(created.body.onboarding_job_id, ["succeeded", "failed"], 60_000);
  const table = (await p.api("GET", `/api/v1/tables/${created.body.id}`)).body;
  return { table, job };
}
