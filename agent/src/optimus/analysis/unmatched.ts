/**
 * The scans no table of the run matched, by what the engine named them (the table's name, else its
 * first location), with their volume: the result lists the 20 most scanned so an operator sees
 * which tables Lakesmith doesn't know. At most 10,000 names are held; past that the smaller half
 * is dropped (the list is a pointer, not an account).
 */
import type { OptimusVolume } from "@lakesmith/shared/optimus";
import { addVolume, cutSmallest, largestFirst } from "./bounded.ts";
import type { ScanShare } from "./workload.ts";

const MAX_HELD = 10_000;
const MAX_LISTED = 20;

export class UnmatchedScans {
  private readonly byName = new Map<string, OptimusVolume>();

  /** Counts one query's unmatched scans (a name once per query), each with its share of bytes. */
  add(scans: readonly ScanShare[]): void {
    const seen = new Set<string>();
    for (const { scan, bytes } of scans) {
      const name = scan.table ?? scan.locations[0] ?? "(a scan without table or location)";
      const volume = this.byName.get(name) ?? { queries: 0, bytes_scanned: 0 };
      this.byName.set(name, volume);
      addVolume(volume, seen.has(name) ? 0 : 1, bytes);
      seen.add(name);
    }
    cutSmallest(this.byName, MAX_HELD);
  }

  /** The most scanned unmatched names, largest first. */
  top(): (OptimusVolume & { name: string })[] {
    return [...this.byName.entries()]
      .sort(largestFirst)
      .slice(0, MAX_LISTED)
      .map(([name, v]) => ({ name, ...v }));
  }
}
