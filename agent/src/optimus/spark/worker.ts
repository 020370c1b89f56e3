/**
 * The threads of the parallel Spark reader (`parallel.ts`), by the role they are started with:
 *
 * - `reader`: reads whole logs as the main thread hands them out, through the port it serves the
 *   store's reads on (`store/port.ts`: no store SDK is loaded here), and posts their executions back as
 *   `LoggedQuery` batches. A log whose zstd window is large is decoded in the window thread when the
 *   main thread says so, else given back unread (`deferred`) for the reader that holds it.
 * - `window`: the window thread (`window-decoder.ts`), serving the readers' ports it is sent.
 *
 * Reader protocol (every message is structured-cloned; `Date`s survive): see `protocol.ts`.
 * Rules: at most `maxInFlight` batches are posted and not yet credited; past that the read waits,
 * so a worker never runs far ahead of the analysis. Within a log, batches go out in log order.
 * `stats` are this worker's running totals (logs, lines, malformed lines).
 */
import { parentPort, workerData } from "node:worker_threads";
import { portStore } from "../../store/port.ts";
import type { LoggedQuery } from "../query.ts";
import type { SparkLog } from "./files.ts";
import { sparkLoggedQuery } from "./logged.ts";
import type { SparkThreadData, SparkWorkerData, SparkWorkerReply, SparkWorkerRequest } from "./protocol.ts";
import { readSparkLog, type SparkReadStats } from "./reader.ts";
import {
  LargeWindowLog,
  logDecoder,
  serveWindow,
  type WindowClient,
  windowClient,
} from "./window-decoder.ts";

const port = parentPort;
if (!port) throw new Error("optimus worker: not started as a worker thread");
const data = workerData as SparkThreadData;
if (data.role === "window")
  port.on("message", (message: SparkWorkerRequest) => {
    if (message.type === "window") serveWindow(message.port);
  });
else reader(data);

function reader({ uri, store: storePort, batchSize, maxInFlight }: SparkWorkerData): void {
  const to = port as NonNullable<typeof port>;
  const store = portStore(uri, storePort);
  const stats: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 };
  const totals = () => ({ logs: stats.logs, lines: stats.lines, malformedLines: stats.malformedLines });
  const post = (reply: SparkWorkerReply) => to.postMessage(reply);

  let inFlight = 0;
  let wake: (() => void) | undefined;
  const logs: { log: SparkLog; window: boolean }[] = [];
  let reading = false;
  let window: WindowClient | undefined;

  /** Resolves once fewer than `maxInFlight` batches are out. */
  async function room(): Promise<void> {
    while (inFlight >= maxInFlight) await new Promise<void>((resolve) => (wake = resolve));
  }

  async function send(queries: LoggedQuery[]): Promise<void> {
    await room();
    inFlight++;
    post({ type: "batch", queries, stats: totals() });
  }

  async function read(log: SparkLog, withWindow: boolean): Promise<void> {
    const before = { ...stats };
    let batch: LoggedQuery[] = [];
    try {
      const decode = logDecoder(withWindow ? window : undefined);
      for await (const execution of readSparkLog(store, log, stats, decode)) {
        batch.push(sparkLoggedQuery(execution));
        if (batch.length >= batchSize) {
          await send(batch);
          batch = [];
        }
      }
    } catch (error) {
      if (!(error instanceof LargeWindowLog)) throw error;
      Object.assign(stats, before);
      post({ type: "deferred", stats: totals() });
      return;
    }
    if (batch.length > 0) await send(batch);
    post({ type: "done", stats: totals() });
  }

  async function drain(): Promise<void> {
    if (reading) return;
    reading = true;
    try {
      for (let next = logs.shift(); next; next = logs.shift()) await read(next.log, next.window);
      reading = false;
    } catch (error) {
      post({ type: "error", message: error instanceof Error ? error.message : String(error) });
    }
  }

  to.on("message", (message: SparkWorkerRequest) => {
    if (message.type === "credit") {
      inFlight--;
      wake?.();
      wake = undefined;
    } else if (message.type === "window") window = windowClient(message.port);
    else {
      logs.push({ log: message.log, window: message.window });
      void drain();
    }
  });
}
