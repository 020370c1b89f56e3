/**
 * Which metadata file is the table's current one, for a table found by its folder alone (no
 * catalog), the way Hadoop-style tables and DuckDB find it:
 * 1. an explicit location, when the caller has one (from a catalog): a key, or a URI under the
 *    store's root;
 * 2. else `metadata/version-hint.text`: a number N names `vN` (plain or gzip-compressed), or a
 *    later `vM` where v(N+1) ... vM all exist (a writer commits its metadata file first and its hint
 *    second, so a hint may lag behind the newest commit); other text names a file in `metadata/`;
 *    a hint naming nothing that exists is ignored;
 * 3. else the highest version among `metadata/vN.metadata.json` and `NNNNN-<uuid>.metadata.json`,
 *    each also as `.gz.metadata.json` or `.metadata.json.gz`; or the only `*.metadata.json` there is.
 * Compressed files are recognised by their gzip magic bytes, whatever their name.
 */
import { gunzipSync } from "node:zlib";
import { type ObjectStore, readAll, StoreError } from "../store/index.ts";
import { IcebergError } from "./errors.ts";

export const METADATA_DIR = "metadata/";
export const VERSION_HINT_KEY = `${METADATA_DIR}version-hint.text`;

const METADATA_FILE = /^(?:v(\d+)|(\d+)-[^/]+)(?:\.gz)?\.metadata\.json(?:\.gz)?$/;
const ANY_METADATA_FILE = /\.metadata\.json(?:\.gz)?$/;

/**
 * The version a metadata file's name carries (`v3.metadata.json`, `00003-<uuid>.metadata.json`,
 * compressed or not); undefined for another name.
 */
export function metadataFileNumber(name: string): number | undefined {
  const m = METADATA_FILE.exec(name);
  return m ? Number(m[1] ?? m[2]) : undefined;
}

/** The key of the table's current metadata file. */
export async function findMetadataKey(store: ObjectStore, explicit?: string): Promise<string> {
  if (explicit !== undefined) return explicitKey(store, explicit);
  const names = new Set<string>();
  for await (const o of store.list(METADATA_DIR)) {
    const name = o.key.slice(METADATA_DIR.length);
    if (!name.includes("/")) names.add(name);
  }
  const hinted = await fromHint(store, names);
  if (hinted) return METADATA_DIR + hinted;

  let best: { version: number; name: string } | undefined;
  for (const name of names) {
    const version = metadataFileNumber(name);
    if (version !== undefined && (!best || version > best.version)) best = { version, name };
  }
  if (best) return METADATA_DIR + best.name;
  const any = [...names].filter((n) => ANY_METADATA_FILE.test(n));
  if (any.length === 1) return METADATA_DIR + any[0];
  throw new IcebergError(
    "not_a_table",
    any.length === 0
      ? `no Iceberg metadata under ${store.uri}${METADATA_DIR} (no version-hint.text and no *.metadata.json)`
      : `${store.uri}${METADATA_DIR} holds ${any.length} unnumbered metadata files (${any.join(", ")}) and no version hint; name the current one with metadataLocation`,
  );
}

/** The name the version hint points at, if it names a metadata file that exists. */
async function fromHint(store: ObjectStore, names: Set<string>): Promise<string | undefined> {
  if (!names.has(VERSION_HINT_KEY.slice(METADATA_DIR.length))) return undefined;
  const hint = (await readText(store, VERSION_HINT_KEY)).trim();
  if (!/^\d+$/.test(hint)) {
    const name = hint.slice(hint.lastIndexOf("/") + 1);
    return names.has(name) ? name : undefined;
  }
  const versioned = (n: number) =>
    [`v${n}.metadata.json`, `v${n}.gz.metadata.json`, `v${n}.metadata.json.gz`].find((name) =>
      names.has(name),
    );
  let version = Number(hint);
  let found = versioned(version);
  if (!found) return undefined;
  for (let next = versioned(version + 1); next; next = versioned(version + 1)) {
    version++;
    found = next;
  }
  return found;
}

function explicitKey(store: ObjectStore, location: string): string {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(location) && !location.startsWith("/")) return location;
  // A file:// URI escapes what a key holds literally (`%` is `%25`); S3 URIs are keys as they are.
  if (location.startsWith(store.uri)) {
    const rest = location.slice(store.uri.length);
    return store.uri.startsWith("file:") ? decodeURIComponent(rest) : rest;
  }
  throw new IcebergError(
    "not_a_table",
    `metadata location ${location} is not under the table's root ${store.uri}; give a key relative to the root or a URI under it`,
  );
}

/** The text of a metadata file or hint, gunzipped where it is gzip-compressed. */
export async function readText(store: ObjectStore, key: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readAll(await store.read(key));
  } catch (err) {
    if (err instanceof StoreError && err.code === "not_found")
      throw new IcebergError("not_a_table", `${store.uriOf(key)} does not exist`, { cause: err });
    throw err;
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (err) {
      throw new IcebergError("corrupt", `${store.uriOf(key)} is not valid gzip`, { cause: err });
    }
  }
  return bytes.toString("utf8");
}
