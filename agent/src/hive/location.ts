/**
 * Metastore locations against the agent's store: which store key a table's or partition's
 * location is, and the location a rewritten partition moves to.
 *
 * Metastores spell one place several ways: `s3a://` and `s3n://` for `s3://`, `file:/tmp/t` for
 * `file:///tmp/t`, with or without a trailing slash. Locations are compared in one canonical
 * spelling; a location written back keeps the metastore's own spelling (`s3a://...` stays `s3a`).
 *
 * Where crunch writes: under the table's folder, `_lakesmith/<rewrite>/` (a folder whose name
 * starts with `_`, which Hive, Spark and Trino skip when they list a table's folder):
 * - a partition of a partitioned table: `<table>/_lakesmith/<rewrite>/<col=value/...>`;
 * - an unpartitioned table: `<table>/_lakesmith/<rewrite>/data`, where `<table>` is the folder the
 *   table was registered at (a table crunched before sits at `<table>/_lakesmith/<earlier>/data`:
 *   the next rewrite goes beside it, not inside it).
 */

/** The folder under a table's root that holds every rewrite's new folders. */
export const REWRITES_FOLDER = "_lakesmith";

/** `location` in one spelling: `s3://`, `file:///`, no trailing slash. */
export function canonicalLocation(location: string): string {
  let out = location.trim().replace(/^s3[an]:\/\//i, "s3://");
  // file:/x and file://x (no host) mean file:///x.
  out = out.replace(/^file:\/*(?=[^/])/i, "file:///");
  return out.replace(/\/+$/, "");
}

/**
 * The store key (relative to the store's root, no trailing slash; `""` for the root itself) of a
 * metastore location, or null when the location is not under the store's root.
 */
export function keyOfLocation(storeUri: string, location: string): string | null {
  const root = canonicalLocation(storeUri);
  const at = canonicalLocation(location);
  if (at === root) return "";
  if (!at.startsWith(`${root}/`)) return null;
  // A location's path names folders as they are (a partition folder `h=12%3A00` is named so).
  return at.slice(root.length + 1);
}

/**
 * The location of `key` (relative to the store's root), spelled as `known`, the location of
 * `knownKey`, is spelled (`s3a://lake/t/x` for key `x` gives `s3a://lake/t/<key>`).
 */
export function locationOfKey(known: string, knownKey: string, key: string): string {
  const spelled = known.trim().replace(/\/+$/, "");
  const root =
    knownKey === "" ? spelled : spelled.slice(0, spelled.length - knownKey.length).replace(/\/+$/, "");
  const rest = key.replace(/^\/+|\/+$/g, "");
  return rest ? `${root}/${rest}` : root;
}

/**
 * The key of the folder a rewrite's files for one partition go to (with a trailing `/`):
 * `partitionPath` is the escaped `col=value/...` path, `""` for an unpartitioned table, whose
 * `tableKey` is the key of the table's current location.
 */
export function rewriteFolder(tableKey: string, rewrite: string, partitionPath: string): string {
  const base = partitionPath === "" ? registeredFolder(tableKey) : tableKey;
  const prefix = base === "" ? "" : `${base}/`;
  return `${prefix}${REWRITES_FOLDER}/${rewrite}/${partitionPath === "" ? "data" : partitionPath}/`;
}

/** The key of the record a rewrite leaves beside its folders (its job, result and swaps). */
export function rewriteRecordKey(tableKey: string, rewrite: string, partitioned: boolean): string {
  const base = partitioned ? tableKey : registeredFolder(tableKey);
  return `${base === "" ? "" : `${base}/`}${REWRITES_FOLDER}/${rewrite}/_rewrite.json`;
}

/** The folder an unpartitioned table was registered at, before any rewrite moved it. */
function registeredFolder(tableKey: string): string {
  const match = new RegExp(`^(.*?)/?${REWRITES_FOLDER}/[^/]+/data$`).exec(tableKey);
  return match ? (match[1] ?? "") : tableKey;
}

/**
 * Whether a key listed under a data folder is one of its data files: directly in the folder (Hive
 * does not descend into sub-folders) and not hidden (a name starting with `_` or `.`, such as
 * `_SUCCESS` or `.part-0.crc`).
 */
export function isDataFile(folderKey: string, key: string): boolean {
  const prefix = folderKey === "" ? "" : `${folderKey}/`;
  if (!key.startsWith(prefix)) return false;
  const name = key.slice(prefix.length);
  return name.length > 0 && !name.includes("/") && !name.startsWith("_") && !name.startsWith(".");
}
