/**
 * The agent's object stores: one interface (`ObjectStore`), one implementation per URI scheme,
 * chosen here from the URI only.
 *
 * @example const store = storeFor("file:///data/lake/events/");
 * for await (const o of store.list("_delta_log/")) console.log(o.key, o.size);
 */
import { parseLocation } from "../allow.ts";
import { FileStore } from "./file.ts";
import type { ObjectStore } from "./types.ts";

export { readAll } from "./body.ts";
export { FileStore } from "./file.ts";
export * from "./types.ts";

/** The store rooted at `uri` (`file:///abs/folder/` or an absolute path, `s3://bucket/prefix/`). */
export function storeFor(uri: string): ObjectStore {
  const location = parseLocation(uri);
  if (location.scheme === "file") return new FileStore(`/${location.segments.join("/")}`);
  throw new Error(`no store for ${uri}`);
}
