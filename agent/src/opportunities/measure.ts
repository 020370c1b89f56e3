/**
 * The sample's rewrite, as a crunch would do it, in the scan's scratch folder only:
 *
 * 1. Settings: the table's latest measured crunch settings where they still hold (`reuseEarlier`),
 *    else the crunch tuner (`tuneSettings`) on the sample, told the bytes the crunch would rewrite.
 * 2. Per partition of the sample: the crunch's own bin rewrite (`rewriteBin`, sorted in chunks
 *    where the settings sort) and its validation, so a figure never comes from a lossy write.
 * 3. Each file's row order is checked against the cluster columns (`ordering.ts`) while it is local.
 *
 * Nothing is uploaded; every file written is removed with its partition's folder.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import { Phases } from "../crunch/metrics.ts";
import { partitionPath } from "../crunch/partition-path.ts";
import { rewriteBin } from "../crunch/rewrite.ts";
import { type Measure, reuseEarlier } from "../crunch/settings.ts";
import { refuseUndeclaredColumns, validateBin } from "../crunch/validate.ts";
import { describeSettings, type Engine, tuneSettings } from "../engine/index.ts";
import type { Table, TableFile } from "../formats/index.ts";
import { sum } from "../numbers.ts";
import { localPaths, type ObjectStore } from "../store/index.ts";
import { isSortedBy, orderedByTag } from "./ordering.ts";

export interface SampleJob {
  engine: Engine;
  store: ObjectStore;
  table: Table;
  sample: readonly TableFile[];
  measure: Measure;
  /** Bytes the crunch would rewrite with the settings (what the tuner weighs its trials against). */
  crunchBytes: number;
  targetBytes: number;
  /** The columns whose order is checked in each sampled file. */
  orderColumns: readonly string[];
  scratchDir: string;
  signal: AbortSignal;
}

export interface SampleRewrite {
  settings: CrunchSettings | null;
  rows: number;
  bytesAfter: number;
  filesAfter: number;
  filesSorted: number;
}

export async function rewriteSample(job: SampleJob): Promise<SampleRewrite> {
  const { engine, table } = job;
  const byPartition = new Map<string, TableFile[]>();
  for (const f of job.sample) {
    const key = partitionPath(f.partitionValues, table.partitionColumns);
    byPartition.set(key, [...(byPartition.get(key) ?? []), f]);
  }
  const phases = new Phases();
  const done: SampleRewrite = { settings: null, rows: 0, bytesAfter: 0, filesAfter: 0, filesSorted: 0 };
  for (const [index, [partition, bin]] of [...byPartition.entries()].entries()) {
    job.signal.throwIfAborted();
    const binDir = join(job.scratchDir, `sample-${index}`);
    await mkdir(binDir, { recursive: true });
    try {
      const inputs = await localPaths(
        job.store,
        bin.map((f) => f.key),
        join(binDir, "in"),
        job.signal,
      );
      for (const [i, input] of inputs.entries())
        if (
          orderedByTag(bin[i]?.tags, job.orderColumns) ||
          (await isSortedBy(engine, input, job.orderColumns))
        )
          done.filesSorted++;
      const columns = table.columnsFor(bin[0]?.partitionValues ?? {});
      if (table.readsDeclaredColumnsOnly)
        await refuseUndeclaredColumns(engine, { partition, inputs }, [
          ...columns.map((c) => c.name),
          ...table.partitionColumns,
        ]);
      done.settings ??=
        (await reuseEarlier(engine, table, bin, job.measure)) ??
        (await tuneSettings(engine, {
          ...job.measure,
          columns,
          inputs,
          scratchDir: join(binDir, "tune"),
          crunchBytes: job.crunchBytes,
        }));
      const rewritten = await rewriteBin(engine, phases, {
        store: job.store,
        bin,
        inputs,
        columns,
        settings: done.settings,
        fieldIds: table.parquetFieldIds,
        targetBytes: job.targetBytes,
        outputRatio: 0.5,
        binDir,
      });
      await validateBin(engine, phases, { partition, inputs, columns }, rewritten);
      done.rows += rewritten.before.rows;
      done.bytesAfter += sum(rewritten.files.map((f) => f.bytes));
      done.filesAfter += rewritten.files.length;
    } finally {
      await rm(binDir, { recursive: true, force: true });
    }
  }
  return done;
}

/** How the sample was measured, in words. */
export function methodOf(sample: readonly TableFile[], candidates: number, rewrite: SampleRewrite): string {
  if (candidates === 0) return "nothing sampled: a crunch would rewrite no file of this snapshot";
  if (sample.length === 0)
    return "nothing sampled: every file a crunch would rewrite is larger than the sample bound";
  const settings = rewrite.settings;
  const how =
    settings?.reused_from_version !== undefined
      ? `the settings measured by the crunch committed at version ${settings.reused_from_version}`
      : "the crunch settings tuner";
  return (
    `rewrite of ${sample.length} sampled file${sample.length === 1 ? "" : "s"} / ${sum(sample.map((f) => f.size))} bytes ` +
    `with ${how} (${settings ? describeSettings(settings) : "no settings"}), validated, never uploaded`
  );
}
