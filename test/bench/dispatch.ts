/**
 * `npm run bench:dispatch`: how fast the control plane hands work to agents, and what connected
 * agents cost it. The control plane runs in its own process (dispatch-server.ts); agents are
 * protocol clients over real WebSockets on loopback that acknowledge every offer and finish at once,
 * so the figures are the control plane's, not a job handler's.
 *
 * 1. Enqueue-to-start latency over 1,000 jobs (POST /api/v1/jobs at a steady rate, 4 agents of
 *    capacity 8): from sending the enqueue request to the agent holding the lease (`leased`), after
 *    a warm-up of 300 jobs that are not counted.
 * 2. Memory (RSS after GC) of the control plane with 1,000 connected idle agents.
 * Targets (issue 4): p50 < 20 ms, p99 < 100 ms; < 300 MB with 1,000 agents.
 * Latency is measured at each enqueue rate in BENCH_RATES, to show where the control plane saturates.
 * Environment: BENCH_JOBS (1000), BENCH_RATES (jobs/s, "50,100"), BENCH_IDLE_AGENTS (1000),
 * BENCH_PROFILE (a directory: write a CPU profile of the control plane there).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PlaneMessageSchema } from "@lakesmith/shared/protocol";
import WebSocket from "ws";
import { connectAgent, hello, type TestAgentSocket } from "../../control-plane/test/support/agent-client.ts";
import { stopProcess } from "./lifecycle.ts";

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const RATES = (process.env.BENCH_RATES ?? "50,100").split(",").map(Number);
const IDLE_AGENTS = Number(process.env.BENCH_IDLE_AGENTS ?? 1000);
const SERVER = fileURLToPath(new URL("./dispatch-server.ts", import.meta.url));

const child = spawn(
  process.execPath,
  [
    ...(process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
    "--expose-gc",
    "--import",
    "tsx",
    SERVER,
  ],
  {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, NODE_OPTIONS: "" },
  },
);
const lines: ((line: string) => void)[] = [];
let buffered = "";
child.stdout.on("data", (d) => {
  buffered += d;
  for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
    const line = buffered.slice(0, i).trim();
    buffered = buffered.slice(i + 1);
    for (const listener of lines) listener(line);
  }
});
const awaitLine = (prefix: string) =>
  new Promise<string[]>((resolve, reject) => {
    const listener = (line: string) => {
      if (!line.startsWith(prefix)) return;
      lines.splice(lines.indexOf(listener), 1);
      resolve(line.split(" ").slice(1));
    };
    lines.push(listener);
    child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
  });
const [base = "", adminKey = ""] = await awaitLine("READY ");

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

async function memory(): Promise<{ rss: number; heap: number }> {
  const reply = awaitLine("MEM ");
  child.stdin.write("mem\n");
  const [rss = "0", heap = "0"] = await reply;
  return { rss: Number(rss), heap: Number(heap) };
}

async function agent(name: string, capacity: number) {
  const { token } = (await api("POST", "/api/v1/agents", { name })) as { token: string };
  const socket = await connectAgent(base, token);
  socket.send(hello({ kinds: ["noop"], capacity }));
  await socket.next("welcome", 30_000);
  return socket;
}

/**
 * An agent that acknowledges every offer and finishes every leased job at once, driven by its
 * socket's messages (no waits with timers, so nothing is left pending when it is closed).
 */
async function worker(name: string, capacity: number, onLeased: (jobId: string) => void) {
  const { token } = (await api("POST", "/api/v1/agents", { name })) as { token: string };
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}/api/v1/agents/connect`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const send = (message: unknown) => ws.send(JSON.stringify(message));
  const welcomed = new Promise<void>((resolve, reject) => {
    ws.once("error", reject);
    ws.on("message", (data) => {
      const message = PlaneMessageSchema.parse(JSON.parse(String(data)));
      if (message.type === "welcome") resolve();
      else if (message.type === "offer")
        send({ type: "ack", job_id: message.job.id, fence: message.job.fence });
      else if (message.type === "leased") {
        onLeased(message.job_id);
        send({ type: "result", job_id: message.job_id, fence: message.fence, outcome: "succeeded" });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  send(hello({ kinds: ["noop"], capacity }));
  await welcomed;
  return ws;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

const started = new Map<string, number>();
/** Resolves once every job of the batch has started. */
async function allStarted(batch: Map<string, number>) {
  while ([...batch.keys()].some((id) => !started.has(id))) await new Promise((r) => setTimeout(r, 10));
}

/** Enqueues `count` jobs at `rate` per second; resolves with when each enqueue request was sent. */
async function enqueueAtRate(count: number, rate: number): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  const posts: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = performance.now();
    posts.push(
      api("POST", "/api/v1/jobs", { kind: "noop", payload: {} }).then((job) => {
        sentAt.set(job.id as string, at);
      }),
    );
  }
  await Promise.all(posts);
  return sentAt;
}

/** Every socket still open, closed when the bench ends (however it ends). */
const sockets: { terminate(): void }[] = [];
try {
  // 1. Latency.
  const onLeased = (id: string) => started.set(id, performance.now());
  for (let i = 0; i < 4; i++) sockets.push(await worker(`bench-worker-${i}`, 8, onLeased));

  // Warm-up (not measured): the first requests pay for JIT and lazily loaded modules.
  await allStarted(await enqueueAtRate(300, RATES[0] ?? 50));
  console.log(
    `enqueue-to-start over ${JOBS} jobs (4 agents × capacity 8, loopback; targets: p50 < 20 ms, p99 < 100 ms):`,
  );
  for (const rate of RATES) {
    const sentAt = await enqueueAtRate(JOBS, rate);
    await allStarted(sentAt);
    const latencies = [...sentAt].map(([id, at]) => (started.get(id) ?? 0) - at).sort((a, b) => a - b);
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(
      `  at ${rate} jobs/s: p50 ${f(quantile(latencies, 0.5))}   p99 ${f(quantile(latencies, 0.99))}   max ${f(latencies.at(-1) ?? 0)}`,
    );
  }
  for (const w of sockets.splice(0)) w.terminate();

  // 2. Memory with idle agents.
  const before = await memory();
  const idle: TestAgentSocket[] = [];
  const t1 = performance.now();
  for (let i = 0; i < IDLE_AGENTS; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, IDLE_AGENTS - i) }, (_, j) => agent(`bench-idle-${i + j}`, 4)),
    );
    idle.push(...batch);
    sockets.push(...batch);
  }
  const connectS = ((performance.now() - t1) / 1000).toFixed(1);
  const after = await memory();
  const listed = await api("GET", "/api/v1/agents?limit=1");
  console.log(`control plane memory with ${idle.length} connected idle agents (connected in ${connectS} s):`);
  console.log(
    `  RSS ${mb(after.rss)} (before the agents: ${mb(before.rss)}); heap ${mb(after.heap)}; agents listed: ${listed.total}   (target: < 300 MB)`,
  );
} finally {
  for (const s of sockets) s.terminate();
  await stopProcess(child);
}
