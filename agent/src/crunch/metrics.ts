/**
 * What a crunch reports (`CrunchResult`): per-partition outcomes from the plan and the bins that
 * were rewritten, totals and DRR over the files replaced, the settings and notes, and the time
 * spent per phase. Pure: it counts, it touches nothing.
 */

import type {
  CrunchKind,
  CrunchPartition,
  CrunchPayload,
  CrunchResult,
  CrunchSettings,
} from "@lakesmith/shared/jobs";
import type { NewFile, TableFile } from "../formats/index.ts";
import { sum } from "../numbers.ts";
import type { PartitionPlan } from "./plan.ts";

/** One rewritten, uploaded bin: the files it replaces and the files that replace them. */
export interface BinOutput {
  partition: string;
  removes: TableFile[];
  adds: NewFile[];
  rows: number;
}

/** The pass a job runs, and why when it is not the one asked for. */
export interface Pass {
  kind: CrunchKind;
  reason?: string;
}

export interface Summary {
  pass: Pass;
  versionBefore: number;
  plan: readonly PartitionPlan<TableFile>[];
  outputs: readonly BinOutput[];
  settings: CrunchSettings | null;
  committed: number | null;
  notes: readonly string[];
  durationMs: number;
  phases: Phases;
}

export function summarize(input: Summary): CrunchResult {
  const byPartition = new Map<string, BinOutput[]>();
  for (const o of input.outputs) byPartition.set(o.partition, [...(byPartition.get(o.partition) ?? []), o]);
  const partitions: CrunchPartition[] = input.plan.map((p) => {
    const outs = byPartition.get(p.partition) ?? [];
    const bytesBefore = sum(p.files.map((f) => f.size));
    if (outs.length === 0)
      return {
        partition: p.partition,
        status: "skipped",
        reason: p.skipReason ?? "another writer changed its files during the crunch",
        files_before: p.files.length,
        files_after: p.files.length,
        bytes_before: bytesBefore,
        bytes_after: bytesBefore,
        rows: sum(p.files.map((f) => f.rows ?? 0)),
      };
    const removed = outs.flatMap((o) => o.removes);
    const added = outs.flatMap((o) => o.adds);
    return {
      partition: p.partition,
      status: "crunched",
      files_before: p.files.length,
      files_after: p.files.length - removed.length + added.length,
      bytes_before: bytesBefore,
      bytes_after: bytesBefore - sum(removed.map((f) => f.size)) + sum(added.map((a) => a.size)),
      rows: sum(outs.map((o) => o.rows)),
    };
  });
  const removed = input.outputs.flatMap((o) => o.removes);
  const added = input.outputs.flatMap((o) => o.adds);
  const bytesBefore = sum(removed.map((f) => f.size));
  const bytesAfter = sum(added.map((a) => a.size));
  return {
    job_type: input.pass.kind,
    ...(input.pass.reason ? { job_type_reason: input.pass.reason } : {}),
    table_version_before: input.versionBefore,
    committed_version: input.committed,
    files_before: removed.length,
    files_after: added.length,
    bytes_before: bytesBefore,
    bytes_after: bytesAfter,
    drr: bytesBefore > 0 ? Math.round(10_000 * (1 - bytesAfter / bytesBefore)) / 100 : 0,
    rows_in: sum(input.outputs.map((o) => o.rows)),
    rows_out: sum(added.map((a) => a.rows)),
    partitions,
    partitions_crunched: partitions.filter((p) => p.status === "crunched").length,
    partitions_skipped: partitions.filter((p) => p.status === "skipped").length,
    settings: input.settings,
    ...(input.notes.length > 0 ? { notes: [...input.notes] } : {}),
    duration_ms: input.durationMs,
    phases_ms: input.phases.toJSON(),
  };
}

/**
 * What the job's date range did, where a reader could not tell from the figures: it selected no file
 * (and which range, on which column), or the table has no date column to apply it to.
 */
export function rangeNotes(
  payload: CrunchPayload,
  dateColumn: string | null,
  selected: number,
  files: number,
): string[] {
  const range = payload.date_range;
  if (!range) return [];
  const span = `${range.start} to ${range.end}`;
  if (!dateColumn)
    return [
      `the table has no date column (the recipe names none), so the range ${span} could not select files: every file was considered`,
    ];
  if (selected > 0) return [];
  return [
    `no file fell in the range ${span} (inclusive) of column ${dateColumn}: nothing to crunch among the table's ${files} files`,
  ];
}

/**
 * Milliseconds spent per phase, summed over bins. Uploads run beside the next bin's rewrite, so the
 * phases can add up to more than the job's duration.
 */
export class Phases {
  private readonly ms: Record<string, number> = {};

  async time<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      this.ms[phase] = (this.ms[phase] ?? 0) + Math.round(performance.now() - t0);
    }
  }

  toJSON(): Record<string, number> {
    return { ...this.ms };
  }
}
