/**
 * `npm run bench:api`: load on loopback with autocannon against a server in a separate process.
 *
 * 1. Throughput: a bare Hono route, an authenticated GET /api/v1/config (access token, then API
 *    key; its answer is cached, so it measures the HTTP and auth layers) and GET /api/v1/users
 *    (access token, then API key; the page and its total are read from the database on every
 *    request, BENCH_USERS users) on the same server, as fast as 10 connections go; prints
 *    requests/s, p99 and the ratios to the bare route.
 * 2. Latency at a fixed 1,000 requests/s on GET /api/v1/config: prints p50/p99.
 * Each run also prints the server process's CPU time per request (Linux: /proc), and the bare
 * route's CPU per request over each route's: the ratio of requests/s the server would reach alone
 * on a core, which other work on a shared machine disturbs less than the requests/s themselves.
 * Targets: config/bare >= 0.5 and p99 < 20 ms at 1,000 requests/s (issue 2); users/bare >= 0.4
 * (issue 17).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { stopProcess } from "./lifecycle.ts";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const USERS = Number(process.env.BENCH_USERS ?? 10);
const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url));
const SERVER = fileURLToPath(new URL("./api-server.ts", import.meta.url));

// stdin is a pipe so that the server stops if this process dies without stopping it. Node itself
// (tsx as a loader, not its CLI) so that child.pid is the server, whose CPU time is read below.
const child = spawn(process.execPath, ["--import", TSX, SERVER], { stdio: ["pipe", "pipe", "inherit"] });
const ready = await new Promise<string[]>((resolve, reject) => {
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
    const line = out.split("\n").find((l) => l.startsWith("READY "));
    if (line) resolve(line.trim().split(" ").slice(1));
  });
  child.on("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
});
const [port, accessToken, apiKey] = ready;
const base = `http://127.0.0.1:${port}`;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server process's CPU time (user + system) per request, in microseconds. */
  cpuUs: number;
}

/**
 * CPU time (user + system) the server has used, in microseconds; NaN where /proc is missing. Less
 * noisy than requests/s on a shared machine, where the load generator and other work take turns
 * with the server on the same cores.
 */
function serverCpuUs(): number {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

async function load(path: string, token?: string, overallRate?: number): Promise<Figures> {
  const cpuBefore = serverCpuUs();
  const result = await autocannon({
    url: `${base}${path}`,
    connections: 10,
    duration: DURATION_S,
    ...(overallRate ? { overallRate } : {}),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: bad,
    cpuUs: (serverCpuUs() - cpuBefore) / result.requests.total,
  };
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(7)} req/s   p50 ${f.p50.toFixed(2).padStart(6)} ms   p99 ${f.p99.toFixed(2).padStart(6)} ms   server CPU ${f.cpuUs.toFixed(0).padStart(4)} µs/req   errors ${f.errors}`;

try {
  await load("/bench/bare"); // warm-up of both sides' JITs
  const bare = await load("/bench/bare");
  const config = await load("/api/v1/config", accessToken);
  const configKey = await load("/api/v1/config", apiKey);
  const users = await load("/api/v1/users", accessToken);
  const usersKey = await load("/api/v1/users", apiKey);
  const fixed = await load("/api/v1/config", accessToken, 1000);
  console.log(
    `Lakesmith bench:api (loopback, autocannon, 10 connections, ${DURATION_S} s per run, ${USERS} users, Node ${process.version})`,
  );
  console.log(`bare Hono route              ${fmt(bare)}`);
  console.log(`GET /api/v1/config (token)   ${fmt(config)}`);
  console.log(`GET /api/v1/config (API key) ${fmt(configKey)}`);
  console.log(`GET /api/v1/users (token)    ${fmt(users)}`);
  console.log(`GET /api/v1/users (API key)  ${fmt(usersKey)}`);
  const ratio = (f: Figures) => (f.rps / bare.rps).toFixed(2);
  console.log(
    `ratio config/bare            ${ratio(config)} (token)   ${ratio(configKey)} (API key)   target >= 0.5`,
  );
  console.log(
    `ratio users/bare             ${ratio(users)} (token)   ${ratio(usersKey)} (API key)   target >= 0.4`,
  );
  const cpuRatio = (f: Figures) => (bare.cpuUs / f.cpuUs).toFixed(2);
  console.log(
    `server CPU, bare/route       config ${cpuRatio(config)} (token)   users ${cpuRatio(users)} (token)   ${cpuRatio(usersKey)} (API key)`,
  );
  console.log(`GET /api/v1/config @ 1000/s  ${fmt(fixed)}   target p99 < 20 ms`);
} finally {
  await stopProcess(child);
}
