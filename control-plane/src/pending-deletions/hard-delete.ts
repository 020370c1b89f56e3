/**
 * Hard-delete (`POST /api/v1/vacuum/hard-delete`): hands the files of eligible PENDING_DELETE
 * records to agents for deletion. The control plane never touches customer storage; it claims
 * records and queues one `hard_delete` job per table (`prefix_hard_delete` per managed prefix, for
 * its converted inputs), and the jobs' finish hook records what the agent did.
 *
 * 1. Plan: up to `limit` records with status PENDING_DELETE and `eligible_at <= now` whose table
 *    (or prefix) still exists, oldest eligible first (the `(status, eligible_at, id)` index, or the
 *    table's).
 *    A dry run answers this list and stops.
 * 2. Claim and queue, one batch (one transaction): a conditional UPDATE moves exactly the planned
 *    records that are still PENDING_DELETE and eligible to DELETING with their table's job id
 *    (a recover or another hard-delete that got there first keeps its record), then one INSERT ...
 *    SELECT queues a job for each table that claimed anything, its payload built from the claimed
 *    rows. Both statements are set-based on JSON parameters, so a call is three statements whatever
 *    the number of tables, and none binds more than a few parameters (D1 allows 100 per statement).
 *    Sizes: the claims parameter is ~60 bytes per record (300 KB at 5,000); a job's payload is one
 *    row value, at most 2 MB on D1, so one table's 5,000 files fit with paths up to ~350 characters.
 * 3. The job's end (finish hook, in the batch that ends it): per reported file, deleted or absent
 *    → DELETED, retained → RETAINED, failed → PENDING_DELETE; every record the job still holds
 *    after that (unreported, or the job failed or was cancelled) → PENDING_DELETE with a note.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { uriScheme } from "@lakesmith/shared/jobs";
import { locationKey } from "@lakesmith/shared/locations";
import { HARD_DELETE_KIND, HardDeleteResultSchema } from "@lakesmith/shared/maintenance";
import { PREFIX_HARD_DELETE_KIND } from "@lakesmith/shared/prefix-conversion";
import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import {
  type Job,
  jobs,
  lakeTables,
  type PendingDeletion,
  pendingDeletions,
  prefixes,
} from "../db/schema.ts";
import { notFound } from "../http/problem.ts";
import type { FinishHook } from "../jobs/kinds.ts";
import type { JobService } from "../jobs/service.ts";
import type { TableService } from "../tables/service.ts";
import { hardDeletable, ofExistingTable, rowid } from "./service.ts";

export interface HardDeleteRun {
  dryRun: boolean;
  /** The records, oldest eligible first: as planned (dry run) or as claimed. */
  records: PendingDeletion[];
  jobs: Job[];
}

export class HardDeleteService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly tables: TableService,
  ) {}

  /**
   * Picks up to `limit` eligible records (of one table, with `tableId`). A dry run returns them and
   * changes nothing; a real run claims them and queues one hard_delete job per table.
   */
  async run(options: {
    dryRun: boolean;
    tableId?: string | undefined;
    prefixId?: string | undefined;
    limit: number;
    actor: string | null;
  }): Promise<HardDeleteRun> {
    if (options.tableId !== undefined && !(await this.tables.find(options.tableId)))
      throw notFound("Table", options.tableId);
    if (options.prefixId !== undefined) {
      const [prefix] = await this.db
        .select({ id: prefixes.id })
        .from(prefixes)
        .where(eq(prefixes.id, options.prefixId));
      if (!prefix) throw notFound("Prefix", options.prefixId);
    }
    const now = this.clock.now();
    const planned = await this.db
      .select({ record: pendingDeletions, tableUri: lakeTables.uri, prefixUri: prefixes.uri })
      .from(pendingDeletions)
      .leftJoin(lakeTables, eq(lakeTables.id, pendingDeletions.tableId))
      .leftJoin(prefixes, eq(prefixes.id, pendingDeletions.prefixId))
      .where(
        and(
          hardDeletable(this.db, now),
          options.tableId !== undefined ? eq(pendingDeletions.tableId, options.tableId) : undefined,
          options.prefixId !== undefined ? eq(pendingDeletions.prefixId, options.prefixId) : undefined,
        ),
      )
      .orderBy(asc(pendingDeletions.eligibleAt), asc(rowid))
      .limit(options.limit);
    if (options.dryRun || planned.length === 0)
      return { dryRun: options.dryRun, records: planned.map((p) => p.record), jobs: [] };

    // One job per table, and one per prefix: keyed `t:<id>` and `p:<id>`.
    const jobOf = new Map<string, { job_id: string; scheme: string; location: string }>();
    const ownerOf = (r: PendingDeletion) => (r.tableId ? `t:${r.tableId}` : `p:${r.prefixId}`);
    for (const { record, tableUri, prefixUri } of planned) {
      const uri = tableUri ?? prefixUri;
      if (uri && !jobOf.has(ownerOf(record)))
        jobOf.set(ownerOf(record), {
          job_id: newId("job"),
          scheme: uriScheme(uri),
          location: locationKey(uri),
        });
    }
    const claims = JSON.stringify(
      planned.map(({ record }) => ({ id: record.id, job_id: jobOf.get(ownerOf(record))?.job_id })),
    );
    const owners = (prefix: string, field: string) =>
      JSON.stringify(
        [...jobOf]
          .filter(([key]) => key.startsWith(prefix))
          .map(([key, j]) => ({ [field]: key.slice(2), ...j })),
      );
    const [claimed, queuedTables, queuedPrefixes] = await this.db.batch([
      this.db
        .update(pendingDeletions)
        .set({ status: "DELETING", hardDeleteJobId: sql`c.job_id`, updatedAt: now, note: null })
        .from(
          sql`(select json_extract(value, '$.id') as id, json_extract(value, '$.job_id') as job_id from json_each(${claims})) c`,
        )
        // The unary + keeps SQLite off the status index, so it walks the claims and looks each record
        // up by id, instead of scanning the claims' JSON once per eligible record.
        .where(
          and(
            sql`${pendingDeletions.id} = c.id`,
            sql`+${pendingDeletions.status} = 'PENDING_DELETE' and +${pendingDeletions.eligibleAt} <= ${now.getTime()}`,
            ofExistingTable(this.db),
          ),
        )
        .returning(),
      this.queueStatement(owners("t:", "table_id"), now, options.actor).returning(),
      this.queuePrefixStatement(owners("p:", "prefix_id"), now, options.actor).returning(),
    ]);
    const queued = [...queuedTables, ...queuedPrefixes];
    if (queued.length > 0) this.jobs.notifyWork();
    const order = new Map(planned.map(({ record }, i) => [record.id, i]));
    claimed.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
    return { dryRun: false, records: claimed, jobs: queued };
  }

  /** One queued hard_delete job per table that claimed records, its files read from the claimed rows. */
  private queueStatement(perTable: string, now: Date, actor: string | null) {
    return insertSelect(
      this.db,
      jobs,
      queuedJobColumns(now, actor, {
        kind: sql`${HARD_DELETE_KIND}`,
        tableId: sql`t.id`,
        priority: sql`t.priority`,
        payload: sql`json_object('table_id', t.id, 'uri', t.uri, 'format', t.format, 'files', ${claimedFiles})`,
      }),
      sql`from json_each(${perTable}) g join ${lakeTables} t on t.id = json_extract(g.value, '$.table_id')
        where exists (select 1 from ${pendingDeletions} p where p.hard_delete_job_id = ${claimJobId} and p.status = 'DELETING')`,
    );
  }

  /** One queued prefix_hard_delete job per managed prefix that claimed records (its converted inputs). */
  private queuePrefixStatement(perPrefix: string, now: Date, actor: string | null) {
    return insertSelect(
      this.db,
      jobs,
      queuedJobColumns(now, actor, {
        kind: sql`${PREFIX_HARD_DELETE_KIND}`,
        tableId: sql`null`,
        priority: sql`'P2'`,
        payload: sql`json_object('prefix_id', x.id, 'source_uri', x.uri, 'files', ${claimedFiles})`,
      }),
      sql`from json_each(${perPrefix}) g join ${prefixes} x on x.id = json_extract(g.value, '$.prefix_id')
        where exists (select 1 from ${pendingDeletions} p where p.hard_delete_job_id = ${claimJobId} and p.status = 'DELETING')`,
    );
  }
}

/** The job id a claim entry (`g`, one of `json_each` of the owners) carries. */
const claimJobId = sql`json_extract(g.value, '$.job_id')`;
/** The files of the records the job `g` claimed, as the payload lists them. */
const claimedFiles = sql`json((select json_group_array(json_object('deletion_id', p.id, 'path', p.path))
  from ${pendingDeletions} p where p.hard_delete_job_id = ${claimJobId} and p.status = 'DELETING'))`;

/**
 * The columns of a job queued set-based from a claim entry `g` (its `job_id`, `scheme` and
 * `location`): what the kind's declaration (pending-deletions/kinds.ts) derives, and the defaults
 * `JobService.insertStatement` gives a new job.
 */
function queuedJobColumns(
  now: Date,
  actor: string | null,
  job: { kind: SQL; tableId: SQL; priority: SQL; payload: SQL },
) {
  const at = now.getTime();
  const nil = sql`null`;
  return {
    id: claimJobId,
    ...job,
    requires: sql`json_array(json_extract(g.value, '$.scheme'))`,
    locations: sql`json_array(json_extract(g.value, '$.location'))`,
    endpoints: sql`json('[]')`,
    exclusion: nil,
    locks: sql`json('[]')`,
    refusals: sql`json('[]')`,
    // The defaults JobService.insertStatement gives a new job.
    status: sql`'queued'`,
    attempt: sql`0`,
    maxAttempts: sql`3`,
    fence: sql`0`,
    leaseOwner: nil,
    leaseExpiresAt: nil,
    notBefore: sql`${at}`,
    dedupeKey: nil,
    trigger: sql`'manual'`,
    scheduleId: nil,
    progress: nil,
    partFence: nil,
    partSeq: nil,
    result: nil,
    error: nil,
    createdBy: sql`${actor}`,
    createdAt: sql`${at}`,
    updatedAt: sql`${at}`,
    startedAt: nil,
    finishedAt: nil,
  };
}

/** What a hard_delete job's end does to the records it claimed; all guarded by `ended`. */
export const hardDeleteFinished: FinishHook = ({ db, clock }, job, end, ended) => {
  const now = clock.now();
  const held = and(
    eq(pendingDeletions.hardDeleteJobId, job.id),
    eq(pendingDeletions.status, "DELETING"),
    ended,
  );
  const giveBack = (note: string) =>
    db.update(pendingDeletions).set({ status: "PENDING_DELETE", note, updatedAt: now }).where(held);
  if (end.status !== "succeeded")
    return [giveBack(end.error ?? `the hard-delete job ${job.id} ended ${end.status}`)];
  const parsed = HardDeleteResultSchema.safeParse(end.result);
  if (!parsed.success)
    return [giveBack(`the agent's result of hard-delete job ${job.id} was not a hard-delete result`)];
  const outcome = sql`o.outcome`;
  return [
    db
      .update(pendingDeletions)
      .set({
        status: sql`case ${outcome} when 'retained' then 'RETAINED' when 'failed' then 'PENDING_DELETE' else 'DELETED' end`,
        deletedAt: sql`case when ${outcome} in ('deleted', 'absent') then ${now.getTime()} else null end`,
        note: sql`case ${outcome} when 'absent' then 'already absent' else o.detail end`,
        updatedAt: now,
      })
      .from(
        sql`(select json_extract(f.value, '$.deletion_id') as id, json_extract(f.value, '$.outcome') as outcome,
                      json_extract(f.value, '$.detail') as detail
               from ${jobs} j, json_each(j.result, '$.files') f where j.id = ${job.id}) o`,
      )
      // As in the claim: the + makes SQLite walk the reported files and look each record up by id.
      .where(
        and(
          sql`${pendingDeletions.id} = o.id`,
          sql`+${pendingDeletions.hardDeleteJobId} = ${job.id} and +${pendingDeletions.status} = 'DELETING'`,
          ended,
        ),
      ),
    giveBack(`hard-delete job ${job.id} did not report this file`),
  ];
};
