/**
 * The `layout_scoring` jobs of a succeeded run: one per workload the run stored, queued by one
 * INSERT ... SELECT that the analysis job's finish hook (`kind.ts`) puts in the batch that ends
 * the job. Finish hooks give statements only, so everything is made in SQL, as the scheduler makes
 * its jobs (`scheduler/fire.ts`):
 *
 * - Never lost: the insert commits with the job's end (guarded by `ended`). Never doubled: each job's
 *   dedupe key is `optimus-score:<run>:<table>`, and a key that exists is skipped.
 * - Payload (`LayoutScoringPayload`): the workload's table's `uri` and `format`, its filter sets,
 *   the run's window, the target file size (the effective policy's, else the table's), and
 *   `current_layout`: the `improve_layout` layout of the table's effective policy
 *   (`managed_tables.policy_id`, enabled policies only), else null (the files' own order).
 * - Routing as the kind derives it (`routingOf`; the tests compare): the uri's scheme, the table's
 *   location key, the table scope in the `layout_scoring` group, no endpoints.
 * - A catalog-linked table's job is held (`CATALOG_HOLD`): `scheduler/linked.ts` adds its catalog
 *   reference (decrypted credentials, not made in SQL) and the endpoints, and releases it at the
 *   next scheduler tick, as for scheduled jobs. Other jobs are offerable at once.
 * - A workload whose table was deleted, or whose catalog table is marked deleted, gets no job.
 */
import { DEFAULT_SCORING_SAMPLE_ROWS, LAYOUT_SCORING_KIND } from "@lakesmith/shared/optimus";
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { jobs } from "../db/schema.ts";
import { CATALOG_HOLD } from "../scheduler/fire.ts";

/** The least gain in skipped fraction a scoring recommends a layout for (the payload's `min_gain`). */
export const SCORING_MIN_GAIN = 0.1;
/** Attempts of a scoring job (its kind's `retry`). */
export const SCORING_ATTEMPTS = 2;

/** The dedupe key of a run's scoring job of a table. */
export const scoringDedupeKey = (runId: string, tableId: string) => `optimus-score:${runId}:${tableId}`;

/** A value of the effective policy of the table `t` (`managed_tables.policy_id`), by JSON path. */
const effectivePolicyValue = (path: string) => sql`(select json_extract(p.body, ${path}) from managed_tables m
       join policies p on p.id = m.policy_id
      where m.connection_id = t.catalog_connection_id and m.full_name = t.catalog_full_name)`;

/**
 * The layout the table `t` is kept in: its effective policy's `improve_layout` (a policy rewrite
 * enforces it), as JSON text; null otherwise. Not the recipe's cluster columns: a crunch sorts only
 * the files it compacts by them, so the table's files hold no such order until rewritten, and the
 * scoring's baseline is then the order the files hold.
 */
const currentLayout = effectivePolicyValue("$.actions.improve_layout.layout");

/** The file size a rewrite of `t` writes: its effective policy's, else the table's own. */
const targetFileSize = sql`coalesce(${effectivePolicyValue("$.target_file_size_mb")}, t.target_file_size_mb)`;

/** Queues the scoring jobs of the run `runId` (its stored workloads), if `ended` holds. */
export function queueScoringJobs(db: Db, runId: string, now: Date, ended: SQL) {
  const at = now.getTime();
  const payload = sql`json_object(
      'submission_id', w.submission_id, 'run_id', w.run_id, 'table_fqn', w.table_fqn, 'table_id', w.table_id,
      'uri', t.uri, 'format', t.format, 'current_layout', json(${currentLayout}),
      'filter_sets', json(w.filter_sets), 'sample_max_rows', ${DEFAULT_SCORING_SAMPLE_ROWS},
      'min_gain', ${SCORING_MIN_GAIN}, 'window_start', r.window_start, 'window_end', r.window_end,
      'target_file_size_mb', ${targetFileSize})`;
  return insertSelect(
    db,
    jobs,
    {
      id: sql`'job_' || lower(hex(randomblob(10)))`,
      kind: sql`${LAYOUT_SCORING_KIND}`,
      tableId: sql`t.id`,
      priority: sql`t.priority`,
      payload,
      requires: sql`json_array(lower(substr(t.uri, 1, instr(t.uri, '://') - 1)))`,
      locations: sql`json_array(t.location_key)`,
      endpoints: sql`'[]'`,
      exclusion: sql`${LAYOUT_SCORING_KIND}`,
      locks: sql`json_array('table:' || t.id || '/')`,
      refusals: sql`'[]'`,
      status: sql`'queued'`,
      attempt: sql`0`,
      maxAttempts: sql`${SCORING_ATTEMPTS}`,
      fence: sql`0`,
      leaseOwner: sql`null`,
      leaseExpiresAt: sql`null`,
      notBefore: sql`case when t.catalog_connection_id is null then ${at} else ${CATALOG_HOLD.getTime()} end`,
      dedupeKey: sql`'optimus-score:' || w.run_id || ':' || w.table_id`,
      trigger: sql`'optimus'`,
      scheduleId: sql`null`,
      progress: sql`null`,
      partFence: sql`null`,
      partSeq: sql`null`,
      result: sql`null`,
      error: sql`null`,
      createdBy: sql`null`,
      createdAt: sql`${at}`,
      updatedAt: sql`${at}`,
      startedAt: sql`null`,
      finishedAt: sql`null`,
    },
    sql`from optimus_workloads w join tables t on t.id = w.table_id join optimus_runs r on r.job_id = w.run_id
        where w.run_id = ${runId} and t.catalog_table_deleted_at is null and ${ended}`,
  ).onConflictDoNothing({ target: jobs.dedupeKey });
}
