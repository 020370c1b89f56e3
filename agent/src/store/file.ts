/**
 * `file://` stores: a local folder as an object store, the embedded default.
 *
 * Atomicity comes from the file system, not from locks: every write goes to a temporary file in
 * the target's folder first. A plain write then `rename`s it over the key (readers see the old file
 * or the new one); a write-if-absent `link`s it to the key, which fails with EEXIST when the key
 * exists, so of N racing writers exactly one wins and no reader ever sees a partial object under
 * the final name. Temporary files carry `TEMP_MARK` and are left out of listings. A local file is
 * copied by the kernel, not streamed, or moved where the caller gives it up (`LocalFileSource`).
 *
 * Keys map to paths under the root only; `checkKey` refuses `..` and absolute keys, and the
 * resolved path is checked against the root again. A symbolic link to a file reads as that file;
 * links to folders are not walked by `list` (no cycles), and where links lead is not checked.
 */

import { createReadStream } from "node:fs";
import { link, lstat, mkdir, readdir, stat, unlink } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import type { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { checkKey, checkPrefix } from "./keys.ts";
import { downloadObject, replaceAtomically, TEMP_MARK, tempPathFor, writeTemp } from "./local.ts";
import {
  type ByteRange,
  type DeleteResult,
  type ObjectInfo,
  type ObjectStore,
  StoreError,
  type WriteIfAbsentResult,
  type WriteSource,
} from "./types.ts";

export class FileStore implements ObjectStore {
  readonly uri: string;
  private readonly root: string;

  /** `root` is an absolute folder; it is created on the first write if missing. */
  constructor(root: string) {
    this.root = resolve(root);
    this.uri = pathToFileURL(this.root.endsWith(sep) ? this.root : this.root + sep).href;
  }

  uriOf(key: string): string {
    return pathToFileURL(this.pathOf(key)).href;
  }

  async *list(prefix = ""): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    // Walk only the deepest folder the prefix names, then filter on the rest of it.
    const cut = prefix.lastIndexOf("/");
    const folderKey = cut < 0 ? "" : prefix.slice(0, cut + 1);
    yield* this.walk(folderKey, prefix);
  }

  /**
   * Depth-first, entries sorted so that keys come out in byte order, as S3 lists them: a folder
   * sorts as its name plus `/`, so `a.txt` (`.` < `/`) comes before everything under `a/`.
   */
  private async *walk(folderKey: string, prefix: string): AsyncIterable<ObjectInfo> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(folderKey === "" ? this.root : this.pathOf(folderKey.slice(0, -1)), {
        withFileTypes: true,
      });
    } catch (err) {
      if (isCode(err, "ENOENT") || isCode(err, "ENOTDIR")) return;
      throw err;
    }
    const named = entries
      .filter((e) => !e.name.includes(TEMP_MARK))
      .map((e) => ({ entry: e, sortKey: folderKey + e.name + (e.isDirectory() ? "/" : "") }))
      .filter(({ sortKey }) => sortKey.startsWith(prefix) || prefix.startsWith(sortKey))
      .sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)));
    for (const { entry, sortKey } of named) {
      if (entry.isDirectory()) {
        yield* this.walk(sortKey, prefix);
      } else if (sortKey.startsWith(prefix)) {
        const info = await this.head(sortKey);
        if (info) yield info;
      }
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const path = this.pathOf(key);
    try {
      const s = await stat(path);
      if (!s.isFile()) return undefined;
      return { key, size: s.size, lastModified: s.mtime };
    } catch (err) {
      if (isCode(err, "ENOENT") || isCode(err, "ENOTDIR")) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    if (!(await this.head(key))) throw new StoreError("not_found", `no object at ${this.uriOf(key)}`);
    return createReadStream(path, range ? { start: range.start, end: range.end } : {});
  }

  localFile(key: string): string {
    return this.pathOf(key);
  }

  download(key: string, localPath: string): Promise<ObjectInfo> {
    return downloadObject(this, key, localPath);
  }

  async write(key: string, source: WriteSource): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    await replaceAtomically(path, source);
  }

  async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Cheap early answer for the common lost race; the link below is what decides.
    if (await exists(path)) return { written: false, reason: "exists" };
    const temp = tempPathFor(path);
    await writeTemp(temp, source);
    try {
      await link(temp, path);
      return { written: true };
    } catch (err) {
      if (isCode(err, "EEXIST")) return { written: false, reason: "exists" };
      throw err;
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const result: DeleteResult = { deleted: [], errors: [] };
    for (const key of keys) {
      try {
        await unlink(this.pathOf(key));
        result.deleted.push(key);
      } catch (err) {
        if (isCode(err, "ENOENT")) result.deleted.push(key);
        else
          result.errors.push({
            key,
            code: (err as NodeJS.ErrnoException).code ?? "error",
            message: (err as Error).message,
          });
      }
    }
    return result;
  }

  private pathOf(key: string): string {
    checkKey(key);
    const path = resolve(this.root, ...key.split("/"));
    const rel = relative(this.root, path);
    if (rel === "" || rel.startsWith("..") || resolve(this.root, rel) !== path)
      throw new StoreError("invalid_key", `key '${key}' leaves the store root ${this.uri}`);
    return path;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (isCode(err, "ENOENT")) return false;
    throw err;
  }
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}
