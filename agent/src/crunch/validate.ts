/**
 * A rewritten bin is proved before anything of it is uploaded or committed: the same rows (count
 * and an order-insensitive checksum of every column), the table's schema in every written file,
 * and row counts stated by the writer (what the commit will record) that add up to the rows read
 * back. A mismatch fails the job for good, naming the partition and, after two more scans, the
 * columns that differ; nothing is committed.
 */
import {
  checkSchema,
  compareChecksums,
  type Engine,
  explainMismatch,
  type TableColumn,
} from "../engine/index.ts";
import { JobError } from "../registry.ts";
import { type Phases, sum } from "./metrics.ts";
import type { RewrittenBin } from "./rewrite.ts";

export async function validateBin(
  engine: Engine,
  phases: Phases,
  bin: { partition: string; inputs: readonly string[]; columns: readonly TableColumn[] },
  written: RewrittenBin,
): Promise<void> {
  const outputs = written.files.map((f) => f.path);
  const problems = await phases.time("validate", async () => {
    const found = [
      ...compareChecksums(written.before, written.after),
      ...(await checkSchema(engine, outputs, bin.columns)),
    ];
    const stated = sum(written.files.map((f) => f.rows));
    if (stated !== written.after.rows)
      found.push(`the written files' statistics state ${stated} rows, the files hold ${written.after.rows}`);
    if (found.length > 0) found.push(...(await explainMismatch(engine, bin.inputs, outputs, bin.columns)));
    return found;
  });
  if (problems.length > 0)
    throw new JobError(
      `validation failed for partition '${bin.partition || "(table)"}', nothing committed: ${[...new Set(problems)].join("; ")}`,
      { retryable: false },
    );
}
