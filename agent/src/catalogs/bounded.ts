/**
 * Work on a list of items with at most `limit` in flight: catalogs answer many small requests
 * (a table load, a Delta log read) much faster side by side than one after another, but an
 * unbounded fan-out would open a connection per table and hold every answer at once.
 *
 * - The first failure stops new work; the ones already running settle before it is thrown.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}
