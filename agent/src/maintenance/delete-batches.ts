/**
 * The deleting half of a hard delete, whatever the table's format: files already refused or found
 * absent are decided; every other file is deleted in batches, each re-checked against the table's
 * live references right before it (a writer or a recover may have put a file back meanwhile).
 *
 * - `refs.catchUp()` runs before each batch; within a job a path only ever gains references.
 * - A referenced file is `retained` with what references it; per-key store errors are `failed`
 *   with the store's message; the rest `deleted`.
 * - One batch is one `deleteMany` (S3 DeleteObjects takes 1,000 keys).
 */
import type {
  HARD_DELETE_OUTCOMES,
  HardDeletePayload,
  HardDeleteResult,
} from "@lakesmith/shared/maintenance";
import type { JobContext } from "../registry.ts";
import type { ObjectInfo, ObjectStore } from "../store/index.ts";

/** S3's DeleteObjects limit; also how often the table is re-checked during a long delete. */
export const DELETE_BATCH = 1000;

export type Outcome = { outcome: (typeof HARD_DELETE_OUTCOMES)[number]; detail: string | null };

/** What keeps a file: a table's live references, read once and then caught up with its writers. */
export interface LiveReferences {
  /** The table version the references are as of. */
  readonly version: number;
  /** Why the key must be kept, or null when nothing references it. */
  of(key: string): string | null;
  /** Takes in what writers committed since the last look. */
  catchUp(): Promise<void>;
}

export interface DeleteBatches {
  store: ObjectStore;
  /** Payload path to store key, for the files not refused already. */
  keyOf: ReadonlyMap<string, string>;
  /** The HEAD of each key; undefined when the object is gone. */
  heads: ReadonlyMap<string, ObjectInfo | undefined>;
  /** Outcomes decided before (refused paths); this adds the rest. */
  outcomes: Map<string, Outcome>;
  refs: LiveReferences;
  batchSize?: number;
  started: number;
}

export async function deleteUnreferenced(
  ctx: JobContext<HardDeletePayload>,
  job: DeleteBatches,
): Promise<HardDeleteResult> {
  const { store, outcomes, refs } = job;
  const batchSize = job.batchSize ?? DELETE_BATCH;
  const pending: [string, string][] = [];
  for (const [path, key] of job.keyOf) {
    const reference = refs.of(key);
    if (reference) outcomes.set(path, { outcome: "retained", detail: reference });
    else if (!job.heads.get(key)) outcomes.set(path, { outcome: "absent", detail: null });
    else pending.push([path, key]);
  }

  let deleted = 0;
  for (let i = 0; i < pending.length; i += batchSize) {
    ctx.signal.throwIfAborted();
    await refs.catchUp();
    const batch: [string, string][] = [];
    for (const [path, key] of pending.slice(i, i + batchSize)) {
      const reference = refs.of(key);
      if (reference) outcomes.set(path, { outcome: "retained", detail: reference });
      else batch.push([path, key]);
    }
    const done = await store.deleteMany([...new Set(batch.map(([, key]) => key))]);
    const errors = new Map(done.errors.map((e) => [e.key, `${e.code}: ${e.message}`]));
    for (const [path, key] of batch) {
      const error = errors.get(key);
      outcomes.set(path, error ? failed(error) : { outcome: "deleted", detail: null });
      if (!error) deleted++;
    }
    ctx.progress({ phase: "deleting", deleted, total: pending.length });
  }

  const files = ctx.payload.files.map((f) => ({
    deletion_id: f.deletion_id,
    path: f.path,
    ...(outcomes.get(f.path) as Outcome),
  }));
  const count = (outcome: Outcome["outcome"]) => files.filter((f) => f.outcome === outcome).length;
  const result: HardDeleteResult = {
    table_version: refs.version,
    files,
    deleted: count("deleted"),
    retained: count("retained"),
    failed: count("failed"),
    duration_ms: Date.now() - job.started,
  };
  ctx.log.info(
    { deleted: result.deleted, retained: result.retained, failed: result.failed, version: refs.version },
    "hard delete done",
  );
  return result;
}

export function failed(detail: string): Outcome {
  return { outcome: "failed", detail };
}
