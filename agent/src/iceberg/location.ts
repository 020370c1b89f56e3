/**
 * From the file locations Iceberg metadata records to keys of the store the table is read from.
 *
 * Iceberg records absolute locations (`s3://b/t/data/f.parquet`), but tables are copied, synced and
 * mounted elsewhere, and some writers record relative ones (`./lineitem_iceberg`). A recorded path
 * maps to a key when it lies under one of two roots, tried in order:
 * 1. the store's own root (`store.uri`), so a table that records where it really is always maps;
 * 2. the table's recorded `location`, whatever it is, so a moved table still maps by the part of
 *    each path after it.
 * Paths are compared as text after light normalisation (`file:/x` and `file:///x` are `/x`;
 * `s3a://`, `s3n://` are `s3://`; a leading `./` and trailing `/` go), never percent-decoded:
 * Iceberg writes escapes such as `%3A` literally into file names. A path under neither root, or
 * one whose rest is not a plain key (`..`, empty segments), maps to null.
 *
 * A writer must not commit where the recorded location is not the store's root (new files would
 * be recorded under a location that is not theirs): `locationMismatch` says so, naming both.
 */
import { fileURLToPath } from "node:url";
import { tryLocationKey } from "@lakesmith/shared/locations";

export interface LocationMismatch {
  /** The table's `location` as its metadata records it. */
  recorded: string;
  /** Where the table is actually read from (`store.uri`). */
  store: string;
}

/** The store key of a recorded file location, or null where it lies outside the table. */
export function keyOfPath(path: string, recordedLocation: string, storeUri: string): string | null {
  const p = normalize(path);
  for (const root of [normalize(storeRootPath(storeUri)), normalize(recordedLocation)]) {
    const rest = under(p, root);
    if (rest !== null && isPlainKey(rest)) return rest;
  }
  return null;
}

/** Null when the recorded location is the store's root, else both, for the reason a writer gives. */
export function locationMismatch(recordedLocation: string, storeUri: string): LocationMismatch | null {
  const recorded = tryLocationKey(canonicalUri(recordedLocation));
  const store = tryLocationKey(canonicalUri(storeUri));
  return recorded !== undefined && recorded === store
    ? null
    : { recorded: recordedLocation, store: storeUri };
}

/** `file:/x` → `file:///x`, `s3a://` → `s3://`: spellings of one location that Hadoop writers use. */
function canonicalUri(uri: string): string {
  return uri.replace(/^file:\/(?!\/)/i, "file:///").replace(/^s3[an]:\/\//i, "s3://");
}

function normalize(path: string): string {
  let p = canonicalUri(path.trim());
  if (/^file:\/\/(localhost)?\//i.test(p)) p = p.slice(p.indexOf("/", 7));
  while (p.startsWith("./")) p = p.slice(2);
  return p.replace(/\/+$/, "");
}

/** The store's root as a local path for `file://` stores, else the URI itself. */
function storeRootPath(storeUri: string): string {
  return storeUri.toLowerCase().startsWith("file:") ? fileURLToPath(storeUri) : storeUri;
}

/** The part of `p` below `root`, or null; an empty root (`./`) holds every relative path. */
function under(p: string, root: string): string | null {
  if (root === "" || root === ".") return isRelative(p) ? p : null;
  return p.startsWith(`${root}/`) ? p.slice(root.length + 1) : null;
}

function isRelative(p: string): boolean {
  return !p.startsWith("/") && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(p);
}

function isPlainKey(key: string): boolean {
  return (
    key !== "" && key.split("/").every((s) => s !== "" && s !== "." && s !== "..") && !key.includes("\\")
  );
}
