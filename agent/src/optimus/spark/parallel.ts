/**
 * The Spark reader on every core: whole logs (a file, or a rolling `eventlog_v2_*` folder) are read
 * in parallel by a pool of worker threads (`worker.ts`), each with its own store and zstd decoder,
 * and their executions are yielded here as `LoggedQuery` records as they arrive.
 *
 * Rules:
 * - Workers: min(cores, logs, cap); the cap is `options.workers` (the handler's: what fits the
 *   job's memory, `workersWithin`), else the env `LAKESMITH_AGENT_OPTIMUS_READERS`, else none. One worker, one log, or no `storeOptions` (the
 *   workers could not reopen the store) means the in-thread reader (`readSparkQueries`).
 * - A worker reopens the store as `storeFor(store.uri, storeOptions)`: the options must be plain
 *   data (credentials from the environment are fine: workers share it).
 * - Logs are handed out one at a time, largest first; within a log, queries keep the log's order;
 *   between logs, order is whatever finishes first.
 * - Backpressure: a worker posts at most `MAX_IN_FLIGHT` batches of `BATCH` queries that this thread
 *   has not yet yielded, then waits.
 * - Memory: each worker holds its zstd window (up to 128 MiB for Databricks logs) and two 16 MiB
 *   output buffers, besides its own V8 heap (its young generation capped at 8 MiB): about 220 MB
 *   while it reads a Databricks log.
 * - `signal` aborting, the consumer stopping, or any worker failing terminates every worker; a
 *   worker's failure is thrown with its message. Stats are the workers' totals, summed.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { ObjectStore, StoreOptions } from "../../store/index.ts";
import type { LoggedQuery, QueryLogReader, ReadStats } from "../query.ts";
import { type SparkLog, sparkLogs } from "./files.ts";
import { readSparkQueries } from "./logged.ts";
import type { SparkWorkerData, SparkWorkerReply } from "./protocol.ts";

export interface SparkReadOptions {
  /** How workers reopen the store: `storeFor(store.uri, storeOptions)`. Without it, one thread. */
  storeOptions?: StoreOptions;
  /** The most workers (1: read in this thread). Default: `LAKESMITH_AGENT_OPTIMUS_READERS`, else cores. */
  workers?: number;
  signal?: AbortSignal;
}

export const READERS_ENV = "LAKESMITH_AGENT_OPTIMUS_READERS";
const BATCH = 256;
const MAX_IN_FLIGHT = 4;

/** The Spark `QueryLogReader`, reading logs in worker threads where there is more than one. */
export function sparkQueryReader(options: SparkReadOptions = {}): QueryLogReader {
  return async function* (store, prefix, stats) {
    if (!options.storeOptions || sparkWorkerCount(2, options.workers) <= 1)
      return yield* readSparkQueries(store, prefix, stats);
    const logs: SparkLog[] = [];
    for await (const log of sparkLogs(store, prefix)) logs.push(log);
    const n = sparkWorkerCount(logs.length, options.workers);
    if (n <= 1) return yield* readSparkQueries(store, prefix, stats);
    yield* inWorkers(store, options.storeOptions, logs, n, stats, options.signal);
  };
}

/** The workers that read `logs` logs: min(cores, logs, cap), the cap `workers` or the environment's. */
export function sparkWorkerCount(logs: number, workers = envCap(process.env[READERS_ENV])): number {
  return Math.min(availableParallelism(), logs, workers);
}

/**
 * The memory one reading worker takes at most: a Databricks log's 128 MiB zstd window, the decoder's
 * and the copy's 16 MiB buffers, and the worker's own heap (about 220-240 MB measured).
 */
export const SPARK_WORKER_MB = 256;

/**
 * The pool's cap within a job's memory (the agent's `memory_limit_mb`), and the environment's cap:
 * at least 1 (the in-thread reader).
 */
export function workersWithin(memoryLimitMb: number, env = process.env[READERS_ENV]): number {
  return Math.max(1, Math.min(envCap(env), Math.floor(memoryLimitMb / SPARK_WORKER_MB)));
}

/** The worker count the environment caps the pool at (no cap: unset). */
export function envCap(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return Number.POSITIVE_INFINITY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${READERS_ENV} must be a whole number >= 1, not '${value}'`);
  return n;
}

type Event = { worker: number; reply: SparkWorkerReply } | { failure: unknown };

async function* inWorkers(
  store: ObjectStore,
  storeOptions: StoreOptions,
  logs: SparkLog[],
  n: number,
  stats: ReadStats,
  signal?: AbortSignal,
): AsyncIterable<LoggedQuery> {
  signal?.throwIfAborted();
  const pending = [...logs].sort((a, b) => size(b) - size(a));
  const events: Event[] = [];
  let wake: (() => void) | undefined;
  const push = (event: Event) => {
    events.push(event);
    wake?.();
    wake = undefined;
  };
  const onAbort = () => push({ failure: signal?.reason });
  signal?.addEventListener("abort", onAbort, { once: true });
  const data: SparkWorkerData = {
    uri: store.uri,
    storeOptions,
    batchSize: BATCH,
    maxInFlight: MAX_IN_FLIGHT,
  };
  const totals: ReadStats[] = [];
  let closing = false;
  const workers = Array.from({ length: n }, (_, i) => {
    totals.push({ logs: 0, lines: 0, malformedLines: 0 });
    const worker = startWorker(data);
    worker.on("message", (reply: SparkWorkerReply) => push({ worker: i, reply }));
    worker.on("error", (error) => push({ failure: error }));
    worker.on("messageerror", (error) => push({ failure: error }));
    worker.on("exit", (code) => {
      if (!closing)
        push({
          failure: new Error(`Spark log reader thread exited (code ${code}) before its logs were read`),
        });
    });
    worker.postMessage({ type: "log", log: pending.shift() });
    return worker;
  });
  let active = n;
  try {
    while (active > 0) {
      while (events.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const event = events.shift() as Event;
      if ("failure" in event) throw event.failure;
      const { worker, reply } = event;
      if (reply.type === "error") throw new Error(reply.message);
      totals[worker] = reply.stats;
      sum(totals, stats);
      if (reply.type === "batch") {
        yield* reply.queries;
        workers[worker]?.postMessage({ type: "credit" });
        continue;
      }
      const log = pending.shift();
      if (log) workers[worker]?.postMessage({ type: "log", log });
      else active--;
    }
  } finally {
    closing = true;
    signal?.removeEventListener("abort", onAbort);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** A worker thread: the bundled entry beside the agent's bundle, or the sources through tsx. */
function startWorker(data: SparkWorkerData): Worker {
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = new URL(fromSources ? "./worker-tsx.mjs" : "./optimus-worker.js", import.meta.url);
  // A small young generation: a worker's garbage is short-lived lines and plans (two workers on
  // Databricks and Dataproc logs: 632 -> 580 MB peak RSS, same CPU time).
  return new Worker(entry, {
    workerData: data,
    execArgv: [],
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
}

const size = (log: SparkLog) => log.parts.reduce((sum, part) => sum + part.size, 0);

function sum(totals: ReadStats[], to: ReadStats): void {
  to.logs = 0;
  to.lines = 0;
  to.malformedLines = 0;
  for (const t of totals) {
    to.logs += t.logs;
    to.lines += t.lines;
    to.malformedLines += t.malformedLines;
  }
}
