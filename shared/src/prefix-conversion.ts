/**
 * JSON prefix conversion (document 1, "Object maintenance", experimental): the agent jobs that act
 * on a managed prefix's raw JSON, and the manifest they keep in the target prefix.
 *
 * - `prefix_convert`: the prefix's JSON inputs (newline-delimited or arrays, gzip too) not converted
 *   yet and older than the location's skip age become Parquet under the policy's target prefix.
 * - `prefix_remove_inputs`: converted inputs older than the retention are proposed for deletion;
 *   the plane records them as pending deletions with the prefix as their reference.
 * - `prefix_hard_delete`: deletes the inputs of claimed pending deletions (hard-delete).
 * - The manifest is the record of what was converted: a key in it is never converted again. An
 *   index (`MANIFEST_KEY` in the target prefix, `ConversionManifestIndexSchema`) names each run,
 *   its outputs and its part (`MANIFEST_RUNS_FOLDER<job id>.json`, `ManifestRunSchema`: the run's
 *   inputs and schema), written once. A format-1 manifest (`ConversionManifestSchema`, every run
 *   whole in one object) is read and rewritten as an index. See docs/json-conversion.md.
 *
 * @example const payload = ConvertPayloadSchema.parse(offer.payload);
 */
import { z } from "zod";

export const CONVERT_KIND = "prefix_convert";
export const REMOVE_INPUTS_KIND = "prefix_remove_inputs";
export const PREFIX_HARD_DELETE_KIND = "prefix_hard_delete";

/** The manifest's key, relative to the target prefix. */
export const MANIFEST_KEY = "_lakesmith_manifest.json";
/**
 * Lakesmith's own bookkeeping objects (the manifest, anything named `_lakesmith*` or under such a
 * folder): never data, neither a conversion's input nor a data file to discovery. A regex source.
 */
export const BOOKKEEPING_PATTERN = "(^|/)_lakesmith";
/** Where a job's outputs go, relative to the target prefix: one folder per job. */
export const OUTPUT_FOLDER = "data/";
/** Input keys the conversion reads (the discovery's data files). */
export const JSON_INPUT_PATTERN = /\.(json|jsonl|ndjson)(\.gz)?$/i;

/** Inputs of one run, at most: the rest waits for the next run (`inputs_deferred`). */
export const DEFAULT_MAX_RUN_BYTES = 4 * 1024 ** 3;

export const ConvertPayloadSchema = z.object({
  prefix_id: z.string().min(1),
  /** The source prefix's canonical URI (no trailing `/`). */
  source_uri: z.string().min(1),
  /** The policy's target prefix (canonical, outside the source). */
  target_uri: z.string().min(1),
  target_file_size_mb: z.number().int().min(1).max(4096),
  /** The location's skip age: inputs modified less than this many days ago are left alone. */
  skip_age_days: z.number().int().min(0).max(365),
  /** JSON bytes one run reads at most (whole files; at least one file). */
  max_run_bytes: z.number().int().positive().default(DEFAULT_MAX_RUN_BYTES),
  /** The policy version whose schedule or action queued the job. */
  policy_version: z.number().int().positive().nullable().default(null),
});
export type ConvertPayload = z.infer<typeof ConvertPayloadSchema>;

export const ManifestInputSchema = z.object({
  /** Relative to the source prefix. */
  key: z.string(),
  size: z.number().int().nonnegative(),
  etag: z.string().nullable(),
  /** The input's modification time (epoch ms) when it was read. */
  modified_ms: z.number().int(),
});
export type ManifestInput = z.infer<typeof ManifestInputSchema>;

export const ManifestOutputSchema = z.object({
  /** Relative to the target prefix. */
  key: z.string(),
  size: z.number().int().nonnegative(),
  rows: z.number().int().nonnegative(),
});

/** The lossless proof of a run: the same on the parsed inputs and on the written outputs. */
export const ConversionChecksumSchema = z.object({
  rows: z.number().int().nonnegative(),
  /** Sum of DuckDB's `hash(row)` over every row, exactly (HUGEINT), as decimal text. */
  row_hash: z.string(),
});

export const ManifestRunSchema = z.object({
  job_id: z.string(),
  converted_ms: z.number().int(),
  /** The schema the run wrote: `name TYPE` in DuckDB's spelling, in column order. */
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  inputs: z.array(ManifestInputSchema),
  outputs: z.array(ManifestOutputSchema),
  checksum: ConversionChecksumSchema,
});
export type ManifestRun = z.infer<typeof ManifestRunSchema>;

export const MANIFEST_FORMAT = "lakesmith.json-conversion/1";

/** Format 1, read only: every run whole in one object, rewritten whole by every run. */
export const ConversionManifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  source_uri: z.string(),
  /** Oldest first; a run is appended only after its outputs are written and checked. */
  runs: z.array(ManifestRunSchema),
});
export type ConversionManifest = z.infer<typeof ConversionManifestSchema>;

/** Each run's part (a `ManifestRun`), relative to the target prefix: `<folder><job id>.json`. */
export const MANIFEST_RUNS_FOLDER = "_lakesmith_manifest/runs/";
export const MANIFEST_INDEX_FORMAT = "lakesmith.json-conversion/2";

export const ManifestIndexRunSchema = z.object({
  job_id: z.string(),
  converted_ms: z.number().int(),
  /** The run's part, relative to the target prefix. */
  part: z.string(),
  /** How many inputs the part lists. */
  inputs: z.number().int().nonnegative(),
  outputs: z.array(ManifestOutputSchema),
  checksum: ConversionChecksumSchema,
});
export type ManifestIndexRun = z.infer<typeof ManifestIndexRunSchema>;

/** The manifest: one small entry per run; replaced, with the run appended, as each run's commit. */
export const ConversionManifestIndexSchema = z.object({
  format: z.literal(MANIFEST_INDEX_FORMAT),
  source_uri: z.string(),
  /** Oldest first; a run is appended only after its outputs and its part are written. */
  runs: z.array(ManifestIndexRunSchema),
});
export type ConversionManifestIndex = z.infer<typeof ConversionManifestIndexSchema>;

export const ConvertResultSchema = z.object({
  /** Inputs converted by this run, their JSON bytes and the Parquet written. */
  files_in: z.number().int().nonnegative(),
  files_out: z.number().int().nonnegative(),
  bytes_before: z.number().int().nonnegative(),
  bytes_after: z.number().int().nonnegative(),
  /** bytes_before / bytes_after; null when nothing was written. */
  drr: z.number().nullable(),
  rows: z.number().int().nonnegative(),
  /** Inputs found converted already, too young (skip age), or left for the next run (run size). */
  inputs_converted_before: z.number().int().nonnegative(),
  inputs_too_young: z.number().int().nonnegative(),
  inputs_deferred: z.number().int().nonnegative(),
  /** Converted inputs whose size or etag changed since: reported, not converted again. */
  inputs_changed_since: z.array(z.string()).max(100),
  /** Output folders of runs that never reached the manifest (a crash), removed by this run. */
  orphans_removed: z.number().int().nonnegative(),
  columns: z.number().int().nonnegative(),
  /** Milliseconds per step: infer, load, write, prove, upload (absent when nothing ran). */
  step_ms: z.record(z.string(), z.number()).optional(),
  manifest: z.string(),
  duration_ms: z.number().nonnegative(),
});
export type ConvertResult = z.infer<typeof ConvertResultSchema>;

export const RemoveInputsPayloadSchema = z.object({
  prefix_id: z.string().min(1),
  source_uri: z.string().min(1),
  target_uri: z.string().min(1),
  /** Inputs converted at least this long ago are proposed. */
  retention_days: z.number().int().min(0).max(3650),
  /** Keys never to propose (their deletions were recovered). */
  keep: z.array(z.string()).default([]),
});
export type RemoveInputsPayload = z.infer<typeof RemoveInputsPayloadSchema>;

export const RemoveInputsResultSchema = z.object({
  /** Converted inputs past the retention that still exist, relative to the source prefix. */
  files: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative() })),
  /** Converted inputs within the retention, and those gone already. */
  within_retention: z.number().int().nonnegative(),
  absent: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
});
export type RemoveInputsResult = z.infer<typeof RemoveInputsResultSchema>;

export const PrefixHardDeletePayloadSchema = z.object({
  prefix_id: z.string().min(1),
  source_uri: z.string().min(1),
  files: z.array(z.object({ deletion_id: z.string().min(1), path: z.string().min(1) })).min(1),
});
export type PrefixHardDeletePayload = z.infer<typeof PrefixHardDeletePayloadSchema>;
