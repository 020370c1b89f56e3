/**
 * s3rver for tests: a real S3 HTTP API (SigV4, XML, multipart, DeleteObjects) on loopback, backed
 * by a temporary folder, with the bucket `lake`. It accepts `If-None-Match` and ignores it on PUT;
 * `conditional-s3-server.ts` stands in where enforcement is what a test shows.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import S3rver from "s3rver";
import type { ObjectStore, S3StoreOptions } from "../../src/store/index.ts";

/** s3rver's fixed credentials. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface LocalS3 {
  endpoint: string;
  /** Store options that reach it: the endpoint, path-style addressing, its credentials. */
  options: S3StoreOptions;
  /** Stops the server and removes its folder. */
  close(): Promise<void>;
}

export async function startS3rver(): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: "lake" }],
  });
  const endpoint = `http://127.0.0.1:${(await server.run()).port}`;
  return {
    endpoint,
    options: { endpoint, forcePathStyle: true, region: "us-east-1", credentials: S3RVER_CREDENTIALS },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Writes every file under the local `folder` to `store`, under its path relative to the folder. */
export async function uploadFolder(folder: string, store: ObjectStore): Promise<void> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((e) => e.isFile())) {
    const file = join(entry.parentPath, entry.name);
    await store.write(relative(folder, file), { file });
  }
}
