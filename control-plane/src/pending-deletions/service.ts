/**
 * Pending deletions (document 1): the records of files a vacuum, a partition expiration, a Hive
 * crunch or a prefix's removal of converted inputs proposed for deletion (`record.ts` writes them),
 * their lists and stats, and recover. A record belongs to a table (`table_id`) or to a managed
 * prefix (`prefix_id`, `remove_inputs` records).
 *
 * Recover keeps a PENDING_DELETE record's file for good. Every move is one conditional UPDATE on
 * the record's status, so of two recovers (or a recover and a hard-delete) racing on one record
 * exactly one wins and the other gets 409 naming the status it found:
 *
 *   vacuum record:     PENDING_DELETE ──recover──▶ RECOVERED (at once: the file was never part of
 *                      the table, keeping it is all there is to do)
 *   prefix record:     as a vacuum record: the input was copied into Parquet, never moved; a
 *                      later removal never proposes its path again
 *   expiration record: PENDING_DELETE ──recover──▶ RECOVERING ──recover job succeeded──▶ RECOVERED
 *                                                      └──job failed or cancelled──▶ PENDING_DELETE
 *   Hive crunch record: as an expiration record, but for its whole folder: recovering one record
 *                      claims every PENDING_DELETE record of the same crunch and partition, and the
 *                      job moves the partition back to the folder in the metastore.
 *
 * An expiration record's recover queues a `recover` job in the same batch as the claim; the job's
 * finish hook moves the record on in the batch that ends the job.
 */
import { type Clock, newId } from "@lakesmith/shared";
import {
  ExpiredFileSchema,
  RECOVER_KIND,
  type RecoverPayload,
  RecoverResultSchema,
  SupersededRefSchema,
  VACUUM_KIND,
} from "@lakesmith/shared/maintenance";
import {
  and,
  asc,
  count,
  desc,
  eq,
  exists,
  lte,
  notExists,
  or,
  type Placeholder,
  type SQL,
  sql,
} from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { Db } from "../db/index.ts";
import {
  jobs,
  lakeTables,
  PENDING_DELETION_STATUSES,
  type PendingDeletion,
  type PendingDeletionStatus,
  pendingDeletions,
  prefixes,
} from "../db/schema.ts";
import { type PreparedSelect, preparedSelect } from "../db/statement-cache.ts";
import type { Page } from "../http/pagination.ts";
import { conflict, notFound } from "../http/problem.ts";
import { jobOnTable } from "../jobs/enqueue.ts";
import type { FinishHook } from "../jobs/kinds.ts";
import type { JobService } from "../jobs/service.ts";
import type { TableService } from "../tables/service.ts";
import type { PendingDeletionFilter } from "./schemas.ts";

export interface PendingDeletionStats {
  tableId: string | null;
  prefixId: string | null;
  counts: Record<PendingDeletionStatus, number>;
  bytes: Record<PendingDeletionStatus, number>;
  total: number;
  eligibleNow: number;
}

const zeroes = () =>
  Object.fromEntries(PENDING_DELETION_STATUSES.map((s) => [s, 0])) as Record<PendingDeletionStatus, number>;

/** The list's statements for one shape of filter (which fields are set); values as placeholders. */
interface ListStatements {
  page: PreparedSelect<PendingDeletion>;
  total: PreparedSelect<{ n: number }>;
}
/** Whose records the stats count: all, one table's (`tableId`) or one prefix's (`prefixId`). */
type StatsScope = "all" | "table" | "prefix";
/** The stats' statements, for one scope; `now` in epoch ms. */
interface StatsStatements {
  byStatus: PreparedSelect<{ status: PendingDeletionStatus; n: number; bytes: number }>;
  eligible: PreparedSelect<{ n: number }>;
}

/** The list's filter fields and the columns they match. */
const FILTER_COLUMNS = {
  status: pendingDeletions.status,
  table_id: pendingDeletions.tableId,
  prefix_id: pendingDeletions.prefixId,
  action_type: pendingDeletions.actionType,
  vacuum_mode: pendingDeletions.vacuumMode,
  source_job_id: pendingDeletions.sourceJobId,
} as const;
type FilterField = keyof typeof FILTER_COLUMNS & keyof PendingDeletionFilter;

export class PendingDeletionService {
  // Reads built once per shape and kept prepared (`db/statement-cache.ts`): at most 64 list shapes (six filters).
  private readonly lists = new Map<string, ListStatements>();
  private readonly statsByScope = new Map<StatsScope, StatsStatements>();
  private readonly byId;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly catalogRefs: CatalogTableRefs,
  ) {
    this.byId = preparedSelect(
      db,
      db
        .select()
        .from(pendingDeletions)
        .where(eq(pendingDeletions.id, sql.placeholder("id"))),
    );
  }

  /**
   * Records, newest first, and among one job's records (which share created_at) last inserted
   * first: each filter's index is ordered by (..., created_at, rowid).
   */
  async list(filter: PendingDeletionFilter, offset: number, limit: number): Promise<Page<PendingDeletion>> {
    // status, action_type and vacuum_mode filter when non-empty; the ids whenever they are given.
    const fields = (Object.keys(FILTER_COLUMNS) as FilterField[]).filter((f) =>
      f === "table_id" || f === "prefix_id" || f === "source_job_id"
        ? filter[f] !== undefined
        : Boolean(filter[f]),
    );
    const statements = this.listStatements(fields);
    const values = Object.fromEntries(fields.map((f) => [f, filter[f]]));
    const [items, total] = await Promise.all([
      statements.page.all({ ...values, offset, limit }),
      statements.total.get(values),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  private listStatements(fields: FilterField[]): ListStatements {
    const key = fields.join("/");
    let statements = this.lists.get(key);
    if (statements) return statements;
    const where = and(...fields.map((f) => eq(FILTER_COLUMNS[f], sql.placeholder(f))));
    statements = {
      page: preparedSelect(
        this.db,
        this.db
          .select()
          .from(pendingDeletions)
          .where(where)
          .orderBy(desc(pendingDeletions.createdAt), desc(rowid))
          .limit(sql.placeholder("limit"))
          .offset(sql.placeholder("offset")),
      ),
      total: preparedSelect(this.db, this.db.select({ n: count() }).from(pendingDeletions).where(where)),
    };
    this.lists.set(key, statements);
    return statements;
  }

  /** Counts and bytes per status (every status present), and how many hard-delete would pick now. */
  async stats(tableId: string | undefined, prefixId?: string): Promise<PendingDeletionStats> {
    const scope: StatsScope = tableId !== undefined ? "table" : prefixId !== undefined ? "prefix" : "all";
    const statements = this.statsStatements(scope);
    const values = { tableId, prefixId, now: this.clock.now().getTime() };
    const [rows, eligible] = await Promise.all([
      statements.byStatus.all(values),
      statements.eligible.get(values),
    ]);
    const counts = zeroes();
    const bytes = zeroes();
    for (const row of rows) {
      counts[row.status] = row.n;
      bytes[row.status] = Number(row.bytes);
    }
    return {
      tableId: tableId ?? null,
      prefixId: prefixId ?? null,
      counts,
      bytes,
      total: rows.reduce((sum, r) => sum + r.n, 0),
      eligibleNow: eligible?.n ?? 0,
    };
  }

  private statsStatements(scope: StatsScope): StatsStatements {
    let statements = this.statsByScope.get(scope);
    if (statements) return statements;
    const ofTable =
      scope === "table"
        ? eq(pendingDeletions.tableId, sql.placeholder("tableId"))
        : scope === "prefix"
          ? eq(pendingDeletions.prefixId, sql.placeholder("prefixId"))
          : undefined;
    statements = {
      byStatus: preparedSelect(
        this.db,
        this.db
          .select({
            status: pendingDeletions.status,
            n: count(),
            bytes: sql<number>`coalesce(sum(${pendingDeletions.sizeBytes}), 0)`,
          })
          .from(pendingDeletions)
          .where(ofTable)
          .groupBy(pendingDeletions.status),
      ),
      eligible: preparedSelect(
        this.db,
        this.db
          .select({ n: count() })
          .from(pendingDeletions)
          .where(and(hardDeletable(this.db, sql.placeholder("now")), ofTable)),
      ),
    };
    this.statsByScope.set(scope, statements);
    return statements;
  }

  async get(id: string): Promise<PendingDeletion> {
    const record = await this.byId.get({ id });
    if (!record) throw notFound("Pending deletion", id);
    return record;
  }

  /** Paths vacuum must never propose on the table: its RECOVERED vacuum records. */
  async keepPaths(tableId: string): Promise<string[]> {
    const rows = await this.db
      .selectDistinct({ path: pendingDeletions.path })
      .from(pendingDeletions)
      .where(
        and(
          eq(pendingDeletions.tableId, tableId),
          eq(pendingDeletions.status, "RECOVERED"),
          eq(pendingDeletions.actionType, VACUUM_KIND),
        ),
      )
      .orderBy(asc(pendingDeletions.path));
    return rows.map((r) => r.path);
  }

  /**
   * Recovers a PENDING_DELETE record. A vacuum record is RECOVERED at once (`queued: false`); an
   * expiration record becomes RECOVERING and a recover job is queued (`queued: true`). 404 for an
   * unknown id; 409 naming the status for any other status, or when the table was deleted.
   */
  async recover(
    id: string,
    reason: string,
    actor: string | null,
  ): Promise<{ record: PendingDeletion; queued: boolean }> {
    const record = await this.get(id);
    if (record.status !== "PENDING_DELETE") throw notRecoverable(record);
    const now = this.clock.now();
    const pending = and(eq(pendingDeletions.id, id), eq(pendingDeletions.status, "PENDING_DELETE"));
    const asked = { recoverReason: reason, recoveredBy: actor, updatedAt: now, note: null };

    // A vacuum's file was never part of its table, a prefix's input was only copied: keeping it is all there is to do.
    if (record.actionType === "vacuum" || record.actionType === "remove_inputs") {
      const [recovered] = await this.db
        .update(pendingDeletions)
        .set({ ...asked, status: "RECOVERED", recoveredAt: now })
        .where(pending)
        .returning();
      if (!recovered) throw notRecoverable(await this.get(id));
      return { record: recovered, queued: false };
    }

    const table = record.tableId ? await this.tables.find(record.tableId) : undefined;
    if (!table || !record.tableId)
      throw conflict(
        `Table '${record.tableId}' was deleted; recovering pending deletion '${id}' needs the table to commit the file back to. ` +
          "The file is still in storage, and hard-delete never picks records of a deleted table.",
      );
    if (!record.file) throw conflict(`Pending deletion '${id}' has no file action to commit back.`);
    const jobId = newId("job");
    // A Hive crunch's records come back a folder at a time: every PENDING_DELETE record of the folder.
    const ofFolder = and(
      eq(pendingDeletions.sourceJobId, record.sourceJobId),
      eq(pendingDeletions.tableId, record.tableId),
      record.partition === null
        ? sql`${pendingDeletions.partition} is null`
        : eq(pendingDeletions.partition, record.partition),
      eq(pendingDeletions.status, "PENDING_DELETE"),
    );
    const folder =
      record.actionType === "crunch"
        ? await this.db
            .select({ id: pendingDeletions.id, path: pendingDeletions.path })
            .from(pendingDeletions)
            .where(ofFolder)
        : null;
    let payload: RecoverPayload;
    if (folder) {
      const ref = SupersededRefSchema.parse(record.file);
      const catalog = await this.catalogRefs.of(table);
      payload = {
        table_id: table.id,
        uri: table.uri,
        format: table.format,
        files: [],
        folders: [{ ...ref, deletion_ids: folder.map((r) => r.id), paths: folder.map((r) => r.path) }],
        ...(catalog ? { catalog } : {}),
      };
    } else {
      const file = ExpiredFileSchema.parse(record.file);
      payload = {
        table_id: table.id,
        uri: table.uri,
        format: table.format,
        files: [{ ...file, path: record.path, deletion_id: record.id }],
        folders: [],
      };
    }
    const [claimed, , withdrawn] = await this.db.batch([
      this.db
        .update(pendingDeletions)
        .set({ ...asked, status: "RECOVERING", recoverJobId: jobId })
        .where(folder ? ofFolder : pending)
        .returning(),
      this.jobs.insertStatement(
        jobOnTable(table, { kind: RECOVER_KIND, payload, trigger: "manual", createdBy: actor }),
        jobId,
      ),
      // The claim lost a race: the job goes again in the same transaction.
      this.db
        .delete(jobs)
        .where(
          and(
            eq(jobs.id, jobId),
            notExists(
              this.db
                .select({ one: sql`1` })
                .from(pendingDeletions)
                .where(and(eq(pendingDeletions.id, id), eq(pendingDeletions.recoverJobId, jobId))),
            ),
          ),
        )
        .returning({ id: jobs.id }),
    ]);
    const recovering = claimed.find((r) => r.id === id);
    if (!recovering || withdrawn.length > 0) throw notRecoverable(await this.get(id));
    this.jobs.notifyWork();
    return { record: recovering, queued: true };
  }
}

/**
 * PENDING_DELETE records hard-delete may pick at `now`: eligible, and of a table or prefix that
 * still exists (the control plane knows where a deleted one lived no more).
 */
export function hardDeletable(db: Db, now: Date | Placeholder): SQL {
  return and(
    eq(pendingDeletions.status, "PENDING_DELETE"),
    lte(pendingDeletions.eligibleAt, now),
    ofExistingTable(db),
  ) as SQL;
}

/** The record's table, or its prefix, still exists. */
export function ofExistingTable(db: Db): SQL {
  return or(
    exists(db.select({ one: sql`1` }).from(lakeTables).where(eq(lakeTables.id, pendingDeletions.tableId))),
    exists(db.select({ one: sql`1` }).from(prefixes).where(eq(prefixes.id, pendingDeletions.prefixId))),
  ) as SQL;
}

/** The implicit rowid every index entry ends with: the order records were inserted in. */
export const rowid = sql`${pendingDeletions}.rowid`;

function notRecoverable(record: PendingDeletion) {
  const why: Record<PendingDeletionStatus, string> = {
    PENDING_DELETE: "it changed while this request ran; try again",
    RECOVERING: `a recover job is putting the file back (GET /api/v1/jobs/${record.recoverJobId})`,
    RECOVERED: "it was recovered already",
    DELETING: `a hard-delete job has claimed it (GET /api/v1/jobs/${record.hardDeleteJobId})`,
    DELETED: "its file was deleted",
    RETAINED: "hard-delete found the file referenced by the table again and kept it",
  };
  return conflict(
    `Pending deletion '${record.id}' is ${record.status}; only PENDING_DELETE records can be recovered: ${why[record.status]}.`,
  );
}

/** A recover job's end moves its RECOVERING records: RECOVERED, or back to PENDING_DELETE. */
export const recoverFinished: FinishHook = ({ db, clock }, job, end, ended) => {
  const now = clock.now();
  const mine = (...more: (SQL | undefined)[]) =>
    and(eq(pendingDeletions.recoverJobId, job.id), eq(pendingDeletions.status, "RECOVERING"), ended, ...more);
  if (end.status !== "succeeded")
    return [
      db
        .update(pendingDeletions)
        .set({
          status: "PENDING_DELETE",
          note: end.error ?? `the recover job ${job.id} ended ${end.status}`,
          updatedAt: now,
        })
        .where(mine()),
    ];
  // The job committed: its files are back whatever the result says, so never deletable again.
  const parsed = RecoverResultSchema.safeParse(end.result);
  const notes = parsed.success
    ? parsed.data.files.map((f) =>
        db
          .update(pendingDeletions)
          .set({
            status: "RECOVERED",
            recoveredAt: now,
            updatedAt: now,
            note:
              f.outcome === "already_live"
                ? "the file was live in the table already"
                : `restored in table version ${parsed.data.committed_version}`,
          })
          .where(mine(eq(pendingDeletions.id, f.deletion_id))),
      )
    : [];
  return [
    ...notes,
    db.update(pendingDeletions).set({ status: "RECOVERED", recoveredAt: now, updatedAt: now }).where(mine()),
  ];
};
