/**
 * One table's workload over the window, folded from its scans into filter sets (`OptimusFilterSet`):
 * scans with the same canonical conjunction (`filter-set.ts`) fold into one set, with their volume in
 * total and per UTC day, the columns their filters referenced, and up to 3 example queries.
 *
 * - Counting: a query counts once for the table and once for each distinct filter set its scans of
 *   the table fall in; its bytes are the sum of those scans' shares (`run.ts` splits a query's bytes).
 *   A query without a start time is in the totals but in no day.
 * - Memory: at most `maxOpen` distinct sets are held (20,000 by default; the run also bounds all
 *   tables together, `fold.ts`). Past that, the smaller
 *   half by bytes scanned (then queries; `bounded.ts`) is folded into `other`; a set seen again
 *   later starts afresh, its earlier volume staying in `other`. So `other` is exact in total, and a
 *   kept set may undercount only if it was once among the smaller half.
 * - The part keeps the largest `OPTIMUS_MAX_FILTER_SETS` (500) sets by bytes scanned (ties: more
 *   queries, then the canonical key) that fit in `PART_BUDGET_BYTES` of JSON (a part's protocol
 *   frame stays under 1 MiB; long windows and long `IN` lists reach it first); the rest are added
 *   to `other`.
 */
import {
  OPTIMUS_MAX_FILTER_SETS,
  type OptimusFilterSet,
  type OptimusTableRef,
  type OptimusVolume,
  type OptimusWorkloadPart,
} from "@lakesmith/shared/optimus";
import type { LoggedScan } from "../query.ts";
import { addVolume, cutSmallest, keepLargest, largestFirst } from "./bounded.ts";
import { canonicalFilters } from "./filter-set.ts";

/** The distinct filter sets one table's fold holds before it folds the smaller half into `other`. */
export const DEFAULT_MAX_OPEN_FILTER_SETS = 20_000;
const MAX_EXAMPLES = 3;
const MAX_EXAMPLE_CHARS = 300;
const MAX_COLUMNS = 256;
/** The JSON a part's filter sets may take: under the protocol's 1 MiB frame, with room for the envelope. */
export const PART_BUDGET_BYTES = 960 * 1024;

/** One query's scans of the table, each with its share of the query's bytes. */
export interface ScanShare {
  scan: LoggedScan;
  bytes: number;
}

/** A filter set while it is being folded: its columns as a set. */
type OpenSet = Omit<OptimusFilterSet, "columns"> & { columns: Set<string> };

export interface WorkloadLimits {
  maxOpen?: number;
  maxKept?: number;
}

export class TableWorkload {
  readonly volume: OptimusVolume = { queries: 0, bytes_scanned: 0 };
  private readonly other: OptimusVolume = { queries: 0, bytes_scanned: 0 };
  private readonly open = new Map<string, OpenSet>();
  private readonly maxOpen: number;
  private readonly maxKept: number;

  constructor(
    readonly table: OptimusTableRef,
    limits: WorkloadLimits = {},
  ) {
    this.maxOpen = limits.maxOpen ?? DEFAULT_MAX_OPEN_FILTER_SETS;
    this.maxKept = Math.min(limits.maxKept ?? OPTIMUS_MAX_FILTER_SETS, OPTIMUS_MAX_FILTER_SETS);
  }

  /** Folds one query's scans of this table in. */
  add(query: { day?: string; example: string }, scans: readonly ScanShare[]): void {
    addVolume(this.volume, 1, sum(scans));
    const groups = new Map<string, { predicates: OptimusFilterSet["predicates"]; scans: ScanShare[] }>();
    for (const share of scans) {
      const { key, predicates } = canonicalFilters(share.scan.predicates);
      const group = groups.get(key);
      if (group) group.scans.push(share);
      else groups.set(key, { predicates, scans: [share] });
    }
    for (const [key, group] of groups) {
      const set = this.openSet(key, group.predicates);
      const bytes = sum(group.scans);
      addVolume(set, 1, bytes);
      if (query.day !== undefined) {
        const day = set.days[query.day] ?? { queries: 0, bytes_scanned: 0 };
        set.days[query.day] = day;
        addVolume(day, 1, bytes);
      }
      for (const s of group.scans) for (const c of s.scan.filterColumns) set.columns.add(c);
      const example = query.example.slice(0, MAX_EXAMPLE_CHARS);
      if (set.examples.length < MAX_EXAMPLES && !set.examples.includes(example)) set.examples.push(example);
    }
    for (const set of cutSmallest(this.open, this.maxOpen))
      addVolume(this.other, set.queries, set.bytes_scanned);
  }

  /** The distinct filter sets held now. */
  get openSets(): number {
    return this.open.size;
  }

  /** Folds all but the `keep` largest filter sets into `other` (the run's bound over all tables). */
  shrinkTo(keep: number): void {
    for (const set of keepLargest(this.open, keep)) addVolume(this.other, set.queries, set.bytes_scanned);
  }

  /** The table's workload part: the largest filter sets, the rest in `other`. */
  part(): OptimusWorkloadPart {
    const other = { ...this.other };
    const kept: OptimusFilterSet[] = [];
    let budget = PART_BUDGET_BYTES;
    for (const [, open] of [...this.open.entries()].sort(largestFirst)) {
      const set = { ...open, columns: [...open.columns].sort().slice(0, MAX_COLUMNS) };
      const size =
        kept.length < this.maxKept ? Buffer.byteLength(JSON.stringify(set)) + 1 : Number.POSITIVE_INFINITY;
      if (size <= budget) {
        kept.push(set);
        budget -= size;
      } else addVolume(other, set.queries, set.bytes_scanned);
    }
    return {
      type: "table_workload",
      table_fqn: this.table.table_fqn,
      table_id: this.table.table_id,
      ...this.volume,
      filter_sets: kept,
      other,
    };
  }

  private openSet(key: string, predicates: OptimusFilterSet["predicates"]): OpenSet {
    let set = this.open.get(key);
    if (!set) {
      set = { predicates, columns: new Set(), queries: 0, bytes_scanned: 0, days: {}, examples: [] };
      this.open.set(key, set);
    }
    return set;
  }
}

const sum = (scans: readonly ScanShare[]): number => scans.reduce((n, s) => n + s.bytes, 0);
