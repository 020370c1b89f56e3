/**
 * The frame of a job that only reads a table (an opportunity scan, a layout scoring): DuckDB opened
 * in the job's scratch folder, the table's snapshot loaded through its format (and its catalog,
 * where one tracks it), the work done on both, and the engine closed whatever happens. Nothing is
 * ever written to the table or its catalog.
 *
 * @example
 * return withLoadedTable(ctx, payload, options, async (engine, table) => measure(engine, table));
 */
import { join } from "node:path";
import type { CatalogRef } from "@lakesmith/shared/jobs";
import type { Clock } from "@lakesmith/shared/time";
import { Engine } from "../engine/index.ts";
import type { JobContext } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { tableFormat } from "./index.ts";
import type { Table, TableFormatName } from "./types.ts";

export interface ReadOnlyOptions {
  store: ObjectStore;
  memoryLimitMb: number;
  clock: Clock;
}

export async function withLoadedTable<T>(
  ctx: Pick<JobContext<unknown>, "scratchDir" | "progress" | "log">,
  source: { format: TableFormatName; catalog?: CatalogRef | undefined },
  options: ReadOnlyOptions,
  work: (engine: Engine, table: Table) => Promise<T>,
): Promise<T> {
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    ctx.progress({ phase: "loading" });
    const table = await tableFormat(source.format).load({
      store: options.store,
      catalog: source.catalog,
      engine,
      scratchDir: join(ctx.scratchDir, "table"),
      clock: options.clock,
      log: ctx.log,
    });
    return await work(engine, table);
  } finally {
    engine.close();
  }
}
