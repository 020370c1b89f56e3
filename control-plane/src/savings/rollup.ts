/**
 * The daily savings rollup (`savings_daily`), written by finish hooks in the batch that ends a job,
 * so what a job saved is counted exactly when it is recorded as succeeded (D1 has no interactive
 * transactions; the batch is the transaction).
 *
 * - Counted: a succeeded crunch or optimize that committed (`committed_version` not null): bytes
 *   and files before and after, partitions crunched; a succeeded partition expiration that
 *   committed (not a dry run or validate): its partitions; a succeeded hard delete: the files its
 *   agent reported `deleted` (not `absent`, not `retained`), with the sizes their records hold.
 * - Where: rows of the UTC day the job finished: the job's table's, the all-tables row (`*`), and,
 *   when the table is linked to a synced catalog table then, its catalog's (`catalogKey`), so a
 *   catalog's figures are read from its own rows, not summed over its tables.
 * - Once: every statement is guarded by `ended` and by the job's absence from `savings_counted`;
 *   the last statement adds it there, so running the statements again adds nothing.
 * - Cost: four statements per job, each reading the job row (and its table's link) by key; no job
 *   JSON is read later.
 *   Migration 0021 backfilled the jobs that ended before it with the same rules.
 */
import { CrunchResultSchema } from "@lakesmith/shared/jobs";
import { HardDeleteResultSchema, PartitionExpirationResultSchema } from "@lakesmith/shared/maintenance";
import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { CatalogRef } from "../catalogs/ids.ts";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import {
  catalogTables,
  type Job,
  jobs,
  lakeTables,
  pendingDeletions,
  savingsCounted,
  savingsDaily,
} from "../db/schema.ts";
import type { FinishHook } from "../jobs/kinds.ts";

/** The `table_id` of the rows that sum every table. */
export const ALL_TABLES = "*";

/** The `table_id` of a catalog's rows: `@<connection_id>:<catalog>` (table ids never start with `@`). */
export const catalogKey = (ref: CatalogRef) => `@${ref.connectionId}:${ref.catalog}`;

type Counter = Exclude<keyof typeof savingsDaily.$inferSelect, "tableId" | "day">;
/** What one job adds, as SQL over its row `j`; a counter left out adds 0. */
type Figures = Partial<Record<Counter, SQL>>;

const COUNTERS = Object.entries(getTableColumns(savingsDaily)).filter(
  ([key]) => key !== "tableId" && key !== "day",
) as [Counter, (typeof savingsDaily)[Counter]][];

/** Adds the job's figures on a second count of the same (table, day). */
const ADD_EXCLUDED = Object.fromEntries(
  COUNTERS.map(([key, column]) => [key, sql.raw(`"${column.name}" + excluded."${column.name}"`)]),
);

/** The finish hook of `crunch` and `optimize`: a committed rewrite's bytes, files and partitions. */
export const countRewrite: FinishHook = ({ db }, job, end, ended) => {
  if (end.status !== "succeeded") return [];
  const parsed = CrunchResultSchema.safeParse(end.result);
  if (!parsed.success || parsed.data.committed_version === null) return [];
  const r = parsed.data;
  return rollup(db, job, ended, {
    rewrites: sql`1`,
    bytesBefore: sql`${r.bytes_before}`,
    bytesAfter: sql`${r.bytes_after}`,
    filesBefore: sql`${r.files_before}`,
    filesAfter: sql`${r.files_after}`,
    partitionsCrunched: sql`${r.partitions_crunched}`,
  });
};

/** The finish hook of `partition_expiration`: the partitions a committed run removed. */
export const countExpiredPartitions: FinishHook = ({ db }, job, end, ended) => {
  if (end.status !== "succeeded") return [];
  const parsed = PartitionExpirationResultSchema.safeParse(end.result);
  if (!parsed.success) return [];
  const r = parsed.data;
  if (r.dry_run || r.validate || r.committed_version === null) return [];
  return rollup(db, job, ended, { partitionsDeleted: sql`${r.partitions.length}` });
};

/** The finish hook of `hard_delete`: the files the agent deleted and their recorded sizes. */
export const countHardDeleted: FinishHook = ({ db }, job, end, ended) => {
  if (end.status !== "succeeded" || !HardDeleteResultSchema.safeParse(end.result).success) return [];
  const deleted = (what: SQL) => sql`(select ${what} from json_each(j.result, '$.files') f
    join ${pendingDeletions} p on p.id = json_extract(f.value, '$.deletion_id')
    where json_extract(f.value, '$.outcome') = 'deleted' and p.hard_delete_job_id = j.id)`;
  return rollup(db, job, ended, {
    filesDeleted: deleted(sql`count(*)`),
    bytesDeleted: deleted(sql`coalesce(sum(p.size_bytes), 0)`),
  });
};

/** Adds `figures` to the table's, the all-tables and the linked catalog's rows of the job's day, once per job. */
function rollup(db: Db, job: Job, ended: SQL, figures: Figures) {
  if (!job.tableId) return [];
  const guard = sql`j.id = ${job.id} and ${ended}
    and not exists (select 1 from ${savingsCounted} c where c.job_id = j.id)`;
  const once = sql`from ${jobs} j where ${guard}`;
  const linked = sql`from ${jobs} j join ${lakeTables} t on t.id = j.table_id
    join ${catalogTables} ct on ct.connection_id = t.catalog_connection_id and ct.full_name = t.catalog_full_name
    where ${guard}`;
  const add = (tableId: SQL, from = once) =>
    insertSelect(
      db,
      savingsDaily,
      {
        tableId,
        day: sql`strftime('%Y-%m-%d', j.finished_at / 1000, 'unixepoch')`,
        ...Object.fromEntries(COUNTERS.map(([key]) => [key, figures[key] ?? sql`0`])),
      } as Parameters<typeof insertSelect<typeof savingsDaily>>[2],
      from,
    ).onConflictDoUpdate({ target: [savingsDaily.tableId, savingsDaily.day], set: ADD_EXCLUDED });
  return [
    add(sql`j.table_id`),
    add(sql`${ALL_TABLES}`),
    // `catalogKey` in SQL: the catalog of the synced table the job's table is linked to now.
    add(sql`'@' || ct.connection_id || ':' || ct.catalog`, linked),
    insertSelect(db, savingsCounted, { jobId: sql`j.id` }, once).onConflictDoNothing(),
  ];
}
