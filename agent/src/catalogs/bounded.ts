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

/**
 * At most `limit` calls of `run` at once, shared by every caller (walks of several schemas
 * side by side share one bound on their size reads); the others wait their turn, in order.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
