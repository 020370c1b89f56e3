/**
 * The onboarding inspection job: read a Delta table's log, refuse it if the agent could never
 * rewrite it safely, and report its recipe (`recipe.ts`). The cost is bounded whatever the table's
 * size: partition values come from the log (at most `MAX_PARTITION_VALUES` distinct per column), and
 * columns are profiled on at most `SAMPLE_FILES` files and `SAMPLE_BYTES` bytes, spread across the
 * table's partitions, each read only up to `SAMPLE_ROWS` rows.
 *
 * Failures another attempt can't fix fail the job at once (`retryable: false`), with the reason:
 * another format, no Delta log at the URI, a log the agent does not read, a table it may not manage.
 * Anything else (a store that throttles or times out, a log being rewritten) is retried.
 */
import { join } from "node:path";
import type { OnboardingPayload, OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import { partitionPath } from "../crunch/partition-path.ts";
import {
  type AddFile,
  type DataType,
  DeltaLogError,
  dataFileLocation,
  loadSnapshot,
  writeRefusal,
} from "../delta/index.ts";
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
    const snapshot = await loadSnapshot(options.store, engine, {
      scratchDir: join(ctx.scratchDir, "log"),
    }).catch((err: unknown) => {
      throw permanentLogError(err, ctx.payload.uri);
    });
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

/**
 * A log error that no later attempt changes, as a permanent failure: no Delta log at the URI (not a
 * Delta table, or the URI names another folder) or a log written with what the agent does not read.
 * A missing commit or a log without metadata may be a writer's cleanup in flight: left retryable.
 */
function permanentLogError(err: unknown, uri: string): unknown {
  if (!(err instanceof DeltaLogError)) return err;
  if (err.code === "not_a_table")
    return new JobError(
      `${uri} is not a Delta table: ${err.message}. Point the table's URI at the folder that holds _delta_log/, then retry onboarding`,
      { retryable: false, cause: err },
    );
  if (err.code === "unsupported")
    return new JobError(`the Delta log of ${uri} can't be read: ${err.message}`, {
      retryable: false,
      cause: err,
    });
  return err;
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
    const key = partitionPath(file.partitionValues, partitionColumns);
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
