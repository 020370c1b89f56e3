/**
 * What the Iceberg vacuum and hard delete share: loading a table they may touch, its retention
 * properties, the keys they never name, and the files each snapshot references.
 * - Refused for good: format v3+, a recorded location that is not the store's root, metadata a
 *   catalog names (not `vN.metadata.json`: the agent can't commit an expiry), encryption, and
 *   `gc.enabled=false` (the table's files may belong to other tables too, as Iceberg's own
 *   expiry and orphan removal assume).
 * - Never named: metadata JSON files, `version-hint.text`, and their Hadoop `.crc` checksums.
 * - A snapshot references its manifest list, its manifests, the live (ADDED and EXISTING) data and
 *   delete files of those, and its statistics and partition statistics files. Each manifest list
 *   and manifest is read once (16 at a time), however many snapshots share it; a reader kept across
 *   metadata versions reads only what is new.
 */

import { DEFAULT_SNAPSHOT_RETENTION_HOURS } from "@lakesmith/shared/maintenance";
import { permanentIcebergError } from "../formats/iceberg.ts";
import {
  type IcebergTable,
  keyOf,
  loadIcebergTable,
  MAX_FORMAT_VERSION,
  type ManifestFile,
  metadataVersion,
  readManifestEntries,
  readManifestList,
  type Snapshot,
} from "../iceberg/index.ts";
import { JobError } from "../registry.ts";
import { type ObjectStore, StoreError } from "../store/index.ts";
import { HOUR_MS } from "./table.ts";

/** A file a snapshot references: its path as recorded, its store key (null: outside the table), its size where recorded. */
export interface FileRef {
  path: string;
  key: string | null;
  size: number | null;
}

/** Loads the current metadata and fails the job for good where a deleting job must not touch the table. */
export async function loadIcebergForDeletion(
  store: ObjectStore,
  job: string,
): Promise<{ table: IcebergTable; version: number }> {
  let table: IcebergTable;
  try {
    table = await loadIcebergTable(store);
  } catch (err) {
    throw permanentIcebergError(err, store.uri);
  }
  const version = metadataVersion(table);
  const refusal = deletionRefusal(table, version);
  if (refusal !== null || version === null)
    throw new JobError(`${job} refused: ${refusal}`, { retryable: false });
  return { table, version };
}

function deletionRefusal(table: IcebergTable, version: number | null): string | null {
  const { metadata } = table;
  if (metadata.formatVersion > MAX_FORMAT_VERSION)
    return `format version ${metadata.formatVersion} is newer than the agent writes (${MAX_FORMAT_VERSION})`;
  if (table.locationMismatch)
    return `the table records its location as ${table.locationMismatch.recorded} but is read from ${table.locationMismatch.store}; point the table's URI at its recorded location`;
  if (version === null)
    return `the metadata file ${table.metadataKey} is not named v<N>.metadata.json, so a catalog tracks the table; expire its snapshots through the catalog`;
  if (metadata.encryptionKeys !== null)
    return "the table metadata lists encryption keys: the table is encrypted";
  if (metadata.properties["gc.enabled"]?.toLowerCase() === "false")
    return "the table sets gc.enabled=false: its files may be shared with other tables, so none is proposed or deleted";
  return null;
}

export interface IcebergRetention {
  /** `history.expire.max-snapshot-age-ms` in hours, 120 when unset. */
  tableHours: number;
  /** `history.expire.min-snapshots-to-keep`, 1 when unset. */
  minSnapshotsToKeep: number;
  /** `history.expire.max-ref-age-ms`, Infinity when unset. */
  maxRefAgeMs: number;
}

/** The table's retention properties. A value the agent can't read fails the job for good: a guess could expire too much. */
export function icebergRetention(properties: Record<string, string>): IcebergRetention {
  const maxAge = positiveInteger(properties, "history.expire.max-snapshot-age-ms");
  return {
    tableHours: maxAge === undefined ? DEFAULT_SNAPSHOT_RETENTION_HOURS : maxAge / HOUR_MS,
    minSnapshotsToKeep: positiveInteger(properties, "history.expire.min-snapshots-to-keep") ?? 1,
    maxRefAgeMs: positiveInteger(properties, "history.expire.max-ref-age-ms") ?? Number.POSITIVE_INFINITY,
  };
}

function positiveInteger(properties: Record<string, string>, name: string): number | undefined {
  const value = properties[name];
  if (value === undefined) return undefined;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new JobError(
      `the table property ${name}='${value}' is not a positive integer; fix the table property`,
      { retryable: false },
    );
  return n;
}

const METADATA_NAME = /(?:\.metadata\.json(?:\.gz)?|^version-hint\.text)$/;

/** Whether the key is a metadata JSON file, the version hint, or the checksum of one: never deleted. */
export function isMetadataKey(key: string): boolean {
  let name = key.slice(key.lastIndexOf("/") + 1);
  if (name.startsWith(".") && name.endsWith(".crc")) name = name.slice(1, -".crc".length);
  return METADATA_NAME.test(name);
}

/** The Hadoop checksum file beside `key` (`dir/.name.crc`). */
export function checksumKeyOf(key: string): string {
  const slash = key.lastIndexOf("/") + 1;
  return `${key.slice(0, slash)}.${key.slice(slash)}.crc`;
}

/**
 * The file system a location lies in, as `scheme://authority` (`s3a`, `s3n` read as `s3`; local
 * paths are `file://`), or null for a relative path.
 */
export function fileSystemOf(location: string): string | null {
  const p = location.trim();
  if (p.startsWith("/")) return "file://";
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/([^/]*))?/.exec(p);
  if (!m) return null;
  const scheme = (m[1] as string).toLowerCase().replace(/^s3[an]$/, "s3");
  const authority = m[2] ?? "";
  return `${scheme}://${scheme === "file" && authority.toLowerCase() === "localhost" ? "" : authority}`;
}

const READ_CONCURRENCY = 16;

type Listed = { list: FileRef | null; manifests: ManifestFile[] } | { missing: string };

/** The files snapshots reference, read once per manifest list and manifest (see the module comment). */
export class SnapshotReferences {
  private readonly lists = new Map<bigint, Listed>();
  /** By manifest path: its live files, or the path itself where the manifest is missing. */
  private readonly manifests = new Map<string, FileRef[] | { missing: string }>();

  constructor(private readonly store: ObjectStore) {}

  /** Reads the manifest lists and manifests of `snapshots` not read yet. */
  async read(table: IcebergTable, snapshots: readonly Snapshot[], signal: AbortSignal): Promise<void> {
    const unread = snapshots.filter((s) => !this.lists.has(s.snapshotId));
    await inBatches(unread, signal, async (s) => {
      this.lists.set(s.snapshotId, await this.readList(table, s));
    });
    const manifests = new Map<string, ManifestFile>();
    for (const s of unread) {
      const listed = this.lists.get(s.snapshotId);
      if (listed && "manifests" in listed)
        for (const m of listed.manifests) if (!this.manifests.has(m.path)) manifests.set(m.path, m);
    }
    await inBatches([...manifests.values()], signal, async (m) => {
      this.manifests.set(m.path, await this.readManifest(table, m));
    });
  }

  /** Every file `snapshot` references, as far as it could be read (`missingOf` says what could not). */
  *filesOf(table: IcebergTable, snapshot: Snapshot): Generator<FileRef> {
    const listed = this.lists.get(snapshot.snapshotId);
    if (listed && "manifests" in listed) {
      if (listed.list) yield listed.list;
      for (const m of listed.manifests) {
        yield { path: m.path, key: m.key, size: m.length };
        const live = this.manifests.get(m.path);
        if (Array.isArray(live)) yield* live;
      }
    }
    for (const s of [...table.metadata.statistics, ...table.metadata.partitionStatistics])
      if (s.snapshotId === snapshot.snapshotId)
        yield { path: s.path, key: keyOf(table, s.path), size: s.fileSizeInBytes };
  }

  /** The manifest list or manifests of `snapshot` that do not exist. */
  missingOf(snapshot: Snapshot): string[] {
    const listed = this.lists.get(snapshot.snapshotId);
    if (!listed) throw new Error(`snapshot ${snapshot.snapshotId} was not read`);
    if ("missing" in listed) return [listed.missing];
    return listed.manifests.flatMap((m) => {
      const read = this.manifests.get(m.path);
      return read && "missing" in read ? [read.missing] : [];
    });
  }

  private async readList(table: IcebergTable, snapshot: Snapshot): Promise<Listed> {
    let manifests: ManifestFile[];
    try {
      manifests = await readManifestList(this.store, table, snapshot);
    } catch (err) {
      if (isNotFound(err)) return { missing: snapshot.manifestList ?? "a manifest" };
      throw err;
    }
    const list =
      snapshot.manifestList === null
        ? null
        : { path: snapshot.manifestList, key: keyOf(table, snapshot.manifestList), size: null };
    return { list, manifests };
  }

  private async readManifest(
    table: IcebergTable,
    manifest: ManifestFile,
  ): Promise<FileRef[] | { missing: string }> {
    try {
      const entries = await readManifestEntries(this.store, table, manifest);
      return entries
        .filter((e) => e.status !== "deleted")
        .map((e) => ({ path: e.path, key: e.key, size: e.fileSizeInBytes }));
    } catch (err) {
      if (isNotFound(err)) return { missing: manifest.path };
      throw err;
    }
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof StoreError && err.code === "not_found";
}

async function inBatches<T>(items: readonly T[], signal: AbortSignal, work: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += READ_CONCURRENCY) {
    signal.throwIfAborted();
    await Promise.all(items.slice(i, i + READ_CONCURRENCY).map(work));
  }
}
