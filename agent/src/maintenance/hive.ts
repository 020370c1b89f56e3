/**
 * Pending deletions of Hive tables: the folders a crunch moved partitions away from
 * (`formats/hive.ts`), recovered or deleted.
 *
 * - Recover moves a partition (or an unpartitioned table) back to its old folder, under the
 *   metastore's exclusive lock on the table, once every recorded file of the folder is checked to
 *   be still there at its size. A partition already at its old folder is `already_live`; one moved
 *   since to somewhere else than where the crunch put it (crunched again, or changed by someone) is
 *   not moved: the job fails for good, naming where it is now.
 * - Hard delete deletes the recorded files in batches (`delete-batches.ts`). The records name only
 *   files of folders a crunch moved away from, and recovering is the one way back, which takes the
 *   records out of hard-delete's reach first; so no metastore read is needed. Paths outside the
 *   table's root are refused.
 */
import type {
  HardDeletePayload,
  HardDeleteResult,
  RecoverPayload,
  RecoverResult,
} from "@lakesmith/shared/maintenance";
import { PARAM_JOB_ID, PARAM_PREVIOUS_LOCATION, PARAM_REWRITE } from "../formats/hive.ts";
import { canonicalLocation } from "../hive/location.ts";
import { openMetastore } from "../hive/metastore.ts";
import { DDL_TIME } from "../hive/snapshot.ts";
import { type JobContext, JobError } from "../registry.ts";
import { deleteUnreferenced, failed, type LiveReferences, type Outcome } from "./delete-batches.ts";
import { keyOfPayloadPath } from "./iceberg-hard-delete.ts";
import { headAll, type MaintenanceOptions } from "./table.ts";

/** How many missing files a failure names. */
const NAMED_FILES = 5;

export async function runHiveRecover(
  ctx: JobContext<RecoverPayload>,
  options: MaintenanceOptions,
): Promise<RecoverResult> {
  const started = Date.now();
  const { payload, signal } = ctx;
  const ref = payload.catalog;
  if (ref?.type !== "hive_metastore")
    throw new JobError("recovering a Hive table's files needs its metastore (the job carries none)", {
      retryable: false,
    });
  const results: RecoverResult["files"] = [];
  let version: number | null = null;
  const metastore = await openMetastore(ref);
  try {
    for (const folder of payload.folders) {
      ctx.progress({ phase: "checking", folder: folder.previous_location });
      const heads = await headAll(options.store, folder.paths, signal);
      const missing = folder.paths.filter((p) => !heads.get(p));
      const { database: db, table } = ref;
      const outcome = await metastore.withTableLock({ db, table, exclusive: true }, async () => {
        if (folder.values.length === 0) {
          const record = await metastore.getTable(db, table);
          const moved = moveBack(record, folder, missing);
          if (moved === "restored") await metastore.alterTable(db, table, record);
          return moved;
        }
        const record = await metastore.getPartition(db, table, folder.values);
        const moved = moveBack(record, folder, missing);
        if (moved === "restored") await metastore.alterPartitions(db, table, [record]);
        return moved;
      });
      if (outcome === "restored") version = Math.max(version ?? 0, Math.floor(Date.now() / 1000));
      ctx.log.info({ folder: folder.previous_location, outcome }, "recovered a Hive folder");
      folder.deletion_ids.forEach((id, i) => {
        results.push({ deletion_id: id, path: folder.paths[i] ?? "", outcome });
      });
    }
  } finally {
    await metastore.close();
  }
  return { committed_version: version, files: results, duration_ms: Date.now() - started };
}

/**
 * Moves a partition's (or table's) record back to the folder a crunch moved it from, in place:
 * `already_live` when it is there already; fails for good when it is somewhere else than where the
 * crunch put it, or when files of the folder are gone.
 */
function moveBack(
  record: { sd: { location: string }; parameters: Record<string, string> },
  folder: RecoverPayload["folders"][number],
  missing: readonly string[],
): "restored" | "already_live" {
  const at = canonicalLocation(record.sd.location);
  if (at === canonicalLocation(folder.previous_location)) return "already_live";
  if (at !== canonicalLocation(folder.location))
    throw new JobError(
      `${folder.previous_location} can't be moved back: the table reads ${record.sd.location} now, ` +
        `not ${folder.location} where the crunch moved it (recover the later crunch's records first)`,
      { retryable: false },
    );
  if (missing.length > 0)
    throw new JobError(
      `${missing.length} file(s) of ${folder.previous_location} are gone (${missing.slice(0, NAMED_FILES).join(", ")}${missing.length > NAMED_FILES ? ", ..." : ""}); the folder can't be moved back`,
      { retryable: false },
    );
  record.sd.location = folder.previous_location;
  const params: Record<string, string> = {
    ...record.parameters,
    [DDL_TIME]: String(Math.floor(Date.now() / 1000)),
  };
  for (const key of [PARAM_JOB_ID, PARAM_REWRITE, PARAM_PREVIOUS_LOCATION, "totalSize", "numFiles"])
    delete params[key];
  record.parameters = params;
  return "restored";
}

export async function runHiveHardDelete(
  ctx: JobContext<HardDeletePayload>,
  options: MaintenanceOptions,
): Promise<HardDeleteResult> {
  const started = Date.now();
  const { payload, signal } = ctx;
  const store = options.store;
  const outcomes = new Map<string, Outcome>();
  const keyOf = new Map<string, string>();
  for (const { path } of payload.files) {
    if (outcomes.has(path) || keyOf.has(path)) continue;
    const where = keyOfPayloadPath(store, path);
    if ("refused" in where) outcomes.set(path, failed(`never deleted: ${where.refused}`));
    else keyOf.set(path, where.key);
  }
  ctx.progress({ phase: "checking", files: keyOf.size });
  const heads = await headAll(store, [...new Set(keyOf.values())], signal);
  const refs: LiveReferences = { version: 0, of: () => null, catchUp: async () => {} };
  return deleteUnreferenced(ctx, { store, keyOf, heads, outcomes, refs, started });
}
