/**
 * What a `catalog_sync` job writes: its tables part by part while it runs (the protocol's `part`,
 * `CatalogSyncPart`), and at its end, in the batch that ends it (its finish hook), the deletions
 * and the connection's sync status; so the tables and the status never disagree with the job.
 *
 * Each part, applied once and in order (`jobs/parts.ts`), set-based from one bound JSON value
 * (`json_each`; nothing per table is bound or built in SQL text), so a part's cost and memory are
 * bounded by the part, never by the catalog (a part is at most 512 KB: within a Workers WebSocket
 * message and a D1 value):
 * 1. `tables`: upserts each by (connection, `full_name`): its fields, `synced_at` = now,
 *    `deleted_at` cleared (a table that came back is live), seen by this sync (`sync_job_id` = the
 *    job, `sync_fence` = its fence);
 * 2. `listed` (incremental): the live tables whose stored `updated_at` equals the listed one are
 *    seen by this sync, their fields kept; the reply names the others (`read`), which the agent
 *    reads and sends as tables.
 *
 * A succeeded sync, at its end:
 * 3. adds `tables_marked_deleted` to its result (the result carries counts only);
 * 4. marks deleted (`deleted_at` = the job's end) the connection's live tables this attempt did
 *    not see, within the payload's `catalog` when it named one: gone from the catalog, or now below
 *    the minimum size;
 * 5. for the Lakesmith tables linked to a synced table now marked deleted (and not flagged yet):
 *    disables their schedules and sets `catalog_table_deleted_at` = the job's end; a linked
 *    table whose synced table is live again loses the flag (its schedules stay as the user left
 *    them). Nothing is deleted; the linked tables are found by the `tables_catalog_idx` index;
 * 6. sets the connection `completed`, `last_synced_at` = the job's end, no error.
 *
 * A failed or cancelled sync (by the agent, a cancel, the reaper after the last attempt) sets the
 * connection `failed` with the job's error and marks nothing deleted: the tables its parts wrote
 * are as the catalog had them, and no table is dropped on the word of an unfinished walk. Only the
 * connection's latest sync (`last_sync_job_id`) moves its status, and nothing is written for a
 * connection deleted meanwhile. Every end statement is guarded by `ended`, so a second run changes nothing.
 */

import {
  CatalogSyncPartSchema,
  CatalogSyncResultSchema,
  type ListedTable,
  type SyncedTable,
} from "@lakesmith/shared/catalogs";
import { and, eq, inArray, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { catalogConnections, catalogTables, type Job, jobs, lakeTables, schedules } from "../db/schema.ts";
import { issueSummary } from "../http/problem.ts";
import type { BatchItem, FinishHook, PartHook } from "../jobs/kinds.ts";

/** What the hook reads of the payload; the rest (the credentials) may be purged already. */
const SyncTargetSchema = z.object({ connection_id: z.string(), catalog: z.string().optional() });

type Statements = ReturnType<FinishHook>;

/** The part hook of `catalog_sync` jobs: steps 1 and 2 of the header. */
export const recordSyncPart: PartHook = async ({ db, clock }, job, part, fresh) => {
  const target = SyncTargetSchema.safeParse(job.payload);
  if (!target.success) return { invalid: "the job's payload names no connection" };
  const parsed = CatalogSyncPartSchema.safeParse(part);
  if (!parsed.success)
    return {
      invalid: `not a catalog sync part (${issueSummary(parsed.error, "(part)", 3)})`,
    };
  const { tables, listed } = parsed.data;
  const seen = new PartWriter(db, job, target.data.connection_id, clock.now(), fresh);
  const statements: BatchItem[] = tables.length > 0 ? [seen.upsert(tables)] : [];
  if (listed.length === 0) return { statements };
  const unchanged = await seen.unchangedAmong(listed);
  if (unchanged.length > 0) statements.push(seen.confirm(unchanged));
  const kept = new Set(unchanged);
  const read = listed.filter((l) => !kept.has(l.full_name)).map((l) => l.full_name);
  return { statements, reply: async () => ({ read }) };
};

/** Writes one part's tables as seen by the job's current attempt. */
class PartWriter {
  constructor(
    private readonly db: Db,
    private readonly job: Job,
    private readonly connectionId: string,
    private readonly now: Date,
    private readonly fresh: SQL,
  ) {}

  upsert(tables: SyncedTable[]): BatchItem {
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
        syncedAt: sql`${this.now.getTime()}`,
        firstSyncedAt: sql`${this.now.getTime()}`,
        syncJobId: sql`${this.job.id}`,
        syncFence: sql`${this.job.fence}`,
        deletedAt: sql`null`,
      },
      sql`from json_each(${JSON.stringify(tables)}) t
        where ${this.fresh} and exists (select 1 from ${catalogConnections} c where c.id = ${this.connectionId})`,
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
        syncFence: sql`excluded.sync_fence`,
        deletedAt: sql`null`,
      },
    });
  }

  /** The listed tables stored live with the same `updated_at` (a null compares with nothing). */
  async unchangedAmong(listed: ListedTable[]): Promise<string[]> {
    const names = JSON.stringify(listed.map((l) => l.full_name));
    const rows = await this.db
      .select({ fullName: catalogTables.fullName, updatedAt: catalogTables.updatedAt })
      .from(catalogTables)
      .where(
        and(
          eq(catalogTables.connectionId, this.connectionId),
          isNull(catalogTables.deletedAt),
          sql`${catalogTables.fullName} in (select value from json_each(${names}))`,
        ),
      );
    const stored = new Map(rows.map((r) => [r.fullName, r.updatedAt?.getTime() ?? null]));
    return listed
      .filter((l) => l.updated_at !== null && stored.get(l.full_name) === l.updated_at)
      .map((l) => l.full_name);
  }

  /** Marks these live tables seen by this attempt, their fields kept. */
  confirm(fullNames: string[]): BatchItem {
    return this.db
      .update(catalogTables)
      .set({ syncedAt: this.now, syncJobId: this.job.id, syncFence: this.job.fence })
      .where(
        and(
          eq(catalogTables.connectionId, this.connectionId),
          isNull(catalogTables.deletedAt),
          sql`${catalogTables.fullName} in (select value from json_each(${JSON.stringify(fullNames)}))`,
          this.fresh,
        ),
      );
  }
}

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
      failed(`the agent's result is not a catalog sync result (${issueSummary(parsed.error, "(result)")})`),
    ];
  const writer = new SyncWriter(db, job, connectionId, target.data.catalog, ended);
  return [
    writer.countMarked(),
    writer.markUnseen(),
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

  /** The connection's live tables (in the synced catalog) that this attempt did not see. */
  private unseen(): SQL {
    return and(
      eq(catalogTables.connectionId, this.connectionId),
      isNull(catalogTables.deletedAt),
      sql`not (${catalogTables.syncJobId} = ${this.job.id} and ${catalogTables.syncFence} is ${this.job.fence})`,
      this.catalog === undefined ? undefined : eq(catalogTables.catalog, this.catalog),
    ) as SQL;
  }

  /** The count of tables `markUnseen` marks, into the result; before it, whose rows it counts. */
  countMarked(): Statements[number] {
    const marked = sql`(select count(*) from ${catalogTables} where ${this.unseen()})`;
    return this.db
      .update(jobs)
      .set({
        result: sql`json_set(${jobs.result}, '$.tables_marked_deleted', ${marked})` as unknown as Record<
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

  markUnseen(): Statements[number] {
    return this.db
      .update(catalogTables)
      .set({ deletedAt: this.finishedAt as unknown as Date })
      .where(and(this.unseen(), this.ended));
  }
}
