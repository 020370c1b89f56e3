/**
 * Keeps a map of volumes bounded: past its cap, the smaller half by bytes scanned (then queries,
 * then key) leaves the map at once, so the cost of a cut is spread over the half-cap insertions
 * before the next one.
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

/** When `map` holds more than `cap` entries, removes the smaller half and returns what it removed. */
export function cutSmallest<V extends OptimusVolume>(map: Map<string, V>, cap: number): V[] {
  if (map.size <= cap) return [];
  const smallest = [...map.entries()].sort(largestFirst).slice(Math.floor(cap / 2));
  for (const [key] of smallest) map.delete(key);
  return smallest.map(([, v]) => v);
}

/** Adds `queries` and `bytes` to `volume`. */
export function addVolume(volume: OptimusVolume, queries: number, bytes: number): void {
  volume.queries += queries;
  volume.bytes_scanned += bytes;
}
