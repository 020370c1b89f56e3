/**
 * Settles a write-if-absent whose answer may have been lost. A conditional PUT that landed but
 * whose answer never came back is retried, and the retry meets our own object as "exists"; so an
 * `exists` after more than one attempt is checked by reading the object back: it is ours exactly
 * when its bytes are the ones we sent. Shared by the remote stores (`s3.ts`, `azure.ts`).
 */
import { readAll } from "./body.ts";
import { type ObjectStore, StoreError } from "./types.ts";

/** Whether the object at `key` holds exactly `body` (false when there is none). */
export async function holdsExactly(store: ObjectStore, key: string, body: Buffer): Promise<boolean> {
  const info = await store.head(key);
  if (info?.size !== body.byteLength) return false;
  try {
    return (await readAll(await store.read(key))).equals(body);
  } catch (err) {
    if (err instanceof StoreError && err.code === "not_found") return false;
    throw err;
  }
}
