/**
 * Bounded parallelism for store requests that have no batch form (single-key deletes on `gs://`
 * and `azure://`, block uploads on `azure://`).
 */
import { reportFailure } from "./keys.ts";
import type { DeleteResult } from "./types.ts";

/**
 * Calls `fn` for each item, at most `limit` calls in flight, started in the items' order. The
 * first error, of a call or of the items' iterator (a write's source), stops new calls and is
 * thrown once the ones in flight have settled.
 *
 * @example await forEachLimit(parts, 4, (part, i) => stageBlock(i, part));
 */
export async function forEachLimit<T>(
  items: Iterable<T> | AsyncIterable<T>,
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  let index = 0;
  try {
    for await (const item of items) {
      if (failure) break;
      const call = fn(item, index++).then(
        () => {
          running.delete(call);
        },
        (err: unknown) => {
          running.delete(call);
          failure ??= { err };
        },
      );
      running.add(call);
      if (running.size >= limit) await Promise.race(running);
    }
  } finally {
    await Promise.all(running);
  }
  if (failure) throw failure.err;
}

/**
 * A batch delete for stores without a batch request: one `deleteOne` per key, `limit` at a time,
 * each answering the key's failure or null when the key is gone; reported in the keys' order.
 */
export async function deleteEach(
  keys: readonly string[],
  result: DeleteResult,
  limit: number,
  deleteOne: (key: string) => Promise<Error | null>,
): Promise<void> {
  const outcomes: (Error | null)[] = [];
  await forEachLimit(keys, limit, async (key, i) => {
    outcomes[i] = await deleteOne(key);
  });
  for (const [i, key] of keys.entries()) {
    const failure = outcomes[i];
    if (failure) reportFailure(result, [key], failure);
    else result.deleted.push(key);
  }
}
