/**
 * A conversion's plan: which of the source prefix's JSON inputs this run converts.
 *
 * - Inputs are the objects under the source prefix whose name ends in `.json`, `.jsonl` or
 *   `.ndjson` (`.gz` too), in key order; Lakesmith's own objects (`BOOKKEEPING_PATTERN`: a
 *   conversion manifest) never are.
 * - A key the manifest records is never converted again; one whose size or etag changed since is
 *   reported (`changed`), not converted.
 * - A file modified less than the skip age ago may still be being written: left for a later run.
 * - At most `maxRunBytes` of JSON a run (whole files, at least one); the rest is `deferred`.
 */
import {
  BOOKKEEPING_PATTERN,
  JSON_INPUT_PATTERN,
  type ManifestInput,
} from "@lakesmith/shared/prefix-conversion";
import type { ObjectInfo, ObjectStore } from "../store/index.ts";

const DAY_MS = 86_400_000;
const BOOKKEEPING = new RegExp(BOOKKEEPING_PATTERN);

export interface ConversionPlan {
  inputs: ObjectInfo[];
  convertedBefore: number;
  tooYoung: number;
  deferred: number;
  changed: string[];
}

export async function planConversion(
  source: ObjectStore,
  converted: Map<string, { size: number; etag: string | null }>,
  options: { now: number; skipAgeDays: number; maxRunBytes: number },
): Promise<ConversionPlan> {
  const plan: ConversionPlan = { inputs: [], convertedBefore: 0, tooYoung: 0, deferred: 0, changed: [] };
  const youngestAllowed = options.now - options.skipAgeDays * DAY_MS;
  let bytes = 0;
  for await (const object of source.list("")) {
    // A conversion manifest (a target prefix inside this source) is not an input.
    if (!JSON_INPUT_PATTERN.test(object.key) || BOOKKEEPING.test(object.key)) continue;
    const before = converted.get(object.key);
    if (before) {
      plan.convertedBefore++;
      const etagChanged = before.etag !== null && object.etag !== undefined && before.etag !== object.etag;
      if ((before.size !== object.size || etagChanged) && plan.changed.length < 100)
        plan.changed.push(object.key);
    } else if (object.lastModified.getTime() > youngestAllowed) plan.tooYoung++;
    else if (plan.inputs.length > 0 && bytes + object.size > options.maxRunBytes) plan.deferred++;
    else {
      plan.inputs.push(object);
      bytes += object.size;
    }
  }
  return plan;
}

/** An input as the manifest records it. */
export function manifestInput(object: ObjectInfo): ManifestInput {
  return {
    key: object.key,
    size: object.size,
    etag: object.etag ?? null,
    modified_ms: object.lastModified.getTime(),
  };
}
