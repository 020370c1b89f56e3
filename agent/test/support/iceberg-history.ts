/**
 * Iceberg tables with a history, for the vacuum tests: a copy of `lineitem_iceberg` (two snapshots:
 * an append, then an overwrite) plus `replace` commits made with `commitReplace` at chosen times,
 * branches made by rolling `main` back, refs and properties edited into the current metadata file,
 * and, independent of the vacuum's own reader, every file a snapshot references.
 * Added data files are a few bytes each: commits record them, nothing reads their rows.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import {
  commitReplace,
  type IcebergTable,
  keyOf,
  loadIcebergTable,
  type NewDataFile,
  parseJson,
  readSnapshotFiles,
  stringifyJson,
} from "../../src/iceberg/index.ts";
import { FileStore, type ObjectStore, readAll } from "../../src/store/index.ts";
import { copyIcebergFixture } from "./iceberg.ts";

export const LINEITEM = "iceberg/lineitem_iceberg";

/** A copy of lineitem_iceberg in `dir`, at home there (or recording `location`, read through a store rooted there). */
export async function lineitemCopy(dir: string, location?: string): Promise<ObjectStore> {
  await copyIcebergFixture(LINEITEM, dir, location);
  const files = new FileStore(dir);
  return location ? rootedAt(files, location) : files;
}

/** `store` as if its root were `location` (`s3://lake/t`): a table recording S3 paths, kept locally. */
export function rootedAt(store: ObjectStore, location: string): ObjectStore {
  const uri = `${location.replace(/\/+$/, "")}/`.replace(/^s3[an]:/, "s3:");
  return {
    uri,
    uriOf: (key) => `${uri}${key}`,
    list: (prefix) => store.list(prefix),
    head: (key) => store.head(key),
    read: (key, range) => store.read(key, range),
    download: (key, localPath) => store.download(key, localPath),
    write: (key, source) => store.write(key, source),
    writeIfAbsent: (key, source) => store.writeIfAbsent(key, source),
    deleteMany: (keys) => store.deleteMany(keys),
  };
}

/** Writes a small data file under `data/` and describes it as a new unpartitioned file. */
export async function tinyDataFile(store: ObjectStore, name = randomUUID()): Promise<NewDataFile> {
  const key = `data/gen-${name}.parquet`;
  const bytes = Buffer.from(`rows of ${name}`);
  await store.write(key, bytes);
  return {
    key,
    fileSizeInBytes: bytes.length,
    recordCount: 1 + (bytes.length % 7),
    specId: 0,
    partition: new Map(),
    valueCounts: new Map(),
    nullValueCounts: new Map(),
    lowerBounds: new Map(),
    upperBounds: new Map(),
  };
}

/**
 * Commits, on main, a snapshot at `nowMs` that replaces the live data files `remove` picks with
 * `add` new tiny files; returns the new snapshot's id.
 */
export async function replaceFiles(
  store: ObjectStore,
  nowMs: number,
  change: { remove: (keys: string[]) => string[]; add: number },
): Promise<bigint> {
  const table = await loadIcebergTable(store);
  const base = await readSnapshotFiles(store, table);
  const live = base.entries.filter((e) => e.content === "data");
  const removeKeys = new Set(change.remove(live.map((e) => e.key ?? "")));
  const added = await Promise.all(Array.from({ length: change.add }, () => tinyDataFile(store)));
  const outcome = await commitReplace(store, table, {
    base,
    removed: live.filter((e) => removeKeys.has(e.key ?? "")),
    added,
    summary: {},
    nowMs,
  });
  if (!outcome.committed) throw new Error(`lost the commit race on ${store.uri}`);
  return outcome.snapshotId;
}

/** Rewrites the current metadata file in place (refs, properties, statistics a test needs). */
export async function editMetadata(
  store: ObjectStore,
  edit: (raw: Record<string, unknown>) => void,
): Promise<IcebergTable> {
  const table = await loadIcebergTable(store);
  const raw = parseJson((await readAll(await store.read(table.metadataKey))).toString("utf8")) as Record<
    string,
    unknown
  >;
  edit(raw);
  await store.write(table.metadataKey, stringifyJson(raw, 2));
  return loadIcebergTable(store);
}

/**
 * Rolls main back to its head's parent, leaving the head on a new branch `branch`, or on no ref at
 * all (a rolled-back commit) where none is named.
 */
export async function rollBackMain(store: ObjectStore, branch?: string): Promise<void> {
  await editMetadata(store, (raw) => {
    const snapshots = raw.snapshots as Record<string, unknown>[];
    const head = raw["current-snapshot-id"] as bigint;
    const parent = snapshots.find((s) => BigInt(s["snapshot-id"] as bigint) === BigInt(head))?.[
      "parent-snapshot-id"
    ] as bigint;
    const refs = raw.refs as Record<string, Record<string, unknown>>;
    if (branch) refs[branch] = { "snapshot-id": head, type: "branch" };
    refs.main = { ...refs.main, "snapshot-id": parent };
    raw["current-snapshot-id"] = parent;
  });
}

/** Writes a statistics file for `snapshotId` under `metadata/` and records it in the metadata. */
export async function addStatistics(store: ObjectStore, snapshotId: bigint): Promise<string> {
  const key = `metadata/stats-${snapshotId}-${randomUUID()}.stats`;
  const bytes = Buffer.from(`puffin of ${snapshotId}`);
  await store.write(key, bytes);
  const table = await loadIcebergTable(store);
  const path = `${table.metadata.location.replace(/\/+$/, "")}/${key}`;
  await editMetadata(store, (raw) => {
    raw.statistics = [
      ...((raw.statistics as unknown[]) ?? []),
      {
        "snapshot-id": snapshotId,
        "statistics-path": path,
        "file-size-in-bytes": bytes.length,
        "blob-metadata": [],
      },
    ];
  });
  return key;
}

/**
 * Every store key each snapshot references, read with `readSnapshotFiles`: its manifest list,
 * manifests, live data and delete files, and statistics files.
 */
export async function referencedKeys(
  store: ObjectStore,
  table: IcebergTable,
): Promise<Map<bigint, Set<string>>> {
  const byId = new Map<bigint, Set<string>>();
  for (const snapshot of table.metadata.snapshots) {
    const files = await readSnapshotFiles(store, table, { snapshotId: snapshot.snapshotId });
    const keys = new Set<string>();
    const add = (path: string | null) => {
      const key = path === null ? null : keyOf(table, path);
      if (key !== null) keys.add(key);
    };
    add(snapshot.manifestList);
    for (const m of files.manifests) add(m.path);
    for (const e of files.entries) add(e.path);
    for (const s of [...table.metadata.statistics, ...table.metadata.partitionStatistics])
      if (s.snapshotId === snapshot.snapshotId) add(s.path);
    byId.set(snapshot.snapshotId, keys);
  }
  return byId;
}

/** Writes `text` at a local path, creating its folder. */
export async function writeLocal(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}
