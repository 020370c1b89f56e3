/**
 * The onboarding inspection job: read a Delta table's log, refuse it if the agent could never
 * rewrite it safely, and report its recipe (`recipe.ts`). The cost is bounded whatever the table's
 * size: partition values come from the log (at most `MAX_PARTITION_VALUES` distinct per column), and
 * columns are profiled on at most `SAMPLE_FILES` files and `SAMPLE_BYTES` bytes, spread across the
 * table's partitions, each read only up to `SAMPLE_ROWS` rows.
 */
import { join } from "node:path";
import type { OnboardingPayload, OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import { partitionKey } from "../crunch/plan.ts";
import { type AddFile, type DataType, dataFileLocation, loadSnapshot, writeRefusal } from "../delta/index.ts";
import { duckdbColumns } from "../delta/schema.ts";
import { Engine, profileColumns } from "../engine/index.ts";
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
  if (ctx.payload.format !== "delta")
    throw new JobError(`onboarding of ${ctx.payload.format} tables is not supported yet; only delta`, {
      retryable: false,
    });
  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    ctx.progress({ phase: "reading the log" });
    const snapshot = await loadSnapshot(options.store, engine, { scratchDir: join(ctx.scratchDir, "log") });
    const refusal = writeRefusal(snapshot);
    if (refusal) throw new JobError(`the table can't be managed safely: ${refusal}`, { retryable: false });

    const { schema, partitionColumns } = snapshot.metadata;
    const typeOf = new Map(schema.fields.map((f) => [f.name, typeName(f.type)]));
    const partitions: PartitionFacts[] = partitionColumns.map((name) => ({
      name,
      type: typeOf.get(name) ?? "string",
      values: distinctValues(snapshot.files, name),
    }));

    const sample = sampleFiles(snapshot.files, partitionColumns);
    ctx.progress({ phase: "profiling", sample_files: sample.length });
    const columns = duckdbColumns(schema, partitionColumns);
    // Files outside the table's root (a shallow clone's source) are not read.
    const keys = sample.flatMap((file) => {
      const location = dataFileLocation(options.store, file);
      return "key" in location ? [location.key] : [];
    });
    const paths = await localPaths(options.store, keys, join(ctx.scratchDir, "sample"), ctx.signal);
    const profiles = paths.length
      ? await profileColumns(engine, paths, columns, { sampleRows: SAMPLE_ROWS, sampleFiles: SAMPLE_FILES })
      : [];
    const facts = columnFacts(profiles, (name) => typeOf.get(name) ?? "string");
    return inferRecipe(partitions, facts);
  } finally {
    engine.close();
  }
}

function typeName(type: DataType): string {
  if (type.kind === "primitive") return type.name;
  return type.kind === "unsupported" ? type.name : type.kind;
}

function distinctValues(files: readonly AddFile[], column: string): (string | null)[] {
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
export function sampleFiles(files: readonly AddFile[], partitionColumns: readonly string[]): AddFile[] {
  const byPartition = new Map<string, AddFile[]>();
  for (const file of files) {
    if (file.deletionVector) continue;
    const key = partitionKey(file.partitionValues, partitionColumns);
    const list = byPartition.get(key);
    if (list) list.push(file);
    else byPartition.set(key, [file]);
  }
  const queues = [...byPartition.entries()].sort(([a], [b]) => b.localeCompare(a)).map(([, list]) => list);
  const picked: AddFile[] = [];
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
