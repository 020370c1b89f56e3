/**
 * The metadata-file commit of a path-based Iceberg table, shared by every writer here (a replace
 * or append in `commit.ts`, an expiry in `expire.ts`):
 * - `writableVersion`: the current file's version N, refused (`IcebergError("unsupported")`) for
 *   format v3+, a table read from elsewhere than its recorded location, and metadata a catalog names;
 * - `withPreviousFile`: the next metadata's `metadata-log`, the current file appended, at most
 *   `write.metadata.previous-versions-max` entries (Iceberg's default 100);
 * - `publishMetadata`: `metadata/v<N+1>.metadata.json` with `writeIfAbsent` (that write is the
 *   commit), then the version hint; losing the race is an outcome, not an error.
 */
import type { ObjectStore } from "../store/index.ts";
import { IcebergError } from "./errors.ts";
import { stringifyJson } from "./json.ts";
import { METADATA_DIR, VERSION_HINT_KEY } from "./locate.ts";
import { MAX_FORMAT_VERSION } from "./refusals.ts";
import type { IcebergTable } from "./table.ts";

const VERSIONED = /^v(\d+)(?:\.gz)?\.metadata\.json(?:\.gz)?$/;
/** Iceberg's default for `write.metadata.previous-versions-max`. */
const METADATA_LOG_MAX = 100;

export type PublishOutcome =
  | { committed: true; metadataKey: string; version: number }
  | { committed: false; reason: "exists" | "conflict" };

/**
 * The version N of a path-based table's current metadata file `metadata/vN.metadata.json` (or its
 * gzip names), or null when it is named otherwise (`00003-<uuid>.metadata.json`: a catalog's).
 */
export function metadataVersion(table: IcebergTable): number | null {
  if (!table.metadataKey.startsWith(METADATA_DIR)) return null;
  const m = VERSIONED.exec(table.metadataKey.slice(METADATA_DIR.length));
  return m ? Number(m[1]) : null;
}

/** Why the agent must not write the table's files: a format version it does not write, a location elsewhere. */
export function writableTable(table: IcebergTable): void {
  const where = `${table.storeUri}${table.metadataKey}`;
  if (table.metadata.formatVersion > MAX_FORMAT_VERSION)
    throw new IcebergError(
      "unsupported",
      `${where} is format version ${table.metadata.formatVersion}; the agent writes versions 1 and 2`,
    );
  if (table.locationMismatch)
    throw new IcebergError(
      "unsupported",
      `the table records its location as ${table.locationMismatch.recorded} but is read from ${table.locationMismatch.store}; new files would be recorded where they are not`,
    );
}

/** The current metadata's version N, or why the agent must not commit to the table by file. */
export function writableVersion(table: IcebergTable): number {
  writableTable(table);
  const version = metadataVersion(table);
  if (version === null)
    throw new IcebergError(
      "unsupported",
      `${table.storeUri}${table.metadataKey} is not named v<N>.metadata.json, so a catalog tracks the table; write through the catalog`,
    );
  return version;
}

/** `metadata-log` of the metadata that follows the table's current file (`previous`, its location). */
export function withPreviousFile(table: IcebergTable, previous: string): Record<string, unknown>[] {
  const { metadata } = table;
  const log = Array.isArray(metadata.raw["metadata-log"])
    ? (metadata.raw["metadata-log"] as Record<string, unknown>[])
    : [];
  const keep = Number(metadata.properties["write.metadata.previous-versions-max"] ?? METADATA_LOG_MAX);
  return [...log, { "timestamp-ms": metadata.lastUpdatedMs, "metadata-file": previous }].slice(
    -Math.max(1, keep),
  );
}

/** Commits `metadata` as version N+1 of a table at version N (see the module comment). */
export async function publishMetadata(
  store: ObjectStore,
  version: number,
  metadata: Record<string, unknown>,
): Promise<PublishOutcome> {
  const metadataKey = `${METADATA_DIR}v${version + 1}.metadata.json`;
  const result = await store.writeIfAbsent(metadataKey, stringifyJson(metadata, 2));
  if (!result.written) return { committed: false, reason: result.reason };
  try {
    await store.write(VERSION_HINT_KEY, String(version + 1));
  } catch {
    // The commit stands: v<N+1> exists. A reader that trusts the stale hint sees version N until
    // the next writer updates it (readers here walk forward from the hint, as Iceberg's own do).
  }
  return { committed: true, metadataKey, version: version + 1 };
}
