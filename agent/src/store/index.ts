/**
 * The agent's object stores: one interface (`ObjectStore`), one implementation per URI scheme,
 * chosen here from the URI only.
 *
 * @example const store = storeFor("s3://lake/events/", { s3: { region: "eu-west-1" } });
 * for await (const o of store.list("_delta_log/")) console.log(o.key, o.size);
 */
import { parseLocation } from "../allow.ts";
import { FileStore } from "./file.ts";
import { S3Store, type S3StoreOptions } from "./s3.ts";
import type { ObjectStore } from "./types.ts";

export { readAll } from "./body.ts";
export { FileStore } from "./file.ts";
export { flushFiles, localPaths } from "./local.ts";
export { MIN_PART_SIZE, S3Store, type S3StoreOptions } from "./s3.ts";
export * from "./types.ts";

export interface StoreOptions {
  s3?: S3StoreOptions;
}

/**
 * The store rooted at `uri`: `file:///abs/folder/` (or an absolute path) or `s3://bucket/prefix/`.
 * Throws `LocationError` for a URI the agent can't read with certainty (see `allow.ts`).
 */
export function storeFor(uri: string, options: StoreOptions = {}): ObjectStore {
  const location = parseLocation(uri);
  const path = location.segments.join("/");
  if (location.scheme === "file") return new FileStore(`/${path}`);
  return new S3Store(location.root, path === "" ? "" : `${path}/`, options.s3);
}
