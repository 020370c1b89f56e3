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
  sqlList,
  type TableColumn,
} from "../engine/index.ts";
import { sum } from "../numbers.ts";
import { JobError } from "../registry.ts";
import type { Phases } from "./metrics.ts";
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

/**
 * Refuses a bin whose files hold a column that `declared` lacks (compared case-blind, as Hive
 * does), for tables whose readers see the declared columns only (`readsDeclaredColumnsOnly`): the
 * rewrite writes the declared columns, so that column would silently leave the files.
 */
export async function refuseUndeclaredColumns(
  engine: Engine,
  bin: { partition: string; inputs: readonly string[] },
  declared: readonly string[],
): Promise<void> {
  const known = new Set(declared.map((name) => name.toLowerCase()));
  const present = await engine.query<{ column_name: string }>(
    `describe select * from read_parquet(${sqlList(bin.inputs)}, union_by_name = true)`,
  );
  const undeclared = present.map((c) => c.column_name).filter((name) => !known.has(name.toLowerCase()));
  if (undeclared.length > 0)
    throw new JobError(
      `partition '${bin.partition || "(table)"}': its files hold ${undeclared.length === 1 ? "a column" : "columns"} the metastore does not declare (${undeclared.join(", ")}); a rewrite writes the declared columns only and would drop ${undeclared.length === 1 ? "it" : "them"}, so nothing was rewritten. Declare ${undeclared.length === 1 ? "it" : "them"} (ALTER TABLE ... ADD COLUMNS) or take ${undeclared.length === 1 ? "it" : "them"} out of the files, then crunch again.`,
      { retryable: false },
    );
}
