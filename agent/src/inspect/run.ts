/**
 * The onboarding inspection job: load the table through its format (`formats/`), refuse it if the
 * agent could never rewrite it safely, and report its recipe (`recipe.ts`). The cost is bounded
 * whatever the table's size: partition values come from the metadata (at most
 * `MAX_PARTITION_VALUES` distinct per column), and columns are profiled on at most `SAMPLE_FILES`
 * files and `SAMPLE_BYTES` bytes, spread across the table's partitions, each read only up to
 * `SAMPLE_ROWS` rows.
 *
 * Failures another attempt can't fix fail the job at once (`retryable: false`), with the reason:
 * a format the agent does not rewrite, no table at the URI, metadata the agent does not read, a
 * table it may not manage. Anything else (a store that throttles or times out, a log being
 * rewritten) is retried.
 */
import { join } from "node:path";
import type { OnboardingPayload, OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import { systemClock } from "@lakesmith/shared/time";
import { partitionPath } from "../crunch/partition-path.ts";
import { Engine, profileColumns } from "../engine/index.ts";
import { type TableFile, tableFormat } from "../formats/index.ts";
import type { JobContext } from "../registry.ts";
import { JobError } from "../registry.ts";
import { localPaths, type ObjectStore } from "../store/index.ts";
import { columnFacts, inferRecipe, type PartitionFacts } from "./recipe.ts";

export const MAX_PARTITION_VALUES = 1000;
export const SAMPLE_FILES = 8;
export const SAMPLE_BYTES = 256 * 1024 * 1024;
export const SAMPLE_ROWS = 200_000;

export interface InspectOptions {
  store: ObjectStore;
  memoryLimitMb: number;
}

export async function runInspection(
  ctx: JobContext<OnboardingPayload>,
  options: InspectOptions,
): Promise<OnboardingRecipeResult> {
  const format = tableFormat(ctx.payload.format);
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    ctx.progress({ phase: "reading the metadata" });
    const table = await format.load({
      store: options.store,
      catalog: ctx.payload.catalog,
      engine,
      scratchDir: join(ctx.scratchDir, "table"),
      clock: systemClock,
      log: ctx.log,
    });
    const refusal = table.writeRefusal();
    if (refusal) throw new JobError(`the table can't be managed safely: ${refusal}`, { retryable: false });

    const partitions: PartitionFacts[] = table.partitionColumns.map((name) => ({
      name,
      type: table.typeOf(name),
      values: distinctValues(table.files, name),
    }));
    const sample = sampleFiles(table.files, table.partitionColumns);
    ctx.progress({ phase: "profiling", sample_files: sample.length });
    const paths = await localPaths(
      options.store,
      sample.map((f) => f.key),
      join(ctx.scratchDir, "sample"),
      ctx.signal,
    );
    const profiles = paths.length
      ? await profileColumns(engine, paths, table.columns, {
          sampleRows: SAMPLE_ROWS,
          sampleFiles: SAMPLE_FILES,
        })
      : [];
    return inferRecipe(
      partitions,
      columnFacts(profiles, (name) => table.typeOf(name)),
    );
  } finally {
    engine.close();
  }
}

function distinctValues(files: readonly TableFile[], column: string): (string | null)[] {
  const values = new Set<string | null>();
  for (const file of files) {
    values.add(file.partitionValues[column] ?? null);
    if (values.size >= MAX_PARTITION_VALUES) break;
  }
  return [...values];
}

/**
 * Up to `SAMPLE_FILES` files within `SAMPLE_BYTES`, one per partition in turn (newest partitions
 * first), so a table with many partitions is sampled across them rather than from one.
 */
export function sampleFiles<F extends TableFile>(
  files: readonly F[],
  partitionColumns: readonly string[],
): F[] {
  const byPartition = new Map<string, F[]>();
  for (const file of files) {
    const key = partitionPath(file.partitionValues, partitionColumns);
    const list = byPartition.get(key);
    if (list) list.push(file);
    else byPartition.set(key, [file]);
  }
  const queues = [...byPartition.entries()].sort(([a], [b]) => b.localeCompare(a)).map(([, list]) => list);
  const picked: F[] = [];
  let bytes = 0;
  for (let round = 0; picked.length < SAMPLE_FILES; round++) {
    let any = false;
    for (const queue of queues) {
      const file = queue[round];
      if (!file) continue;
      any = true;
      if (picked.length >= SAMPLE_FILES) break;
      if (picked.length > 0 && bytes + file.size > SAMPLE_BYTES) continue;
      picked.push(file);
      bytes += file.size;
    }
    if (!any) break;
  }
  return picked;
}
