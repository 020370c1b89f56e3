/**
 * Load as users make it, for the benches: requests arrive independently (Poisson) at a rate, over
 * at most 10 keep-alive connections, each latency counted from when its request was due (a request
 * queued behind busy sockets waits on the clock). Arrivals and offsets come from a seeded generator,
 * so two runs send the same requests. Also the server's CPU time, read from /proc.
 *
 * @example
 * const r = await openLoop({ port, path: (o) => `/api/v1/tables?offset=${o}`, headers, maxOffset: 9_900, rate: 200, seconds: 10 });
 */
import { readFileSync } from "node:fs";
import { Agent, get } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface OpenLoop {
  port: number;
  /** The path of a request for a random offset in [0, maxOffset). */
  path: (offset: number) => string;
  headers: Record<string, string>;
  maxOffset: number;
  rate: number;
  seconds: number;
}

export async function openLoop(load: OpenLoop) {
  const next = random(42);
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  const latencies: number[] = [];
  let errors = 0;
  const send = (due: number, offset: number) =>
    new Promise<void>((resolve) => {
      const req = get(
        { host: "127.0.0.1", port: load.port, path: load.path(offset), headers: load.headers, agent },
        (res) => {
          res.resume();
          res.on("end", () => {
            if (res.statusCode !== 200) errors++;
            latencies.push(performance.now() - due);
            resolve();
          });
        },
      );
      req.on("error", () => {
        errors++;
        resolve();
      });
    });
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  const end = start + load.seconds * 1000;
  for (let due = start; due < end; due += (-Math.log(1 - next()) * 1000) / load.rate) {
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    // The agent queues a request while all 10 sockets are busy; its wait counts from `due`.
    inFlight.push(send(due, Math.floor(next() * load.maxOffset)));
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), count: latencies.length, errors };
}

/** CPU time (user + system) the process has used, in ms; NaN where /proc is missing. */
export function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** A seeded generator (mulberry32), so two runs send the same arrivals and offsets. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
