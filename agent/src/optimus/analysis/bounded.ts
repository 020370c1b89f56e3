/**
 * Keeps maps of volumes bounded. A map past its cap loses its smaller half by bytes scanned (then
 * queries, then key) at once, so the cost of a cut is spread over the half-cap insertions before
 * the next one. Across many maps, `waterLevel` finds the one size to cut the larger ones to, so
 * the small ones keep everything.
 */
import type { OptimusVolume } from "@lakesmith/shared/optimus";

/** Orders the largest volume first; ties by more queries, then by key. */
export function largestFirst(a: [string, OptimusVolume], b: [string, OptimusVolume]): number {
  return (
    b[1].bytes_scanned - a[1].bytes_scanned ||
    b[1].queries - a[1].queries ||
    (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
  );
}

/** Removes all but the `keep` largest entries of `map`; returns what it removed. */
export function keepLargest<V extends OptimusVolume>(map: Map<string, V>, keep: number): V[] {
  if (map.size <= keep) return [];
  const smallest = [...map.entries()].sort(largestFirst).slice(keep);
  for (const [key] of smallest) map.delete(key);
  return smallest.map(([, v]) => v);
}

/** When `map` holds more than `cap` entries, removes the smaller half and returns what it removed. */
export function cutSmallest<V extends OptimusVolume>(map: Map<string, V>, cap: number): V[] {
  return map.size > cap ? keepLargest(map, Math.floor(cap / 2)) : [];
}

/**
 * The largest level (at least 1) such that the sizes, each cut to it, sum to at most `budget`;
 * `Infinity` when they already do.
 *
 * @example waterLevel([2, 10, 30], 20) // 9: 2 + 9 + 9
 */
export function waterLevel(sizes: readonly number[], budget: number): number {
  const sorted = [...sizes].sort((a, b) => a - b);
  let used = 0;
  for (const [i, size] of sorted.entries()) {
    const rest = sorted.length - i;
    if (used + size * rest > budget) return Math.max(1, Math.floor((budget - used) / rest));
    used += size;
  }
  return Number.POSITIVE_INFINITY;
}

/** Adds `queries` and `bytes` to `volume`. */
export function addVolume(volume: OptimusVolume, queries: number, bytes: number): void {
  volume.queries += queries;
  volume.bytes_scanned += bytes;
}
