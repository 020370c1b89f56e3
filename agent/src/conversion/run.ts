/**
 * A `prefix_convert` job (`@lakesmith/shared/prefix-conversion`): plan → clean → download →
 * convert and prove → upload → manifest → metrics.
 *
 * 1. Plan (`plan.ts`): the inputs not in the manifest and older than the skip age, up to the run's
 *    byte budget.
 * 2. Clean: output folders (`data/<job id>/`) and run parts the manifest does not name are
 *    orphans of a run that died before its manifest (this job's own earlier attempt included):
 *    deleted, so a retry replaces them instead of adding to them.
 * 3. Download the inputs into the scratch folder (DuckDB reads local files only), keeping each
 *    name's ending (`.json.gz` is read as gzip); a `file://` input is read in place.
 * 4. Convert and prove (`convert.ts`): nothing is uploaded unless the Parquet holds the inputs' rows.
 * 5. Upload to `data/<job id>/part-<n>.parquet`, write the run's part, then append the run to the
 *    manifest's index (`manifest.ts`): the index write is the commit. A crash in between leaves an orphan folder for step 2 of the next run.
 */
import { mkdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  type ConvertPayload,
  type ConvertResult,
  MANIFEST_KEY,
  MANIFEST_RUNS_FOLDER,
  type ManifestRun,
  OUTPUT_FOLDER,
} from "@lakesmith/shared/prefix-conversion";
import { Engine } from "../engine/duckdb.ts";
import type { JobContext } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { type ConvertSteps, convertJson, type LocalInput } from "./convert.ts";
import { commitRun, convertedInputs, readManifest } from "./manifest.ts";
import { manifestInput, planConversion } from "./plan.ts";

export interface ConversionOptions {
  source: ObjectStore;
  target: ObjectStore;
  memoryLimitMb: number;
  now?: () => number;
  steps?: ConvertSteps;
}

export async function runConversion(
  ctx: JobContext<ConvertPayload>,
  options: ConversionOptions,
): Promise<ConvertResult> {
  const started = Date.now();
  const { payload, job } = ctx;
  const { source, target } = options;
  const manifest = await readManifest(target, payload.source_uri);
  const plan = await planConversion(source, await convertedInputs(target, manifest), {
    now: options.now?.() ?? Date.now(),
    skipAgeDays: payload.skip_age_days,
    maxRunBytes: payload.max_run_bytes,
  });
  const orphansRemoved = await removeOrphans(target, new Set(manifest.index.runs.map((r) => r.job_id)));
  const result: ConvertResult = {
    files_in: 0,
    files_out: 0,
    bytes_before: 0,
    bytes_after: 0,
    drr: null,
    rows: 0,
    inputs_converted_before: plan.convertedBefore,
    inputs_too_young: plan.tooYoung,
    inputs_deferred: plan.deferred,
    inputs_changed_since: plan.changed,
    orphans_removed: orphansRemoved,
    columns: 0,
    manifest: target.uriOf(MANIFEST_KEY),
    duration_ms: 0,
  };
  if (plan.inputs.length === 0) return { ...result, duration_ms: Date.now() - started };

  const inputDir = join(ctx.scratchDir, "in");
  const outDir = join(ctx.scratchDir, "out");
  await mkdir(inputDir, { recursive: true });
  const locals: LocalInput[] = [];
  for (const [i, input] of plan.inputs.entries()) {
    ctx.signal.throwIfAborted();
    // A local folder's file is read in place: it is older than the skip age, so no longer written.
    const path = source.localFile?.(input.key) ?? join(inputDir, `${i}-${basename(input.key)}`);
    if (!source.localFile) await source.download(input.key, path);
    locals.push({ path, uri: source.uriOf(input.key), size: input.size });
    ctx.progress({ step: "download", files_done: i + 1, files_total: plan.inputs.length });
  }

  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  let converted: Awaited<ReturnType<typeof convertJson>>;
  try {
    ctx.progress({ step: "convert", files_total: plan.inputs.length });
    converted = await convertJson(engine, locals, outDir, payload.target_file_size_mb, options.steps);
  } finally {
    engine.close();
  }

  const uploadStarted = performance.now();
  const folder = `${OUTPUT_FOLDER}${job.id}/`;
  const outputs: ManifestRun["outputs"] = [];
  for (const [i, { path: file, rows }] of converted.files.entries()) {
    ctx.signal.throwIfAborted();
    const key = `${folder}part-${String(i).padStart(5, "0")}.parquet`;
    const size = (await stat(file)).size;
    await target.write(key, { file, move: true });
    outputs.push({ key, size, rows });
    ctx.progress({ step: "upload", files_done: i + 1, files_total: converted.files.length });
  }
  const rows = converted.checksum.rows;
  await commitRun(target, manifest, {
    job_id: job.id,
    converted_ms: options.now?.() ?? Date.now(),
    columns: converted.columns.map((c) => ({ name: c.name, type: c.type })),
    inputs: plan.inputs.map(manifestInput),
    outputs,
    checksum: { rows, row_hash: converted.checksum.rowHash },
  });

  const bytesBefore = plan.inputs.reduce((n, i) => n + i.size, 0);
  const bytesAfter = outputs.reduce((n, o) => n + o.size, 0);
  return {
    ...result,
    files_in: plan.inputs.length,
    files_out: outputs.length,
    bytes_before: bytesBefore,
    bytes_after: bytesAfter,
    drr: bytesAfter > 0 ? bytesBefore / bytesAfter : null,
    rows,
    columns: converted.columns.length,
    step_ms: { ...converted.stepMs, upload: Math.round(performance.now() - uploadStarted) },
    duration_ms: Date.now() - started,
  };
}

/** Deletes output folders and run parts no manifest run names; returns how many objects went. */
async function removeOrphans(target: ObjectStore, committed: Set<string>): Promise<number> {
  const orphans: string[] = [];
  for await (const object of target.list(OUTPUT_FOLDER)) {
    const jobId = object.key.slice(OUTPUT_FOLDER.length).split("/")[0] ?? "";
    if (!committed.has(jobId)) orphans.push(object.key);
  }
  for await (const object of target.list(MANIFEST_RUNS_FOLDER)) {
    const jobId = object.key.slice(MANIFEST_RUNS_FOLDER.length).replace(/\.json$/, "");
    if (!committed.has(jobId)) orphans.push(object.key);
  }
  if (orphans.length === 0) return 0;
  const { errors } = await target.deleteMany(orphans);
  if (errors.length > 0)
    throw new Error(
      `could not remove ${errors.length} output(s) of an unfinished run, first ${errors[0]?.key}: ${errors[0]?.message}`,
    );
  return orphans.length;
}
