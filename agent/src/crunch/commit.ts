/**
 * The crunch's one commit, through the table's format (`formats/`). When another writer removed
 * files the rewrite replaces (a `ConflictError`), the table is reloaded and the bins whose inputs
 * are all still live are kept and committed on top of the winner; the others are dropped and their
 * partitions reported as skipped. At most `MAX_ATTEMPTS` commits; nothing is ever committed twice,
 * because each attempt commits against the snapshot it just read. (A format's own commit retries a
 * lost race that does not conflict, such as a concurrent append.)
 *
 * The jobs of a fanned-out crunch (one per partition) commit to one table at once, each only its
 * own partition's files: Delta rebases a lost race on a commit that removed none of ours by itself;
 * a format that can't (Iceberg's metadata swap, a catalog's refusal) reports a conflict, and the
 * reload finds our inputs still live, so the bins are kept. `MAX_ATTEMPTS` leaves room for a
 * handful of sibling jobs committing in the same moments.
 */
import type { CrunchResult, CrunchSettings } from "@lakesmith/shared/jobs";
import { ConflictError, type Table } from "../formats/index.ts";
import { JobError } from "../registry.ts";
import type { BinOutput } from "./metrics.ts";
import { WRITTEN_BY_TAG } from "./plan.ts";
import { settingsTag } from "./settings.ts";

const MAX_ATTEMPTS = 8;

export interface CommitJob {
  table: Table;
  outputs: readonly BinOutput[];
  jobId: string;
  predicate: string;
  /** The result as it would stand after committing `kept` at `committed`. */
  resultOf(committed: number | null, kept: readonly BinOutput[]): CrunchResult;
  /** A fresh load of the table, after a conflict (`attempt` counts from 1). */
  reload(attempt: number): Promise<Table>;
  log: { warn(details: object, message: string): void };
}

export async function commitOutputs(job: CommitJob): Promise<CrunchResult> {
  let table = job.table;
  let kept = job.outputs;
  for (let attempt = 1; ; attempt++) {
    const provisional = job.resultOf(null, kept);
    try {
      const { version, superseded } = await table.commitRewrite({
        jobId: job.jobId,
        replaced: kept.flatMap((o) => o.removes),
        added: kept.flatMap((o) => o.adds),
        tags: tagsOf(provisional.settings),
        result: provisional,
        predicate: job.predicate,
      });
      return { ...provisional, committed_version: version, ...(superseded ? { superseded } : {}) };
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= MAX_ATTEMPTS) throw err;
      table = await job.reload(attempt);
      const live = new Set(table.files.map((f) => f.path));
      kept = kept.filter((o) => o.removes.every((f) => live.has(f.path)));
      job.log.warn(
        { err: err.message, bins_left: kept.length },
        "commit conflict; re-planned against the winner",
      );
      if (kept.length === 0) throw new JobError(`every bin conflicted with another writer: ${err.message}`);
    }
  }
}

function tagsOf(settings: CrunchSettings | null): Record<string, string> | null {
  return settings ? { [WRITTEN_BY_TAG]: settingsTag(settings) } : null;
}
