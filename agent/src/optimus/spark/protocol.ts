/**
 * The messages between the parallel Spark reader (`parallel.ts`) and its threads (`worker.ts`):
 * plain data only, as `postMessage` clones it (ports are transferred).
 */
import type { MessagePort } from "node:worker_threads";
import type { LoggedQuery, ReadStats } from "../query.ts";
import type { SparkLog } from "./files.ts";

/** What a reader thread starts with (the window thread starts with `{ role: "window" }`). */
export interface SparkWorkerData {
  role: "reader";
  /** The store's URI; the reader reads it through `store` (`portStore`), served by the main thread. */
  uri: string;
  store: MessagePort;
  /** Queries per batch posted. */
  batchSize: number;
  /** Batches a worker may have posted and not yet seen consumed. */
  maxInFlight: number;
}

export type SparkThreadData = SparkWorkerData | { role: "window" };

/**
 * To a reader: `window` (once, before any log given `window: true`) is its port to the window thread;
 * `log` is one log to read, `window: true` when it may decode it in the window thread; `credit`
 * says one batch was consumed. To the window thread: `window`, one reader's port to serve.
 */
export type SparkWorkerRequest =
  | { type: "log"; log: SparkLog; window: boolean }
  | { type: "credit" }
  | { type: "window"; port: MessagePort };

/**
 * `stats`: the worker's running totals. `deferred`: the log was not read, as its zstd window is
 * large and the reader was not given the window thread for it (see `window-decoder.ts`).
 */
export type SparkWorkerReply =
  | { type: "batch"; queries: LoggedQuery[]; stats: ReadStats }
  | { type: "done"; stats: ReadStats }
  | { type: "deferred"; stats: ReadStats }
  | { type: "error"; message: string };
