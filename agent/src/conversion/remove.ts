/**
 * The jobs that remove a prefix's converted inputs, in two steps that a person can stop between:
 *
 * - `prefix_remove_inputs` proposes: the inputs the manifest records as converted at least
 *   `retention_days` ago that still exist (one listing of the source), minus the keys whose
 *   deletion was recovered. The plane records them as pending deletions; nothing is deleted here.
 * - `prefix_hard_delete` deletes the inputs of claimed pending deletions: a key outside the source
 *   prefix or not a valid key is `failed`, one already gone `absent`, in batches of 1,000.
 */
import type { HardDeleteResult } from "@lakesmith/shared/maintenance";
import type {
  PrefixHardDeletePayload,
  RemoveInputsPayload,
  RemoveInputsResult,
} from "@lakesmith/shared/prefix-conversion";
import type { JobContext } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { convertedInputs, readManifest } from "./manifest.ts";

const DAY_MS = 86_400_000;
const DELETE_BATCH = 1000;

export async function runRemoveInputs(
  ctx: JobContext<RemoveInputsPayload>,
  options: { source: ObjectStore; target: ObjectStore; now?: () => number },
): Promise<RemoveInputsResult> {
  const started = Date.now();
  const { payload } = ctx;
  const converted = await convertedInputs(
    options.target,
    await readManifest(options.target, payload.source_uri),
  );
  const cutoff = (options.now?.() ?? Date.now()) - payload.retention_days * DAY_MS;
  const keep = new Set(payload.keep);
  const present = new Map<string, number>();
  for await (const object of options.source.list("")) present.set(object.key, object.size);
  const result: RemoveInputsResult = { files: [], within_retention: 0, absent: 0, duration_ms: 0 };
  for (const [key, input] of converted) {
    const size = present.get(key);
    if (size === undefined) result.absent++;
    else if (input.convertedMs > cutoff) result.within_retention++;
    else if (!keep.has(key)) result.files.push({ path: key, size });
  }
  return { ...result, duration_ms: Date.now() - started };
}

export async function runPrefixHardDelete(
  ctx: JobContext<PrefixHardDeletePayload>,
  options: { source: ObjectStore },
): Promise<HardDeleteResult> {
  const started = Date.now();
  const { source } = options;
  const files: HardDeleteResult["files"] = [];
  const toDelete: { deletion_id: string; path: string }[] = [];
  for (const file of ctx.payload.files) {
    ctx.signal.throwIfAborted();
    const valid =
      !file.path.startsWith("/") && !file.path.split("/").some((s) => s === "" || s === "." || s === "..");
    if (!valid)
      files.push({ ...file, outcome: "failed", detail: "not a key inside the prefix; never deleted" });
    else if (!(await source.head(file.path))) files.push({ ...file, outcome: "absent", detail: null });
    else toDelete.push(file);
  }
  for (let i = 0; i < toDelete.length; i += DELETE_BATCH) {
    ctx.signal.throwIfAborted();
    const batch = toDelete.slice(i, i + DELETE_BATCH);
    const { errors } = await source.deleteMany(batch.map((f) => f.path));
    const failed = new Map(errors.map((e) => [e.key, `${e.code}: ${e.message}`]));
    for (const file of batch) {
      const error = failed.get(file.path);
      files.push({ ...file, outcome: error ? "failed" : "deleted", detail: error ?? null });
    }
    ctx.progress({ files_done: Math.min(i + DELETE_BATCH, toDelete.length), files_total: toDelete.length });
  }
  const count = (o: string) => files.filter((f) => f.outcome === o).length;
  return {
    table_version: 0,
    files,
    deleted: count("deleted"),
    retained: 0,
    failed: count("failed"),
    duration_ms: Date.now() - started,
  };
}
