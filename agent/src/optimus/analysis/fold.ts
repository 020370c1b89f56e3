/**
 * Every table's workload of one run (`TableWorkload`), with one bound on the filter sets held over
 * all tables together: a table's own bound (20,000) times up to 5,000 tables would not fit an
 * agent, so past `maxOpenTotal` (100,000 sets, of about 1.2 KB each) the tables holding the most
 * are cut to one common level (`waterLevel`) that brings the total to half the bound; tables below
 * the level keep every set, and every table keeps at least one. What is cut goes to the table's `other`, as in a table's own
 * cut, so each table's totals stay exact.
 */
import type { OptimusTableRef } from "@lakesmith/shared/optimus";
import { waterLevel } from "./bounded.ts";
import { type ScanShare, TableWorkload, type WorkloadLimits } from "./workload.ts";

/** The distinct filter sets a run holds over all its tables before it cuts the largest tables. */
export const DEFAULT_MAX_OPEN_TOTAL = 100_000;

export interface FoldLimits extends WorkloadLimits {
  maxOpenTotal?: number;
}

export class RunFold {
  private readonly byTable = new Map<OptimusTableRef, TableWorkload>();
  private open = 0;
  private readonly maxOpenTotal: number;

  constructor(private readonly limits: FoldLimits = {}) {
    this.maxOpenTotal = limits.maxOpenTotal ?? DEFAULT_MAX_OPEN_TOTAL;
  }

  /** Folds one query's scans of `table` in. */
  add(table: OptimusTableRef, query: { day?: string; example: string }, scans: readonly ScanShare[]): void {
    const workload = this.byTable.get(table) ?? new TableWorkload(table, this.limits);
    this.byTable.set(table, workload);
    const before = workload.openSets;
    workload.add(query, scans);
    this.open += workload.openSets - before;
    if (this.open > this.maxOpenTotal) this.shrink();
  }

  /** The filter sets held now, over all tables. */
  get openSets(): number {
    return this.open;
  }

  /** The tables' workloads, in fqn order. */
  workloads(): TableWorkload[] {
    return [...this.byTable.values()].sort((a, b) => (a.table.table_fqn < b.table.table_fqn ? -1 : 1));
  }

  private shrink(): void {
    const workloads = [...this.byTable.values()];
    const level = waterLevel(
      workloads.map((w) => w.openSets),
      Math.floor(this.maxOpenTotal / 2),
    );
    this.open = 0;
    for (const w of workloads) {
      if (w.openSets > level) w.shrinkTo(level);
      this.open += w.openSets;
    }
  }
}
