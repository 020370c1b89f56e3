/**
 * Delta Lake tables in TypeScript: read a snapshot from the log, decide whether the agent may
 * rewrite the table, commit a rewrite with put-if-absent and conflict checks, write checkpoints.
 * DuckDB is reached only through `engine/checkpoint.ts` (checkpoint Parquet).
 *
 * @example
 * const snapshot = await loadSnapshot(store, engine, { scratchDir });
 * if (writeRefusal(snapshot)) return; // a reason a person can read
 * const removes = picked.map((f) => ({ remove: removeFor(f, Date.now()) }));
 * const adds = written.map((f) => ({ add: addFor(f) }));
 * await commit(store, snapshot, [...removes, ...adds], { jobId, operation: "OPTIMIZE", operationParameters: {}, engine, scratchDir });
 */
export * from "./actions.ts";
export * from "./checkpoint.ts";
export * from "./commit.ts";
export { checkpointKey, commitKey, DeltaLogError, LAST_CHECKPOINT_KEY, listLog } from "./log.ts";
export * from "./protocol.ts";
export * from "./schema.ts";
export * from "./snapshot.ts";
