/**
 * The scheduler's catalog step (`scheduler/scheduler.ts` runs it every tick):
 *
 * - Scheduled syncs: a full sync for each active connection whose latest sync was asked for (manual
 *   or scheduled) `sync_interval_hours` ago, or, never synced, that was created that long ago. At
 *   most `SYNCS_PER_TICK` a tick, the longest waiting first; the rest are due at the next tick.
 *   Each job's dedupe key names the connection and the time its wait started, so two ticks (or two
 *   control planes) that read the same row queue one job. A connection whose sync is still active
 *   is skipped and tried again at the next tick. One whose sync can't be queued (its credentials no
 *   longer decrypt, say) is set `failed` with the reason and waits an interval.
 * - Expired tests: a connection test no agent took within `TEST_TTL_MS` is cancelled, so its
 *   credentials leave the job row (the end purges them).
 *
 * It decrypts credentials, so it runs in JavaScript, one connection at a time; connections are few
 * (the due query reads every active one).
 */
import { CATALOG_TEST_KIND } from "@lakesmith/shared/catalogs";
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogConnection, catalogConnections, jobs } from "../db/schema.ts";
import type { CancelService } from "../jobs/cancel.ts";
import type { CatalogJobService } from "./jobs.ts";
import { cancelQuietly } from "./service.ts";

const HOUR_MS = 3_600_000;
/** A test no agent took within this is cancelled. */
export const TEST_TTL_MS = 10 * 60_000;
const SYNCS_PER_TICK = 100;

export interface CatalogTick {
  /** Scheduled syncs queued. */
  syncs: number;
  /** Tests cancelled because no agent took them in time. */
  expiredTests: number;
}

export class CatalogSchedule {
  constructor(
    private readonly db: Db,
    private readonly catalogJobs: CatalogJobService,
    private readonly cancel: CancelService,
  ) {}

  async tick(now: Date): Promise<CatalogTick> {
    return { syncs: await this.queueDueSyncs(now), expiredTests: await this.expireTests(now) };
  }

  private async queueDueSyncs(now: Date): Promise<number> {
    const since = sql`coalesce(${catalogConnections.syncRequestedAt}, ${catalogConnections.createdAt})`;
    const due = await this.db
      .select()
      .from(catalogConnections)
      .where(
        and(
          eq(catalogConnections.isActive, true),
          sql`${since} + ${catalogConnections.syncIntervalHours} * ${HOUR_MS} <= ${now.getTime()}`,
        ),
      )
      .orderBy(asc(since))
      .limit(SYNCS_PER_TICK);
    let queued = 0;
    for (const row of due) {
      const waitingSince = (row.syncRequestedAt ?? row.createdAt).getTime();
      try {
        const outcome = await this.catalogJobs.queueSync(
          row,
          { mode: "full" },
          { trigger: "schedule", actor: null, dedupeKey: `catalog_sync:${row.id}:${waitingSince}` },
        );
        if ("job" in outcome) queued++;
      } catch (err) {
        await this.notQueued(row, waitingSince, now, err);
      }
    }
    return queued;
  }

  /** Says why on the connection, and restarts its wait, unless someone moved it meanwhile. */
  private async notQueued(row: CatalogConnection, waitingSince: number, now: Date, err: unknown) {
    const reason = err instanceof Error ? err.message : String(err);
    await this.db
      .update(catalogConnections)
      .set({
        syncStatus: "failed",
        lastSyncError: `the scheduled sync could not be queued: ${reason}`,
        syncRequestedAt: now,
      })
      .where(
        and(
          eq(catalogConnections.id, row.id),
          sql`coalesce(${catalogConnections.syncRequestedAt}, ${catalogConnections.createdAt}) = ${waitingSince}`,
        ),
      );
  }

  private async expireTests(now: Date): Promise<number> {
    const stale = await this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(
          eq(jobs.kind, CATALOG_TEST_KIND),
          lt(jobs.createdAt, new Date(now.getTime() - TEST_TTL_MS)),
          inArray(jobs.status, ["queued", "offered"]),
        ),
      );
    let cancelled = 0;
    for (const job of stale)
      if (await cancelQuietly(this.cancel, job.id, "no agent took the test within 10 minutes")) cancelled++;
    return cancelled;
  }
}
