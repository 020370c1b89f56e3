/**
 * The conversion manifest (`@lakesmith/shared/prefix-conversion`) in the target prefix: which
 * inputs produced which outputs.
 *
 * - The index (`MANIFEST_KEY`) names each run, its outputs and checksum, and its part; the part
 *   (`MANIFEST_RUNS_FOLDER<job id>.json`) holds the run's inputs and schema and is written once,
 *   before the index. Replacing the index with the run appended is the commit point of a
 *   conversion: a part or a folder of outputs it does not name belongs to a run that did not finish.
 * - A run rewrites the index (one small entry per run), never the parts: what a run writes no
 *   longer grows with every input ever converted. Reading what was converted reads every part.
 * - A format-1 manifest (every run whole in one object) is read as an index whose parts are not
 *   written yet; the next commit writes them, then the index.
 */
import {
  type ConversionManifestIndex,
  ConversionManifestIndexSchema,
  ConversionManifestSchema,
  MANIFEST_INDEX_FORMAT,
  MANIFEST_KEY,
  MANIFEST_RUNS_FOLDER,
  type ManifestRun,
  ManifestRunSchema,
} from "@lakesmith/shared/prefix-conversion";
import { JobError } from "../registry.ts";
import { type ObjectStore, readAll } from "../store/index.ts";

export interface Manifest {
  index: ConversionManifestIndex;
  /** Parts of a format-1 manifest's runs, by job id, that the next commit writes. */
  unwritten: Map<string, ManifestRun>;
}

/** The target's manifest, or an empty one where none was written yet. */
export async function readManifest(target: ObjectStore, sourceUri: string): Promise<Manifest> {
  const empty = { format: MANIFEST_INDEX_FORMAT, source_uri: sourceUri, runs: [] } as const;
  if (!(await target.head(MANIFEST_KEY))) return { index: { ...empty, runs: [] }, unwritten: new Map() };
  const json = safeJson(new TextDecoder().decode(await readAll(await target.read(MANIFEST_KEY))));
  const index = ConversionManifestIndexSchema.safeParse(json);
  const legacy = index.success ? undefined : ConversionManifestSchema.safeParse(json);
  if (!index.success && !legacy?.success)
    throw new JobError(
      `${target.uriOf(MANIFEST_KEY)} is not a conversion manifest (${index.error.issues[0]?.message}); ` +
        "move it away or choose another target prefix",
      { retryable: false },
    );
  const manifest: Manifest = index.success
    ? { index: index.data, unwritten: new Map() }
    : fromFormat1(legacy?.data?.source_uri ?? sourceUri, legacy?.data?.runs ?? []);
  if (manifest.index.source_uri !== sourceUri)
    throw new JobError(
      `${target.uriOf(MANIFEST_KEY)} records conversions of ${manifest.index.source_uri}, not ${sourceUri}; ` +
        "each source prefix needs a target prefix of its own",
      { retryable: false },
    );
  return manifest;
}

/** Writes the run's part (and any format-1 run's), then the index with the run appended: the commit. */
export async function commitRun(target: ObjectStore, manifest: Manifest, run: ManifestRun): Promise<void> {
  for (const [jobId, part] of manifest.unwritten) await target.write(partKey(jobId), JSON.stringify(part));
  await target.write(partKey(run.job_id), JSON.stringify(run));
  manifest.unwritten.clear();
  manifest.index.runs.push(indexEntry(run));
  await target.write(MANIFEST_KEY, JSON.stringify(manifest.index));
}

/** Every run whole (its part read), oldest first. */
export async function readRuns(target: ObjectStore, manifest: Manifest): Promise<ManifestRun[]> {
  const runs: ManifestRun[] = [];
  for (const entry of manifest.index.runs) {
    const unwritten = manifest.unwritten.get(entry.job_id);
    if (unwritten) {
      runs.push(unwritten);
      continue;
    }
    const text = new TextDecoder().decode(await readAll(await target.read(entry.part)));
    const parsed = ManifestRunSchema.safeParse(safeJson(text));
    if (!parsed.success)
      throw new JobError(
        `${target.uriOf(entry.part)} is not a conversion run's part; the manifest names it`,
        {
          retryable: false,
        },
      );
    runs.push(parsed.data);
  }
  return runs;
}

/** Every input key the manifest records, with the run that converted it. */
export async function convertedInputs(target: ObjectStore, manifest: Manifest) {
  const byKey = new Map<string, { size: number; etag: string | null; convertedMs: number }>();
  for (const run of await readRuns(target, manifest))
    for (const input of run.inputs)
      byKey.set(input.key, { size: input.size, etag: input.etag, convertedMs: run.converted_ms });
  return byKey;
}

export function partKey(jobId: string): string {
  return `${MANIFEST_RUNS_FOLDER}${jobId}.json`;
}

function indexEntry(run: ManifestRun) {
  return {
    job_id: run.job_id,
    converted_ms: run.converted_ms,
    part: partKey(run.job_id),
    inputs: run.inputs.length,
    outputs: run.outputs,
    checksum: run.checksum,
  };
}

function fromFormat1(sourceUri: string, runs: ManifestRun[]): Manifest {
  return {
    index: { format: MANIFEST_INDEX_FORMAT, source_uri: sourceUri, runs: runs.map(indexEntry) },
    unwritten: new Map(runs.map((r) => [r.job_id, r])),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
