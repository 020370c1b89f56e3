/**
 * The messages between the parallel Spark reader (`parallel.ts`) and its workers (`worker.ts`):
 * plain data only, as `postMessage` clones it.
 */
import type { StoreOptions } from "../../store/index.ts";
import type { LoggedQuery, ReadStats } from "../query.ts";
import type { SparkLog } from "./files.ts";

/** What a worker starts with. */
export interface SparkWorkerData {
  /** The store's URI, reopened in the worker with `storeFor(uri, storeOptions)`. */
  uri: string;
  storeOptions: StoreOptions;
  /** Queries per batch posted. */
  batchSize: number;
  /** Batches a worker may have posted and not yet seen consumed. */
  maxInFlight: number;
}

export type SparkWorkerRequest = { type: "log"; log: SparkLog } | { type: "credit" };

/** `stats`: the worker's running totals. */
export type SparkWorkerReply =
  | { type: "batch"; queries: LoggedQuery[]; stats: ReadStats }
  | { type: "done"; stats: ReadStats }
  | { type: "error"; message: string };
