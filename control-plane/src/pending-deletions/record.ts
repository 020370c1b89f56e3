/**
 * Turns the files a succeeded vacuum, partition expiration, Hive crunch or prefix_remove_inputs reported into PENDING_DELETE records,
 * in the same batch as the job's end (finish hooks), so a job never ends without its records or
 * leaves records behind a job that did not end. Dry runs and validates record nothing; scheduled
 * runs (whose payload carries no `dry_run`) are real runs.
 *
 * Set-based: one INSERT ... SELECT reads the files out of the result that the same batch has just
 * stored on the job row (`json_each(jobs.result, '$.files')`). No file travels as a parameter and
 * no statement is built per file, so 100,000 files are one statement of the batch (about 2 s on
 * an embedded libSQL file with the table's indexes). It needs no chunks: chunks would keep bound
 * JSON under D1's 2 MB per value, and here nothing is bound. A file whose path is pending already (the
 * partial unique index on live records) is skipped (ON CONFLICT DO NOTHING), and a vacuum never
 * records a path the table's RECOVERED vacuum records keep, even when its payload carried no
 * `keep` list (scheduled runs). A second run of the hook for the same job inserts nothing.
 *
 * After recording, the stored result of a real run keeps its counts only: `files` becomes `[]`
 * and `pending_deletions_recorded` counts the records made (the records are the durable list;
 * GET /api/v1/pending-deletions?source_job_id=...). Dry runs keep their files: they are the answer.
 *
 * Scale: the hook adds no limit of its own; the job's result is the bound. On libSQL it is the
 * size of the agent's result message. On D1 a row and a bound value are at most 2 MB each, and the
 * job's result is written as one value, so a run reports at most about 2 MB of files there: some
 * 14,000 vacuum files, or a few thousand expired files with their statistics.
 */
import { CrunchResultSchema } from "@lakesmith/shared/jobs";
import {
  type PartitionExpirationResult,
  PartitionExpirationResultSchema,
  type VacuumResult,
  VacuumResultSchema,
} from "@lakesmith/shared/maintenance";
import { RemoveInputsResultSchema } from "@lakesmith/shared/prefix-conversion";
import { and, eq, type SQL, sql } from "drizzle-orm";
import { settingSql } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { type Job, jobs, pendingDeletions } from "../db/schema.ts";
import type { FinishHook, JobEnd } from "../jobs/kinds.ts";

type Statements = ReturnType<FinishHook>;

const HOUR_MS = 3_600_000;
/** A record id made by SQLite: `del_` and 20 hex digits, the width of `newId("del")` and within its alphabet. */
const recordId = sql`'del_' || lower(hex(randomblob(10)))`;
const grace = () => sql`(${settingSql("pending_deletion_grace_hours")} * ${HOUR_MS})`;

/** The finish hook of `vacuum` jobs: their files become PENDING_DELETE records. */
export const recordVacuumFiles: FinishHook = ({ db }, job, end, ended) =>
  new DeletionRecorder(db).vacuum(job, end, ended);

/**
 * The finish hook of `crunch` and `optimize` jobs: the files of the folders a Hive crunch moved
 * partitions away from (its result's `superseded`) become PENDING_DELETE records, whose `file`
 * says where the partition was and where it went (what a recover moves back). Delta and Iceberg
 * crunches supersede no folder: their replaced files are vacuum's.
 */
export const recordSupersededFiles: FinishHook = ({ db }, job, end, ended) =>
  new DeletionRecorder(db).crunch(job, end, ended);

/**
 * The finish hook of `prefix_remove_inputs` jobs: the converted inputs they proposed become
 * PENDING_DELETE records of the prefix (`prefix_id`, no table), never a path whose record of the
 * same prefix was recovered.
 */
export const recordRemovedInputs: FinishHook = ({ db }, job, end, ended) =>
  new DeletionRecorder(db).removedInputs(job, end, ended);

/** The finish hook of `partition_expiration` jobs: their expired files become PENDING_DELETE records. */
export const recordExpiredFiles: FinishHook = ({ db }, job, end, ended) =>
  new DeletionRecorder(db).expiration(job, end, ended);

class DeletionRecorder {
  constructor(private readonly db: Db) {}

  vacuum(job: Job, end: JobEnd, ended: SQL): Statements {
    if (end.status !== "succeeded" || !job.tableId) return [];
    const parsed = VacuumResultSchema.safeParse(end.result);
    if (!parsed.success || parsed.data.dry_run) return [];
    const result: VacuumResult = parsed.data;
    const insert = this.insertFrom(job, ended, {
      actionType: sql`'vacuum'`,
      vacuumMode: sql`${result.mode}`,
      reason: sql`json_extract(f.value, '$.reason')`,
      partition: sql`null`,
      file: sql`null`,
      eligibleAt: sql`j.finished_at + ${grace()}`,
      // Kept on purpose: an earlier recover of a vacuum record of this path.
      extraWhere: sql`not exists (select 1 from ${pendingDeletions} k
        where k.table_id = j.table_id and k.path = json_extract(f.value, '$.path')
          and k.status = 'RECOVERED' and k.action_type = 'vacuum')`,
    });
    const byReason: Record<VacuumResult["files"][number]["reason"], number> = {
      tombstone: 0,
      orphan: 0,
      expired_snapshot: 0,
    };
    for (const file of result.files) byReason[file.reason]++;
    return [
      insert,
      this.keepCountsOnly(job, ended, sql`, '$.files_by_reason', json(${JSON.stringify(byReason)})`),
    ];
  }

  expiration(job: Job, end: JobEnd, ended: SQL): Statements {
    if (end.status !== "succeeded" || !job.tableId) return [];
    const parsed = PartitionExpirationResultSchema.safeParse(end.result);
    if (!parsed.success) return [];
    const result: PartitionExpirationResult = parsed.data;
    // Only files a commit really removed from the table are pending deletion.
    if (
      result.dry_run ||
      result.validate ||
      result.committed_version === null ||
      result.committed_at === null
    )
      return [];
    const readersUntil = Math.ceil(result.committed_at + result.table_retention_hours * HOUR_MS);
    const column = result.partition_column;
    const insert = this.insertFrom(job, ended, {
      actionType: sql`'partition_expiration'`,
      vacuumMode: sql`null`,
      reason: sql`'expired_partition'`,
      partition:
        column === null
          ? sql`null`
          : sql`(select ${column} || '=' || pv.value from json_each(f.value, '$.partition_values') pv where pv.key = ${column})`,
      file: sql`json(f.value)`,
      eligibleAt: sql`max(${readersUntil}, j.finished_at + ${grace()})`,
      extraWhere: sql`1`,
    });
    return [insert, this.keepCountsOnly(job, ended, sql``)];
  }

  crunch(job: Job, end: JobEnd, ended: SQL): Statements {
    if (end.status !== "succeeded" || !job.tableId) return [];
    const parsed = CrunchResultSchema.safeParse(end.result);
    if (!parsed.success || !parsed.data.superseded?.length || parsed.data.committed_version === null)
      return [];
    const insert = this.insertFrom(job, ended, {
      actionType: sql`'crunch'`,
      vacuumMode: sql`null`,
      reason: sql`'superseded'`,
      partition: sql`nullif(json_extract(s.value, '$.partition'), '')`,
      file: sql`json_object('values', json_extract(s.value, '$.values'),
        'previous_location', json_extract(s.value, '$.previous_location'),
        'location', json_extract(s.value, '$.location'))`,
      eligibleAt: sql`j.finished_at + ${grace()}`,
      extraWhere: sql`1`,
      files: sql`json_each(j.result, '$.superseded') s, json_each(s.value, '$.files') f`,
    });
    // The stored result keeps the folders with empty file lists: the records hold the files.
    const folders = sql`(select json_group_array(json(json_set(s.value, '$.files', json('[]')))) from json_each(${jobs.result}, '$.superseded') s)`;
    return [
      insert,
      this.db
        .update(jobs)
        .set({
          result: sql`json_set(${jobs.result}, '$.superseded', json(${folders}),
            '$.pending_deletions_recorded', (select count(*) from ${pendingDeletions} p where p.source_job_id = ${job.id}))`,
        })
        .where(and(eq(jobs.id, job.id), ended)),
    ];
  }

  removedInputs(job: Job, end: JobEnd, ended: SQL): Statements {
    if (end.status !== "succeeded" || !RemoveInputsResultSchema.safeParse(end.result).success) return [];
    const insert = this.insertFrom(job, ended, {
      tableId: sql`null`,
      prefixId: sql`json_extract(j.payload, '$.prefix_id')`,
      actionType: sql`'remove_inputs'`,
      vacuumMode: sql`null`,
      reason: sql`'converted_input'`,
      partition: sql`null`,
      file: sql`null`,
      eligibleAt: sql`j.finished_at + ${grace()}`,
      extraWhere: sql`not exists (select 1 from ${pendingDeletions} k
        where k.prefix_id = json_extract(j.payload, '$.prefix_id') and k.path = json_extract(f.value, '$.path')
          and k.status = 'RECOVERED')`,
    });
    return [insert, this.keepCountsOnly(job, ended, sql``)];
  }

  /** One record per file of the job's stored result (`$.files`, or the files `kind.files` names as `f`). */
  private insertFrom(
    job: Job,
    ended: SQL,
    kind: {
      /** The record's owner: the job's table unless given (a prefix's record has none). */
      tableId?: SQL;
      prefixId?: SQL;
      actionType: SQL;
      vacuumMode: SQL;
      reason: SQL;
      partition: SQL;
      file: SQL;
      eligibleAt: SQL;
      extraWhere: SQL;
      files?: SQL;
    },
  ) {
    const nil = sql`null`;
    return insertSelect(
      this.db,
      pendingDeletions,
      {
        id: recordId,
        tableId: kind.tableId ?? sql`j.table_id`,
        prefixId: kind.prefixId ?? nil,
        sourceJobId: sql`j.id`,
        actionType: kind.actionType,
        vacuumMode: kind.vacuumMode,
        reason: kind.reason,
        path: sql`json_extract(f.value, '$.path')`,
        sizeBytes: sql`json_extract(f.value, '$.size')`,
        partition: kind.partition,
        file: kind.file,
        status: sql`'PENDING_DELETE'`,
        eligibleAt: kind.eligibleAt,
        createdAt: sql`j.finished_at`,
        updatedAt: sql`j.finished_at`,
        recoveredAt: nil,
        recoverReason: nil,
        recoveredBy: nil,
        recoverJobId: nil,
        hardDeleteJobId: nil,
        deletedAt: nil,
        note: nil,
      },
      sql`from ${jobs} j, ${kind.files ?? sql`json_each(j.result, '$.files') f`}
        where j.id = ${job.id} and ${ended}
          and not exists (select 1 from ${pendingDeletions} s where s.source_job_id = j.id)
          and ${kind.extraWhere}`,
    ).onConflictDoNothing();
  }

  /** The stored result of a recorded run: counts only; the records hold the files. */
  private keepCountsOnly(job: Job, ended: SQL, extra: SQL) {
    return this.db
      .update(jobs)
      .set({
        result: sql`json_set(${jobs.result}, '$.files', json('[]'),
          '$.pending_deletions_recorded', (select count(*) from ${pendingDeletions} s where s.source_job_id = ${job.id})${extra})`,
      })
      .where(and(eq(jobs.id, job.id), ended));
  }
}
