/**
 * Table formats (Delta, Iceberg, Hive) behind one seam (`types.ts`): the jobs ask `tableFormat(payload.format)` for the
 * table's module and never speak a format themselves.
 *
 * @example
 * const format = tableFormat("delta");
 * const table = await format.load({ store, engine, scratchDir, clock, log });
 * const refusal = table.writeRefusal(); // a reason a person can read, or null
 */
import { JobError } from "../registry.ts";
import { deltaFormat } from "./delta.ts";
import { hiveFormat } from "./hive.ts";
import { icebergFormat } from "./iceberg.ts";
import type { TableFormat, TableFormatName } from "./types.ts";

export { ConflictError } from "./conflict.ts";
export { DeltaTable, deltaFormat } from "./delta.ts";
export { HiveTable, hiveFormat } from "./hive.ts";
export { IcebergTable, icebergFormat } from "./iceberg.ts";
export * from "./types.ts";

/** The module of a table format; a format the agent can't rewrite yet fails the job for good. */
export function tableFormat(name: TableFormatName): TableFormat {
  if (name === "delta") return deltaFormat;
  if (name === "iceberg") return icebergFormat;
  if (name === "hive") return hiveFormat;
  throw new JobError(`${name} tables can't be crunched by this agent version yet`, { retryable: false });
}
