/**
 * The end of a `catalog_sync` job, recorded in the batch that ends it (its finish hook), so a
 * connection's tables and its sync status never disagree with the job.
 *
 * A succeeded sync, set-based from the result the same batch has just stored on the job row
 * (`json_each(jobs.result, '$.tables')`, like `pending-deletions/record.ts`; nothing per table is
 * bound or built in JavaScript):
 * 1. upserts every reported table by (connection, `full_name`): its fields, `synced_at` = the
 *    job's end, `sync_job_id` = the job, `deleted_at` cleared (a table that came back is live);
 * 2. incremental mode: confirms the `unchanged` tables the same way, keeping their fields;
 * 3. keeps counts only in the stored result: `tables`, `unchanged` and `schemas` become `[]`,
 *    with `tables_count`, `unchanged_count`, `schemas_count` and `tables_marked_deleted`;
 * 4. marks deleted (`deleted_at` = the job's end) the connection's live tables this job did not
 *    report, within the payload's `catalog` when it named one: gone from the catalog, or now below
 *    the minimum size;
 * 5. for the Lakesmith tables linked to a synced table now marked deleted (and not flagged yet):
 *    disables their schedules and sets `catalog_table_deleted_at` = the job's end; a linked
 *    table whose synced table is live again loses the flag (its schedules stay as the user left
 *    them). Nothing is deleted; the linked tables are found by the `tables_catalog_idx` index;
 * 6. sets the connection `completed`, `last_synced_at` = the job's end, no error.
 *
 * A failed or cancelled sync (by the agent, a cancel, the reaper after the last attempt) sets the
 * connection `failed` with the job's error and touches no table. Only the connection's latest
 * sync (`last_sync_job_id`) moves its status, and nothing is written for a connection deleted
 * meanwhile. Every statement is guarded by `ended`, so a second run changes nothing.
 *
 * Scale: on D1 a job's result is one value of at most 2 MB, so a sync reports at most about 2 MB of
 * tables there (some thousands with the catalog's detail); on libSQL the agent's message is the bound.
 */
import { CatalogSyncResultSchema } from "@lakesmith/shared/catalogs";
import { and, eq, inArray, isNotNull, isNull, ne, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { catalogConnections, catalogTables, type Job, jobs, lakeTables, schedules } from "../db/schema.ts";
import type { FinishHook } from "../jobs/kinds.ts";

/** What the hook reads of the payload; the rest (the credentials) may be purged already. */
const SyncTargetSchema = z.object({ connection_id: z.string(), catalog: z.string().optional() });

type Statements = ReturnType<FinishHook>;

/** The finish hook of `catalog_sync` jobs. */
export const recordSync: FinishHook = ({ db }, job, end, ended) => {
  const target = SyncTargetSchema.safeParse(job.payload);
  if (!target.success) return [];
  const connectionId = target.data.connection_id;
  const latest = and(
    eq(catalogConnections.id, connectionId),
    eq(catalogConnections.lastSyncJobId, job.id),
    ended,
  );
  const failed = (error: string) =>
    db.update(catalogConnections).set({ syncStatus: "failed", lastSyncError: error }).where(latest);
  if (end.status !== "succeeded") return [failed(end.error ?? `the sync ended ${end.status}`)];
  const parsed = CatalogSyncResultSchema.safeParse(end.result);
  if (!parsed.success)
    return [
      failed(
        `the agent's result is not a catalog sync result (${parsed.error.issues
          .map((i) => `${i.path.join(".") || "(result)"}: ${i.message}`)
          .join("; ")})`,
      ),
    ];
  const result = parsed.data;
  const writer = new SyncWriter(db, job, connectionId, target.data.catalog, ended);
  return [
    writer.upsertReported(),
    ...(result.unchanged.length > 0 ? [writer.confirmUnchanged()] : []),
    writer.keepCountsOnly({
      tables: result.tables.length,
      unchanged: result.unchanged.length,
      schemas: result.schemas.length,
    }),
    writer.markUnreported(),
    ...writer.stopLinkedTables(),
    db
      .update(catalogConnections)
      .set({
        syncStatus: "completed",
        lastSyncedAt: writer.finishedAt as unknown as Date,
        lastSyncError: null,
      })
      .where(latest),
  ];
};

class SyncWriter {
  /** The job's end, as the batch recorded it. */
  readonly finishedAt: SQL;

  constructor(
    private readonly db: Db,
    private readonly job: Job,
    private readonly connectionId: string,
    private readonly catalog: string | undefined,
    private readonly ended: SQL,
  ) {
    this.finishedAt = sql`(select ${jobs.finishedAt} from ${jobs} where ${jobs.id} = ${job.id})`;
  }

  upsertReported(): Statements[number] {
    const field = (path: string) => sql`json_extract(t.value, ${`$.${path}`})`;
    return insertSelect(
      this.db,
      catalogTables,
      {
        connectionId: sql`${this.connectionId}`,
        fullName: field("full_name"),
        catalog: field("catalog"),
        schema: field("schema"),
        name: field("name"),
        format: field("format"),
        tableType: field("table_type"),
        location: field("location"),
        sizeBytes: field("size_bytes"),
        hasPartitions: field("has_partitions"),
        updatedAt: sql`cast(${field("updated_at")} as integer)`,
        detail: field("detail"),
        syncedAt: sql`j.finished_at`,
        syncJobId: sql`j.id`,
        deletedAt: sql`null`,
      },
      sql`from ${jobs} j, json_each(j.result, '$.tables') t
        where j.id = ${this.job.id} and ${this.ended}
          and exists (select 1 from ${catalogConnections} c where c.id = ${this.connectionId})`,
    ).onConflictDoUpdate({
      target: [catalogTables.connectionId, catalogTables.fullName],
      set: {
        catalog: sql`excluded.catalog`,
        schema: sql`excluded.schema`,
        name: sql`excluded.name`,
        format: sql`excluded.format`,
        tableType: sql`excluded.table_type`,
        location: sql`excluded.location`,
        sizeBytes: sql`excluded.size_bytes`,
        hasPartitions: sql`excluded.has_partitions`,
        updatedAt: sql`excluded.updated_at`,
        detail: sql`excluded.detail`,
        syncedAt: sql`excluded.synced_at`,
        syncJobId: sql`excluded.sync_job_id`,
        deletedAt: sql`null`,
      },
    });
  }

  confirmUnchanged(): Statements[number] {
    const unchanged = sql`(select value from json_each((select ${jobs.result} from ${jobs} where ${jobs.id} = ${this.job.id}), '$.unchanged'))`;
    return this.db
      .update(catalogTables)
      .set({ syncedAt: this.finishedAt as unknown as Date, syncJobId: this.job.id, deletedAt: null })
      .where(
        and(
          eq(catalogTables.connectionId, this.connectionId),
          sql`${catalogTables.fullName} in ${unchanged}`,
          this.ended,
        ),
      );
  }

  /** The connection's live tables (in the synced catalog) that this job did not report. */
  private unreported(): SQL {
    return and(
      eq(catalogTables.connectionId, this.connectionId),
      isNull(catalogTables.deletedAt),
      ne(catalogTables.syncJobId, this.job.id),
      this.catalog === undefined ? undefined : eq(catalogTables.catalog, this.catalog),
    ) as SQL;
  }

  /** Counts in place of the lists; before `markUnreported`, whose rows it counts. */
  keepCountsOnly(counts: { tables: number; unchanged: number; schemas: number }): Statements[number] {
    const marked = sql`(select count(*) from ${catalogTables} where ${this.unreported()})`;
    return this.db
      .update(jobs)
      .set({
        result:
          sql`json_set(${jobs.result}, '$.tables', json('[]'), '$.unchanged', json('[]'), '$.schemas', json('[]'),
          '$.tables_count', ${counts.tables}, '$.unchanged_count', ${counts.unchanged},
          '$.schemas_count', ${counts.schemas}, '$.tables_marked_deleted', ${marked})` as unknown as Record<
            string,
            unknown
          >,
      })
      .where(and(eq(jobs.id, this.job.id), this.ended));
  }

  /** Disables the schedules of linked tables whose synced table is newly marked deleted, flags them; unflags those back. */
  stopLinkedTables(): Statements {
    const syncedTable = (deleted: boolean) => sql`exists (select 1 from ${catalogTables} ct
      where ct.connection_id = ${this.connectionId} and ct.full_name = ${lakeTables.catalogFullName}
        and ct.deleted_at is ${sql.raw(deleted ? "not null" : "null")})`;
    const linked = eq(lakeTables.catalogConnectionId, this.connectionId);
    const newlyGone = and(linked, isNull(lakeTables.catalogTableDeletedAt), syncedTable(true), this.ended);
    const goneTables = this.db.select({ id: lakeTables.id }).from(lakeTables).where(newlyGone);
    return [
      this.db
        .update(schedules)
        .set({ enabled: false, updatedAt: this.finishedAt as unknown as Date })
        .where(and(inArray(schedules.tableId, goneTables), eq(schedules.enabled, true))),
      this.db
        .update(lakeTables)
        .set({ catalogTableDeletedAt: this.finishedAt as unknown as Date })
        .where(newlyGone),
      this.db
        .update(lakeTables)
        .set({ catalogTableDeletedAt: null })
        .where(and(linked, isNotNull(lakeTables.catalogTableDeletedAt), syncedTable(false), this.ended)),
    ];
  }

  markUnreported(): Statements[number] {
    return this.db
      .update(catalogTables)
      .set({ deletedAt: this.finishedAt as unknown as Date })
      .where(and(this.unreported(), this.ended));
  }
}
