/**
 * The agent's object stores: one interface (`ObjectStore`), one implementation per URI scheme,
 * chosen here from the URI only: `file://`, `s3://`, `gs://` (GCS's XML API on the S3 client) and
 * `azure://` (also spelled `abfs[s]://container@account.dfs.core.windows.net/`).
 *
 * @example const store = storeFor("s3://lake/events/", { s3: { region: "eu-west-1" } });
 * for await (const o of store.list("_delta_log/")) console.log(o.key, o.size);
 */
import { parseLocation } from "../allow.ts";
import { AzureStore, type AzureStoreOptions } from "./azure.ts";
import { FileStore } from "./file.ts";
import { GcsStore, type GcsStoreOptions } from "./gcs.ts";
import { S3Store, type S3StoreOptions } from "./s3.ts";
import type { ObjectStore } from "./types.ts";

export { AzureStore, type AzureStoreOptions } from "./azure.ts";
export { readAll } from "./body.ts";
export { FileStore } from "./file.ts";
export { GcsStore, type GcsStoreOptions } from "./gcs.ts";
export { flushFiles, localPaths } from "./local.ts";
export { MIN_PART_SIZE, S3Store, type S3StoreOptions } from "./s3.ts";
export * from "./types.ts";

export interface StoreOptions {
  s3?: S3StoreOptions;
  gcs?: GcsStoreOptions;
  azure?: AzureStoreOptions;
}

/**
 * The store rooted at `uri`: `file:///abs/folder/` (or an absolute path), `s3://bucket/prefix/`,
 * `gs://bucket/prefix/` or `azure://account/container/prefix/`. Throws `LocationError` for a URI
 * the agent can't read with certainty (see `allow.ts`), `StoreError("unsupported")` for a store
 * it has no credentials for.
 */
export function storeFor(uri: string, options: StoreOptions = {}): ObjectStore {
  const location = parseLocation(uri);
  const path = location.segments.join("/");
  const prefix = path === "" ? "" : `${path}/`;
  switch (location.scheme) {
    case "file":
      return new FileStore(`/${path}`);
    case "gs":
      return new GcsStore(location.root, prefix, options.gcs);
    case "azure": {
      const [account, container] = location.root.split("/") as [string, string];
      const written = uri.slice(0, Math.max(0, uri.indexOf("://"))).toLowerCase();
      const spelling = written === "abfs" || written === "abfss" ? written : "azure";
      return new AzureStore(account, container, prefix, { ...options.azure, spelling });
    }
    default:
      return new S3Store(location.root, prefix, options.s3);
  }
}
