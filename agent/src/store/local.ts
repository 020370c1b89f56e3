import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { copyFile, mkdir, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { localFileOf, sourceStream } from "./body.ts";
import { type ObjectInfo, type ObjectStore, StoreError, type WriteSource } from "./types.ts";

/** Marks temporary files so `file://` listings can skip writes still in progress. */
export const TEMP_MARK = ".lakesmith-tmp-";

/**
 * A fresh temporary path in the same folder as `path`: same folder means same file system, so the
 * final `rename` or `link` is atomic.
 */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}${TEMP_MARK}${randomBytes(6).toString("hex")}`);
}

/**
 * Writes a stream to a new file (`wx`: never an existing one) and syncs it, so that once it is
 * renamed or linked into place its content survives a crash. Removes the file if anything fails.
 */
export async function writeSynced(path: string, stream: Readable): Promise<number> {
  const handle = await open(path, "wx");
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      const data = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Uint8Array);
      let offset = 0;
      while (offset < data.byteLength) {
        const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset);
        offset += bytesWritten;
      }
      bytes += data.byteLength;
    }
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw err;
  }
  await handle.close();
  return bytes;
}

/**
 * Writes `source` to the new file `temp`, synced, ready to be renamed or linked into place. A local
 * file is not streamed through JavaScript: one given up (`move`) is renamed to `temp` where it is on
 * the same file system, any other is copied by the kernel (`copyFile`). Removes `temp` if anything fails.
 */
export async function writeTemp(temp: string, source: WriteSource): Promise<void> {
  const local = localFileOf(source);
  if (!local) {
    await writeSynced(temp, sourceStream(source));
    return;
  }
  try {
    if (!(local.move && (await movedTo(local.file, temp))))
      await copyFile(local.file, temp, constants.COPYFILE_EXCL);
    await syncFile(temp);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/** Renames `from` to `to`; false where they are on different file systems (the caller copies). */
async function movedTo(from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EXDEV") return false;
    throw err;
  }
}

/** Flushes local files' content to the disk (before they are moved into a store, say). */
export async function flushFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map(syncFile));
}

/** Flushes a file's content to the disk. */
async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `source` to `path` through a temporary file and a rename: the file appears only complete. */
export async function replaceAtomically(path: string, source: WriteSource): Promise<void> {
  const temp = tempPathFor(path);
  await writeTemp(temp, source);
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/**
 * Copies an object to a local file (atomically: the file appears whole or not at all), creating
 * the file's folder if needed.
 */
export async function downloadObject(
  store: Pick<ObjectStore, "head" | "read" | "uriOf">,
  key: string,
  localPath: string,
): Promise<ObjectInfo> {
  const info = await store.head(key);
  if (!info) throw new StoreError("not_found", `no object at ${store.uriOf(key)}`);
  await mkdir(dirname(resolve(localPath)), { recursive: true });
  await replaceAtomically(resolve(localPath), await store.read(key));
  return info;
}

/**
 * Local paths DuckDB can read for `keys`: a local store's own files in place, others downloaded
 * into `dir` (as `0.parquet`, `1.parquet`, ...). Stops between files once `signal` is aborted.
 */
export async function localPaths(
  store: Pick<ObjectStore, "localFile" | "download">,
  keys: readonly string[],
  dir: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const paths: string[] = [];
  for (const [i, key] of keys.entries()) {
    signal?.throwIfAborted();
    const inPlace = store.localFile?.(key);
    if (inPlace) paths.push(inPlace);
    else {
      const local = join(dir, `${i}.parquet`);
      await store.download(key, local);
      paths.push(local);
    }
  }
  return paths;
}
