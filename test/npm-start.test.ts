/**
 * `npm start` as a newcomer runs it: the real script chain (npm -> npm -w control-plane -> tsx ->
 * node, which starts the local agent), on a fresh embedded database in a temporary folder.
 *
 * - The README's first workflow runs against it through the API, with the fields the README uses:
 *   log in, register a real Delta table copied into the local agent's folder, onboard, crunch, read
 *   DRR, create a daily schedule.
 * - A SIGTERM or a SIGINT sent to the `npm` process alone (what a process manager or `kill` sends,
 *   not Ctrl-C, which reaches the whole process group) must stop every process the command started,
 *   the control plane and the local agent included, and free the port. The processes are read from
 *   /proc before the signal, so the test runs on Linux only.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AGENT_MALLOC_ENV } from "@lakesmith/shared/agent-malloc";
import { afterEach, describe, expect, it } from "vitest";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";

const REPO = join(import.meta.dirname, "..");
const ADMIN_PASSWORD = "npm-start-admin-password";
const ADMIN_KEY = `lsk_${"n".repeat(40)}`;
/** Long enough for a cold tsx start on a busy 2-core machine; only a bound, never a measurement. */
const START_LIMIT_MS = 90_000;

interface Started {
  npm: ReturnType<typeof spawn>;
  port: number;
  dir: string;
  output: () => string;
  /** Every process below npm once the system is up, by pid, with its start time: orphans keep no link to npm. */
  tree: Map<number, string>;
}

const running: Started[] = [];

afterEach(async () => {
  for (const started of running.splice(0)) {
    // A failed test must not leave the system running: stop whatever is still there.
    // Only processes whose start time still matches the snapshot: a pid may have been reused since.
    const tree = new Map([...started.tree, ...snapshot(started.npm.pid ?? 0)]);
    for (const [pid, start] of tree)
      if (alive(pid) && procStat(pid)?.start === start) process.kill(pid, "SIGKILL");
    if (started.npm.exitCode === null && started.npm.signalCode === null) started.npm.kill("SIGKILL");
    rmSync(started.dir, { recursive: true, force: true });
  }
});

describe.runIf(existsSync("/proc/self/stat"))("npm start", () => {
  it("runs the README's first workflow, and a SIGTERM to npm stops the control plane and the local agent", async () => {
    const started = await startNpm();
    const api = client(started.port);

    expect(await (await fetch(`http://127.0.0.1:${started.port}/healthz`)).text()).toBe("ok");
    const login = await api(
      "POST",
      "/api/v1/auth/login",
      { username: "admin", password: ADMIN_PASSWORD },
      "",
    );
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ token_type: "Bearer", access_token: expect.any(String) });

    // The README copies a real Delta table into the local agent's folder and registers it there.
    const tablePath = join(started.dir, "data", "covid");
    cpSync(join(DELTA_FIXTURES, "COVID-19_NYT"), tablePath, { recursive: true });
    const created = await api("POST", "/api/v1/tables", {
      name: "covid",
      uri: pathToFileURL(tablePath).href,
    });
    expect(created.status).toBe(201);
    const tableId: string = created.body.id;

    const onboarding = await poll(
      () => api("GET", `/api/v1/onboarding/${tableId}/status`),
      (r) => r.body.status === "active" || r.body.status === "failed",
    );
    expect(onboarding.body).toMatchObject({ status: "active", recipe: { date_filter_column: "date" } });

    const crunch = await api("POST", `/api/v1/tables/${tableId}/crunch`, {
      backfill_start_date: "2020-01-01",
      backfill_end_date: "2021-12-31",
    });
    expect(crunch.status).toBe(202);
    const metrics = await poll(
      () => api("GET", `/api/v1/crunch/${crunch.body.id}/metrics`),
      (r) => ["succeeded", "failed", "cancelled"].includes(r.body.job?.status),
    );
    expect(metrics.body.job.status).toBe("succeeded");
    expect(metrics.body.metrics.drr).toBeGreaterThan(0);
    expect(metrics.body.metrics.rows_out).toBe(metrics.body.metrics.rows_in);
    expect(metrics.body.metrics.files_after).toBeLessThan(metrics.body.metrics.files_before);

    const schedule = await api("POST", `/api/v1/tables/${tableId}/schedule`, {
      schedule_type: "daily",
      lookback_start: 15,
      lookback_end: 2,
      run_time_utc: "02:30",
    });
    expect(schedule.status).toBe(201);
    const table = await api("GET", `/api/v1/tables/${tableId}`);
    expect(table.body.schedule.crunch).toMatchObject({
      id: schedule.body.id,
      run_time_utc: "02:30",
      enabled: true,
    });

    await expectSignalStopsEverything(started, "SIGTERM");
  }, 240_000);

  it("stops the control plane and the local agent on a SIGINT to npm", async () => {
    const started = await startNpm();
    await expectSignalStopsEverything(started, "SIGINT");
  }, 150_000);
});

/** Starts `npm start` on a free port with its database in a fresh folder; resolves once the local agent is connected. */
async function startNpm(): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "npm-start-"));
  const port = await freePort();
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith("LAKESMITH_") && name !== "LAKESMITH_SHARED") delete env[name];
  const npm = spawn("npm", ["start"], {
    cwd: REPO,
    env: {
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      LAKESMITH_DB_URL: `file:${join(dir, "lakesmith.db")}`,
      LAKESMITH_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LAKESMITH_ADMIN_API_KEY: ADMIN_KEY,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  npm.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  npm.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const started: Started = { npm, port, dir, output: () => output, tree: new Map() };
  running.push(started);
  const api = client(port);
  await poll(
    async () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${output}`);
      return api("GET", "/api/v1/agents").catch(() => ({ status: 0, body: null }));
    },
    (r) =>
      r.body?.items?.some(
        (a: { name: string; status: string }) => a.name === "local" && a.status === "connected",
      ),
    START_LIMIT_MS,
  );
  started.tree = snapshot(npm.pid ?? 0);
  return started;
}

/** Sends `signal` to the npm process only, then checks that nothing it started is left and the port is free. */
async function expectSignalStopsEverything(started: Started, signal: "SIGTERM" | "SIGINT"): Promise<void> {
  const pid = started.npm.pid ?? 0;
  started.tree = snapshot(pid);
  const tree = [...started.tree.keys()];
  // The snapshot must hold what the test is about: the control plane's listener and the local agent.
  expect(tree).toContain(listeningPid(started.port));
  const agents = tree.filter((p) => commandLine(p).includes("lakesmith-agent"));
  expect(agents).toHaveLength(1);
  // The local agent runs with glibc's malloc as the agent's image and systemd unit set it.
  const environ = readFileSync(`/proc/${agents[0]}/environ`, "utf8").split("\0");
  expect(environ).toEqual(
    expect.arrayContaining(Object.entries(AGENT_MALLOC_ENV).map(([name, value]) => `${name}=${value}`)),
  );

  process.kill(pid, signal);
  const npmExited = () => started.npm.exitCode !== null || started.npm.signalCode !== null;
  const remaining = () => [
    ...(npmExited() ? [] : [pid]),
    ...tree.filter((p) => alive(p) && procStat(p)?.start === started.tree.get(p)),
  ];
  // Draining takes a few seconds (the agent's drain, then the server's close); the bound only ends the wait.
  const left = await poll(
    async () => remaining(),
    (pids) => pids.length === 0,
    30_000,
  ).catch(remaining);
  expect(left.map((p) => `${p} ${commandLine(p)}`)).toEqual([]);
  expect(await canListen(started.port)).toBe(true);
}

function client(port: number) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    key = ADMIN_KEY,
  ): Promise<{
    status: number;
    // biome-ignore lint/suspicious/noExplicitAny: JSON of any endpoint
    body: any;
  }> => {
    const headers: Record<string, string> = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

/** Calls `read` until `done` holds for its result; throws with the last result after `limitMs`. */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 60_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every process below `root`, from /proc (children, grandchildren, ...). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(entry));
    children.set(stat.ppid, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The descendants of `root` with their start times. */
function snapshot(root: number): Map<number, string> {
  const tree = new Map<number, string>();
  for (const pid of descendants(root)) {
    const start = procStat(pid)?.start;
    if (start) tree.set(pid, start);
  }
  return tree;
}

/**
 * State, parent and start time (in clock ticks since boot) of a process; null once it is gone. The
 * command name may hold spaces and parentheses, so the fields are read after its closing one.
 */
function procStat(pid: number): { state: string; ppid: number; start: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] as string, ppid: Number(fields[1]), start: fields[19] as string };
  } catch {
    return null;
  }
}

/** A zombie has exited; only its parent has not collected it yet. */
function alive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== null && stat.state !== "Z";
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "(gone)";
  }
}

/** The process whose socket listens on 127.0.0.1:`port`, found through /proc/net/tcp and its file descriptors. */
function listeningPid(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inode = readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .find((cols) => cols[1]?.endsWith(`:${hexPort}`) && cols[3] === "0A")?.[9];
  if (!inode) throw new Error(`nothing listens on port ${port}`);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = "";
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue; // closed since the listing
      }
      if (target === `socket:[${inode}]`) return Number(entry);
    }
  }
  throw new Error(`no process holds the socket of port ${port}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
