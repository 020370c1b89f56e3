/**
 * The conversion manifest (`@lakesmith/shared/prefix-conversion`, `MANIFEST_KEY` in the target
 * prefix): which inputs produced which outputs. Read at the start of every run; replaced, with the
 * run appended, only after the run's outputs are written and checked, so it is the commit point of
 * a conversion: a folder of outputs it does not name is an orphan of a run that did not finish.
 */
import {
  type ConversionManifest,
  ConversionManifestSchema,
  MANIFEST_FORMAT,
  MANIFEST_KEY,
} from "@lakesmith/shared/prefix-conversion";
import { JobError } from "../registry.ts";
import { type ObjectStore, readAll } from "../store/index.ts";

/** The target's manifest, or an empty one where none was written yet. */
export async function readManifest(target: ObjectStore, sourceUri: string): Promise<ConversionManifest> {
  if (!(await target.head(MANIFEST_KEY))) return { format: MANIFEST_FORMAT, source_uri: sourceUri, runs: [] };
  const text = new TextDecoder().decode(await readAll(await target.read(MANIFEST_KEY)));
  const parsed = ConversionManifestSchema.safeParse(safeJson(text));
  if (!parsed.success)
    throw new JobError(
      `${target.uriOf(MANIFEST_KEY)} is not a conversion manifest (${parsed.error.issues[0]?.message}); ` +
        "move it away or choose another target prefix",
      { retryable: false },
    );
  if (parsed.data.source_uri !== sourceUri)
    throw new JobError(
      `${target.uriOf(MANIFEST_KEY)} records conversions of ${parsed.data.source_uri}, not ${sourceUri}; ` +
        "each source prefix needs a target prefix of its own",
      { retryable: false },
    );
  return parsed.data;
}

export async function writeManifest(target: ObjectStore, manifest: ConversionManifest): Promise<void> {
  await target.write(MANIFEST_KEY, JSON.stringify(manifest));
}

/** Every input key the manifest records, with the run that converted it. */
export function convertedInputs(manifest: ConversionManifest) {
  const byKey = new Map<string, { size: number; etag: string | null; convertedMs: number }>();
  for (const run of manifest.runs)
    for (const input of run.inputs)
      byKey.set(input.key, { size: input.size, etag: input.etag, convertedMs: run.converted_ms });
  return byKey;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
