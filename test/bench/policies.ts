/**
 * `npm run bench:policies`: the policy engine at scale, on the embedded libSQL control plane
 * (`policies-server.ts` seeds and measures the server side). Targets (issue 20): with 100,000
 * managed tables under 1 catalog policy and 100 prefix policies, effective-policy resolution of all
 * under 1 s, a tick with 1,000 due under 0.2 s, `GET /api/v1/managedtables` p99 under 25 ms at
 * 200 req/s (open loop, `open-loop.ts`). A missed target sets exit code 1; every figure is printed.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { exitOnInterrupt, stopProcess } from "./lifecycle.ts";
import { cpuMs, openLoop } from "./open-loop.ts";

const RATE = Number(process.env.BENCH_RATE ?? 200);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const SERVER = fileURLToPath(new URL("./policies-server.ts", import.meta.url));
exitOnInterrupt();

let failed = false;
const verdict = (ok: boolean) => {
  if (!ok) failed = true;
  return ok ? "met" : "MISSED";
};

const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url));
const child = fork(SERVER, [], {
  execArgv: ["--import", TSX, ...(process.env.BENCH_PLANE_NODE_ARGS ?? "").split(" ").filter(Boolean)],
  stdio: ["pipe", "inherit", "inherit", "ipc"],
});
const ready = await new Promise<Record<string, number | string>>((resolve, reject) => {
  child.once("message", (m) => resolve(m as Record<string, number | string>));
  child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
});
const n = (k: string) => Number(ready[k]);
console.log(`managed tables: ${ready.managed} (${ready.prefixed} under a prefix policy)`);
console.log(
  `resolution of all: ${n("resolveMs").toFixed(0)} ms (target < 1000: ${verdict(n("resolveMs") < 1000)})`,
);
console.log(
  `tick with ${ready.due} due: ${n("tickMs").toFixed(0)} ms, ${ready.queued} jobs queued (target < 200: ${verdict(n("tickMs") < 200 && n("due") === 1000)})`,
);
console.log(`idle tick (${ready.idleDue} due): ${n("idleMs").toFixed(1)} ms`);
const headers = { authorization: `Bearer ${ready.key}` };
const port = n("port");
await openLoop({ port, path: () => "/api/v1/managedtables", headers, maxOffset: 1, rate: RATE, seconds: 2 });
for (const [label, path] of [
  ["page_size=100", "/api/v1/managedtables?page_size=100"],
  ["q=t0000*", "/api/v1/managedtables?q=t0000*&page_size=100"],
] as const) {
  const before = cpuMs(child.pid);
  const r = await openLoop({
    port,
    path: () => path,
    headers,
    maxOffset: 1,
    rate: RATE,
    seconds: DURATION_S,
  });
  const cpu = (cpuMs(child.pid) - before) / r.count;
  console.log(
    `GET /api/v1/managedtables ${label.padEnd(14)} p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms (target < 25: ${verdict(r.p99 < 25 && r.errors === 0)})  ${(r.count / DURATION_S).toFixed(0)} req/s, ${cpu.toFixed(2)} ms CPU each, ${r.errors} errors`,
  );
}
await stopProcess(child);
process.exitCode = failed ? 1 : 0;
