/**
 * The worker thread of the parallel Spark reader (`parallel.ts`): opens its own store from the
 * serializable options it was started with (`workerData`), then reads whole logs as the main
 * thread hands them out, and posts their executions back as `LoggedQuery` batches.
 *
 * Protocol (every message is structured-cloned; `Date`s survive):
 * - in: `{ type: "log", log }` (one log to read), `{ type: "credit" }` (one batch consumed).
 * - out: `{ type: "batch", queries, stats }`, `{ type: "done", stats }` (the log is read, send the
 *   next), `{ type: "error", message }` (the read failed; the worker then waits to be terminated).
 * Rules: at most `maxInFlight` batches are posted and not yet credited; past that the read waits,
 * so a worker never runs far ahead of the analysis. Within a log, batches go out in log order.
 * `stats` are this worker's running totals (logs, lines, malformed lines).
 */
import { parentPort, workerData } from "node:worker_threads";
import { storeFor } from "../../store/index.ts";
import type { LoggedQuery } from "../query.ts";
import type { SparkLog } from "./files.ts";
import { sparkLoggedQuery } from "./logged.ts";
import type { SparkWorkerData, SparkWorkerReply, SparkWorkerRequest } from "./protocol.ts";
import { readSparkLog, type SparkReadStats } from "./reader.ts";

const port = parentPort;
if (!port) throw new Error("optimus worker: not started as a worker thread");
const { uri, storeOptions, batchSize, maxInFlight } = workerData as SparkWorkerData;
const store = storeFor(uri, storeOptions);
const stats: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 };
const totals = () => ({ logs: stats.logs, lines: stats.lines, malformedLines: stats.malformedLines });
const post = (reply: SparkWorkerReply) => port.postMessage(reply);

let inFlight = 0;
let wake: (() => void) | undefined;
const logs: SparkLog[] = [];
let reading = false;

/** Resolves once fewer than `maxInFlight` batches are out. */
async function room(): Promise<void> {
  while (inFlight >= maxInFlight) await new Promise<void>((resolve) => (wake = resolve));
}

async function send(queries: LoggedQuery[]): Promise<void> {
  await room();
  inFlight++;
  post({ type: "batch", queries, stats: totals() });
}

async function read(log: SparkLog): Promise<void> {
  let batch: LoggedQuery[] = [];
  for await (const execution of readSparkLog(store, log, stats)) {
    batch.push(sparkLoggedQuery(execution));
    if (batch.length >= batchSize) {
      await send(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await send(batch);
  post({ type: "done", stats: totals() });
}

async function drain(): Promise<void> {
  if (reading) return;
  reading = true;
  try {
    for (let log = logs.shift(); log; log = logs.shift()) await read(log);
    reading = false;
  } catch (error) {
    post({ type: "error", message: error instanceof Error ? error.message : String(error) });
  }
}

port.on("message", (message: SparkWorkerRequest) => {
  if (message.type === "credit") {
    inFlight--;
    wake?.();
    wake = undefined;
    return;
  }
  logs.push(message.log);
  void drain();
});
