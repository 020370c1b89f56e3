/**
 * The start command with several worker processes (SCREEN_WORKERS): real processes, a real port,
 * requests on fresh connections so the cluster's round robin spreads them over the workers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cpuLimit, workerCount, workerThreads } from "../src/http/workers.ts";
import { licenseText, vendorPublicPem } from "./helpers.ts";

const APPLIANCE = join(import.meta.dirname, "..");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One request on its own connection (no keep-alive), so each may land on another worker. */
function send(
  port: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The live worker processes of `pid` (its node children; the TypeScript loader's service is not one). */
async function workerPids(pid: number): Promise<number[]> {
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8")).trim().split(/\s+/);
  const pids: number[] = [];
  for (const child of children.filter(Boolean).map(Number)) {
    const command = await readFile(`/proc/${child}/cmdline`, "utf8").catch(() => "");
    if (command.includes("main.ts")) pids.push(child);
  }
  return pids;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const screenedTotal = async (port: number) => {
  const metrics = await send(port, "GET", "/metrics");
  const line = metrics.text
    .split("\n")
    .find((l) => l.startsWith('screen_http_requests_total{route="/screen",status="200"}'));
  return Number(line?.split(" ").at(-1) ?? 0);
};

let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill("SIGKILL");
  running = undefined;
});

async function start(env: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), "screen-workers-"));
  await writeFile(join(dir, "screen.lic"), licenseText());
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: APPLIANCE,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      SCREEN_EXECUTION_PROVIDER: "cpu",
      SCREEN_LICENSE_PATH: join(dir, "screen.lic"),
      SCREEN_LICENSE_PUBLIC_KEY: vendorPublicPem,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running = child;
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk) => {
    output.stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output.stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output, exited };
}

describe("worker processes", () => {
  it("serve from every worker, count all their requests in /metrics, replace a dead one and stop on SIGTERM", async () => {
    const port = await freePort();
    const { child, output, exited } = await start({ PORT: String(port), SCREEN_WORKERS: "2" });
    const pid = child.pid as number;
    await until("two workers", async () => ((await workerPids(pid)).length === 2 ? true : undefined));
    // The port opens once both workers have their models: requests sent as soon as it answers
    // are shared between them (checked below by killing one).
    await until("health", async () =>
      (await send(port, "GET", "/health")).status === 200 ? true : undefined,
    );
    expect(await workerPids(pid)).toHaveLength(2);
    const screened = await Promise.all(
      Array.from({ length: 20 }, () => send(port, "POST", "/screen", { data: "Call Ann Smith at 555-0100" })),
    );
    expect(screened.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await screenedTotal(port)).toBe(20);
    await until("the log line", async () =>
      output.stdout.includes("[screen] 2 worker processes listening (SCREEN_WORKERS=2)") ? true : undefined,
    );
    // The start-up lines come once, from the first worker.
    expect(output.stdout.match(/listening on/g)).toHaveLength(1);
    // A gauge keeps its meaning when the workers' metrics are added up.
    expect((await send(port, "GET", "/metrics")).text).toMatch(/^screen_license_valid 1$/m);

    // A killed worker takes its counts with it: what is left shows both had served.
    const [first] = await workerPids(pid);
    process.kill(first as number, "SIGKILL");
    const replaced = await until("a replacement worker", async () => {
      const pids = await workerPids(pid);
      return pids.length === 2 && !pids.includes(first as number) ? pids : undefined;
    });
    await until("the replacement listening", async () => {
      const res = await send(port, "POST", "/screen", { data: "hello" });
      return res.status === 200 ? true : undefined;
    });
    // Round robin gave each about half; the survivor's share and the probes are left.
    const left = await screenedTotal(port);
    expect(left).toBeGreaterThan(3);
    expect(left).toBeLessThan(20);
    expect(output.stdout).toContain("a worker stopped (SIGKILL); starting another");

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    for (const worker of replaced) expect(() => process.kill(worker, 0)).toThrow();
  }, 180_000);

  it("stop with exit code 1 and the reason when a worker cannot start, instead of restarting it", async () => {
    const { output, exited } = await start({
      PORT: String(await freePort()),
      SCREEN_WORKERS: "2",
      SCREEN_MODEL_DIR: join(tmpdir(), "no-such-model-folder"),
    });
    expect(await exited).toBe(1);
    expect(output.stderr).toMatch(/\[screen\] failed to start: .*no-such-model-folder/);
    expect(output.stdout).toContain("a worker stopped during start-up (exit code 1); stopping");
  }, 120_000);
});

describe("worker count", () => {
  async function cgroup(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), "cgroup-"));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, ".."), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  it("is one per CPU the cgroup's quota allows, rounded up, never more than the cores", async () => {
    expect(cpuLimit(await cgroup({ "cpu.max": "200000 100000\n" }), 16)).toBe(2);
    expect(cpuLimit(await cgroup({ "cpu.max": "150000 100000\n" }), 16)).toBe(2);
    expect(cpuLimit(await cgroup({ "cpu.max": "50000 100000\n" }), 16)).toBe(1);
    expect(cpuLimit(await cgroup({ "cpu.max": "max 100000\n" }), 16)).toBe(16);
    expect(cpuLimit(await cgroup({ "cpu.max": "800000 100000\n" }), 4)).toBe(4);
    expect(
      cpuLimit(await cgroup({ "cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000" }), 8),
    ).toBe(3);
    expect(
      cpuLimit(await cgroup({ "cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000" }), 8),
    ).toBe(8);
    expect(cpuLimit(await cgroup({}), 6)).toBe(6);
  });

  it("is one on CUDA and the CPUs on CPU when auto; a number is taken as it is", () => {
    expect(workerCount("auto", "cuda", 8)).toBe(1);
    expect(workerCount("auto", "cpu", 8)).toBe(8);
    expect(workerCount(3, "cuda", 8)).toBe(3);
  });

  it("gives each worker its share of the CPUs for a mounted model's runs", () => {
    expect(workerThreads("auto", 8)).toBe(1);
    expect(workerThreads(2, 8)).toBe(4);
    expect(workerThreads(3, 8)).toBe(2);
    expect(workerThreads(16, 8)).toBe(1);
  });
});
