/**
 * The Spark reader on every core: whole logs (a file, or a rolling `eventlog_v2_*` folder) are read
 * in parallel by a pool of reader threads (`worker.ts`), and their executions are yielded here as
 * `LoggedQuery` records as they arrive.
 *
 * Rules:
 * - Readers: min(cores, logs, cap); the cap is `options.workers` (the handler's: what fits the
 *   job's memory, `workersWithin`), else the env `LAKESMITH_AGENT_OPTIMUS_READERS`, else none. One
 *   reader or one log means the in-thread reader (`readSparkQueries`).
 * - Readers read the store through this thread (`serveReads`): any `ObjectStore` works, and no
 *   reader loads a store SDK.
 * - Logs are handed out one at a time, largest first (`Schedule`); within a log, queries keep the
 *   log's order; between logs, order is whatever finishes first.
 * - Large zstd windows (Databricks: 128 MiB) are decoded in one window thread for every reader
 *   (`window-decoder.ts`), one log at a time, so the pool holds one large window whatever its size.
 * - Backpressure: a reader posts at most `MAX_IN_FLIGHT` batches of `BATCH` queries that this thread
 *   has not yet yielded, then waits.
 * - Memory (measured, two readers on Databricks and Dataproc logs): about 60 MB a reader (its small
 *   windows, its V8 heap with the young generation capped at 8 MiB) and 180 MB for the window thread.
 * - `signal` aborting, the consumer stopping, or any thread failing terminates every thread; a
 *   reader's failure is thrown with its message. Stats are the readers' totals, summed.
 */
import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { ObjectStore } from "../../store/index.ts";
import { serveReads } from "../../store/port.ts";
import type { LoggedQuery, QueryLogReader, ReadStats } from "../query.ts";
import { type SparkLog, sparkLogs } from "./files.ts";
import { readSparkQueries } from "./logged.ts";
import type { SparkThreadData, SparkWorkerData, SparkWorkerReply, SparkWorkerRequest } from "./protocol.ts";

export interface SparkReadOptions {
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
    if (sparkWorkerCount(2, options.workers) <= 1) return yield* readSparkQueries(store, prefix, stats);
    const logs: SparkLog[] = [];
    for await (const log of sparkLogs(store, prefix)) logs.push(log);
    const n = sparkWorkerCount(logs.length, options.workers);
    if (n <= 1) return yield* readSparkQueries(store, prefix, stats);
    yield* inWorkers(store, logs, n, stats, options.signal);
  };
}

/** The workers that read `logs` logs: min(cores, logs, cap), the cap `workers` or the environment's. */
export function sparkWorkerCount(logs: number, workers = envCap(process.env[READERS_ENV])): number {
  return Math.min(availableParallelism(), logs, workers);
}

/** The memory a reader thread takes: its small zstd windows and its heap (about 60 MB measured). */
export const READER_MB = 96;
/** The window thread's: a 128 MiB Databricks window, its buffers and heap (about 180 MB measured). */
export const WINDOW_THREAD_MB = 192;

/**
 * The pool's cap within a job's memory (the agent's `memory_limit_mb`: the window thread and the
 * readers), and the environment's cap: at least 1 (the in-thread reader).
 */
export function workersWithin(memoryLimitMb: number, env = process.env[READERS_ENV]): number {
  const readers = Math.floor((memoryLimitMb - WINDOW_THREAD_MB) / READER_MB);
  return Math.max(1, Math.min(envCap(env), readers));
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

/**
 * Which reader reads which log. Logs go out largest first. A reader that finds a log's zstd window
 * large gives it back (`deferred`); such logs then go, one at a time, to one reader at a time (the
 * `holder`), which decodes them in the window thread (started with the first such log; see
 * `window-decoder.ts`). A reader with nothing it may take waits until the holder is done.
 */
export class Schedule {
  private readonly pending: SparkLog[];
  private readonly large: SparkLog[] = [];
  private readonly current: (SparkLog | undefined)[];
  private holder: number | undefined;
  private windowStarted = false;

  constructor(
    logs: SparkLog[],
    private readonly readers: number,
    private readonly give: (reader: number, log: SparkLog, window: boolean) => void,
    private readonly startWindow: () => void,
  ) {
    this.pending = [...logs].sort((a, b) => size(b) - size(a));
    this.current = Array.from({ length: readers }, () => undefined);
  }

  /** Whether any log is being read or still to be. */
  get busy(): boolean {
    return this.current.some((log) => log !== undefined) || this.pending.length + this.large.length > 0;
  }

  start(): void {
    for (let r = 0; r < this.readers; r++) this.assign(r);
  }

  /** `reader` finished its log (`deferred`: gave it back unread). */
  finished(reader: number, deferred: boolean): void {
    const log = this.current[reader];
    this.current[reader] = undefined;
    if (this.holder === reader) this.holder = undefined;
    if (deferred && log) {
      if (!this.windowStarted) this.startWindow();
      this.windowStarted = true;
      this.large.push(log);
    }
    this.assign(reader);
    for (let r = 0; r < this.readers; r++) if (this.current[r] === undefined) this.assign(r);
  }

  private assign(reader: number): void {
    if (this.current[reader]) return;
    const window = this.holder === undefined && this.large.length > 0;
    const log = window ? this.large.shift() : this.pending.shift();
    if (!log) return;
    if (window) this.holder = reader;
    this.current[reader] = log;
    this.give(reader, log, window);
  }
}

async function* inWorkers(
  store: ObjectStore,
  logs: SparkLog[],
  n: number,
  stats: ReadStats,
  signal?: AbortSignal,
): AsyncIterable<LoggedQuery> {
  signal?.throwIfAborted();
  const events: Event[] = [];
  let wake: (() => void) | undefined;
  const push = (event: Event) => {
    events.push(event);
    wake?.();
    wake = undefined;
  };
  const onAbort = () => push({ failure: signal?.reason });
  signal?.addEventListener("abort", onAbort, { once: true });
  const totals: ReadStats[] = [];
  let closing = false;
  const watch = (worker: Worker, i: number | undefined) => {
    if (i !== undefined) worker.on("message", (reply: SparkWorkerReply) => push({ worker: i, reply }));
    worker.on("error", (error) => push({ failure: error }));
    worker.on("messageerror", (error) => push({ failure: error }));
    worker.on("exit", (code) => {
      if (!closing)
        push({
          failure: new Error(`Spark log reader thread exited (code ${code}) before its logs were read`),
        });
    });
    return worker;
  };
  const served: MessagePort[] = [];
  const workers = Array.from({ length: n }, (_, i) => {
    totals.push({ logs: 0, lines: 0, malformedLines: 0 });
    // The reader reads the store through this thread (`serveReads`): it loads no store SDK.
    const { port1, port2 } = new MessageChannel();
    serveReads(store, port1);
    served.push(port1);
    const data: SparkWorkerData = {
      role: "reader",
      uri: store.uri,
      store: port2,
      batchSize: BATCH,
      maxInFlight: MAX_IN_FLIGHT,
    };
    return watch(startWorker(data, [port2]), i);
  });
  let windowThread: Worker | undefined;
  const schedule = new Schedule(
    logs,
    n,
    (reader, log, window) =>
      workers[reader]?.postMessage({ type: "log", log, window } satisfies SparkWorkerRequest),
    () => {
      // Each reader gets its own port to the window thread, before any log it may decode there.
      const thread = watch(startWorker({ role: "window" }), undefined);
      windowThread = thread;
      for (const worker of workers) {
        const { port1, port2 } = new MessageChannel();
        thread.postMessage({ type: "window", port: port1 } satisfies SparkWorkerRequest, [port1]);
        worker.postMessage({ type: "window", port: port2 } satisfies SparkWorkerRequest, [port2]);
      }
    },
  );
  schedule.start();
  try {
    while (schedule.busy) {
      while (events.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const event = events.shift() as Event;
      if ("failure" in event) throw event.failure;
      const { worker, reply } = event;
      if (reply.type === "error") throw new Error(reply.message);
      totals[worker] = reply.stats;
      sum(totals, stats);
      if (reply.type === "batch") {
        yield* reply.queries;
        workers[worker]?.postMessage({ type: "credit" } satisfies SparkWorkerRequest);
        continue;
      }
      schedule.finished(worker, reply.type === "deferred");
    }
  } finally {
    closing = true;
    signal?.removeEventListener("abort", onAbort);
    await Promise.all([...workers, ...(windowThread ? [windowThread] : [])].map((w) => w.terminate()));
    for (const port of served) port.close();
  }
}

/** A worker thread: the bundled entry beside the agent's bundle, or the sources through tsx. */
function startWorker(data: SparkThreadData, transferList: MessagePort[] = []): Worker {
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = new URL(fromSources ? "./worker-tsx.mjs" : "./optimus-worker.js", import.meta.url);
  // A small young generation: a worker's garbage is short-lived lines and plans (two workers on
  // Databricks and Dataproc logs: 632 -> 580 MB peak RSS, same CPU time).
  return new Worker(entry, {
    workerData: data,
    transferList,
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
