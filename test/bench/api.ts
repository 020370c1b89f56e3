/**
 * `npm run bench:api`: load on loopback with autocannon against a server in a separate process.
 *
 * 1. Throughput: a bare Hono route, an authenticated GET /api/v1/config (access token, then API
 *    key; its answer is cached, so it measures the HTTP and auth layers) and GET /api/v1/users
 *    (access token, then API key; the page and its total are read from the database on every
 *    request, BENCH_USERS users) on the same server, as fast as 10 connections go; prints
 *    requests/s, p99 and the ratios to the bare route.
 * 2. Latency at a fixed 1,000 requests/s on GET /api/v1/config: prints p50/p99.
 * Targets: config/bare >= 0.5 and p99 < 20 ms at 1,000 requests/s (issue 2); users/bare >= 0.4
 * (issue 17).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { stopProcess } from "./lifecycle.ts";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const USERS = Number(process.env.BENCH_USERS ?? 10);
const TSX = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
const SERVER = fileURLToPath(new URL("./api-server.ts", import.meta.url));

// stdin is a pipe so that the server stops if this process dies without stopping it.
const child = spawn(TSX, [SERVER], { stdio: ["pipe", "pipe", "inherit"] });
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
}

async function load(path: string, token?: string, overallRate?: number): Promise<Figures> {
  const result = await autocannon({
    url: `${base}${path}`,
    connections: 10,
    duration: DURATION_S,
    ...(overallRate ? { overallRate } : {}),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: bad };
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(7)} req/s   p50 ${f.p50.toFixed(2).padStart(6)} ms   p99 ${f.p99.toFixed(2).padStart(6)} ms   errors ${f.errors}`;

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
  console.log(`GET /api/v1/config @ 1000/s  ${fmt(fixed)}   target p99 < 20 ms`);
} finally {
  await stopProcess(child);
}
