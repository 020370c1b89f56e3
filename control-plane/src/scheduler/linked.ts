/**
 * The scheduler's step for catalog-managed tables (`tables.catalog_connection_id`): their
 * scheduled jobs are inserted by `fire.ts` like every other (and the scoring jobs of a succeeded
 * Optimus run by `optimus/scoring-queue.ts`), but held (`not_before` =
 * `CATALOG_HOLD`), since their payload's `catalog` carries decrypted credentials that SQL cannot
 * make. This step, run after the tick's chunks, gives each held job its reference
 * (`CatalogTableRefs.of`, the one place it is built), the endpoints its kind then derives, and
 * releases it (`not_before` = now), in one guarded update per job.
 *
 * - Bounds: held jobs are found by the dispatch index `(status, kind, priority, not_before)`, a
 *   few probes however long the queue; at most `limit` a tick, so a tick stays short.
 * - A job held when a tick died is released by the next tick: the step reads the queue, not the
 *   chunk.
 * - A job whose table is gone, or whose catalog table is (409 from `of`), is cancelled.
 */
import { SCHEDULED_JOB_KINDS } from "@lakesmith/shared/jobs";
import { LAYOUT_SCORING_KIND } from "@lakesmith/shared/optimus";
import { and, eq, inArray } from "drizzle-orm";
import { cancelQuietly } from "../catalog-connections/service.ts";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { Db } from "../db/index.ts";
import { jobs, PRIORITIES } from "../db/schema.ts";
import { ApiError } from "../http/problem.ts";
import type { CancelService } from "../jobs/cancel.ts";
import type { JobService } from "../jobs/service.ts";
import type { TableService } from "../tables/service.ts";
import { CATALOG_HOLD } from "./fire.ts";

export interface LinkedTick {
  released: number;
  cancelled: number;
}

export class LinkedJobRelease {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly refs: CatalogTableRefs,
    private readonly cancel: CancelService,
    private readonly limit = 500,
  ) {}

  /** Gives held jobs their catalog reference and releases them. */
  async tick(now: Date): Promise<LinkedTick> {
    const held = and(
      eq(jobs.status, "queued"),
      inArray(jobs.kind, [...SCHEDULED_JOB_KINDS, "optimize", LAYOUT_SCORING_KIND]),
      inArray(jobs.priority, [...PRIORITIES]),
      eq(jobs.notBefore, CATALOG_HOLD),
    );
    const rows = await this.db.select().from(jobs).where(held).limit(this.limit);
    const outcome: LinkedTick = { released: 0, cancelled: 0 };
    for (const job of rows) {
      const table = job.tableId ? await this.tables.find(job.tableId) : undefined;
      let catalog: Awaited<ReturnType<CatalogTableRefs["of"]>>;
      try {
        if (!table) throw new ApiError(409, `table '${job.tableId}' was deleted`);
        catalog = await this.refs.of(table);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (await cancelQuietly(this.cancel, job.id, err.message)) outcome.cancelled++;
        continue;
      }
      const payload = { ...job.payload, ...(catalog ? { catalog } : {}) };
      const { endpoints } = this.jobs.routingOf({ kind: job.kind, payload, tableId: job.tableId });
      try {
        await this.db
          .update(jobs)
          .set({ payload, endpoints, notBefore: now, updatedAt: now })
          .where(and(eq(jobs.id, job.id), held));
      } catch (err) {
        // Its parameters hold the client secret, and a query error quotes them.
        const cause =
          err instanceof Error && err.cause instanceof Error ? err.cause.message : "a database error";
        throw new Error(`a held scheduled job could not be released: ${cause}`);
      }
      outcome.released++;
    }
    if (outcome.released > 0) this.jobs.notifyWork();
    return outcome;
  }
}
