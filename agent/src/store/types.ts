import type { Readable } from "node:stream";

/** One object as a listing or `head` sees it. `key` is relative to the store's root. */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
  /** The store's entity tag where it has one (S3); absent for `file://`. */
  etag?: string;
}

/**
 * What a write takes: bytes, text (UTF-8), a stream or async iterable of bytes, or a local file by
 * path (read as a stream, so its size does not matter).
 */
export type WriteSource = Uint8Array | string | Readable | AsyncIterable<Uint8Array> | LocalFileSource;

/**
 * A local file to write. With `move`, the caller gives the file up: a `file://` store on the same
 * file system moves it into place instead of copying its bytes, so it may be gone afterwards
 * (or still there, where it was copied); other stores read it as usual and leave it.
 */
export interface LocalFileSource {
  file: string;
  move?: boolean;
}

/**
 * The outcome of a write-if-absent. Losing is an expected outcome (two Delta writers racing for the
 * same commit version), so it is returned, not thrown: `exists` when the key was already there,
 * `conflict` when the store saw a concurrent conditional write in flight (S3's 409); either way the
 * caller reloads and decides again.
 */
export type WriteIfAbsentResult = { written: true } | { written: false; reason: "exists" | "conflict" };

/** The outcome of a batch delete: keys gone (including ones that were already absent) and per-key failures. */
export interface DeleteResult {
  deleted: string[];
  errors: { key: string; code: string; message: string }[];
}

/** A byte range to read, both ends inclusive, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end?: number;
}

/**
 * One object store, rooted at a URI (`file:///data/lake/t1/`, `s3://bucket/lake/t1/`). Keys are
 * relative to that root, `/`-separated, with no empty, `.` or `..` segments, so the same key means
 * the same object whatever the backend.
 */
export interface ObjectStore {
  /** The root as a canonical URI, ending with `/`. */
  readonly uri: string;
  /** The absolute URI of one key, for logs, DuckDB and Delta `path` fields. */
  uriOf(key: string): string;
  /** Every object whose key starts with `prefix` (a string prefix, not only a folder), in key order. */
  list(prefix?: string): AsyncIterable<ObjectInfo>;
  /** The object's metadata, or `undefined` when there is none. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** The object's bytes as a stream; throws `StoreError` with code `not_found` when absent. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /**
   * The object's own local path, where the store is a local folder, so DuckDB can read it in place
   * instead of from a copy; absent for remote stores. Only for objects that are never rewritten in
   * place (table data files).
   */
  localFile?(key: string): string;
  /** Copies the object to a local file (DuckDB reads local files); the file appears only when complete. */
  download(key: string, localPath: string): Promise<ObjectInfo>;
  /** Writes (replaces) the object; readers see the old object or the new one, never a part. */
  write(key: string, source: WriteSource): Promise<void>;
  /** Writes the object only if no object has the key, atomically with respect to other writers. */
  writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult>;
  /** Deletes keys; absent keys count as deleted, failures are reported per key rather than thrown. */
  deleteMany(keys: readonly string[]): Promise<DeleteResult>;
}

/**
 * - `unavailable`: the store kept failing (5xx, throttling, network, stalls, short bodies) until the
 *   retry budget was spent; the message names the operation, the object and the last status.
 * - `changed`: the object was replaced while it was being read; read it again from the start.
 * - `corrupt`: the bytes read do not match the object's checksum; nothing read may be used.
 */
export type StoreErrorCode =
  | "not_found"
  | "invalid_key"
  | "unsupported"
  | "unavailable"
  | "changed"
  | "corrupt";

/** A store failure the caller can act on; the backend's own error, where there is one, is the `cause`. */
export class StoreError extends Error {
  override readonly name = "StoreError";
  /** The last HTTP status the store answered, where it answered. */
  readonly status: number | undefined;
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options: { cause?: unknown; status?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
  }
}
