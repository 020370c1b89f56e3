/**
 * The figures of a report period, read from the database as it stands:
 *
 * - crunched: crunch and optimize jobs that succeeded in the period, the tables they rewrote, and
 *   the bytes before and after from each job's result (`CrunchResult`); DRR is
 *   `100 * (1 - after / before)` over all of them, the per-job definition applied to the sums;
 * - dollars: bytes saved (GB of 2^30 bytes) x `storage_cost_usd_per_gb_month` x
 *   (1 - `cloud_discount_percent` / 100) per month, and that times `projection_period_months` when set;
 * - deletions: files pending deletion now (PENDING_DELETE), and files deleted in the period;
 * - failures: jobs that failed for good in the period, the latest ten named.
 * Bounds: five aggregate queries on indexed columns; the period is a half-open [from, to).
 */
import { and, count, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Config } from "../config/definitions.ts";
import type { Db } from "../db/index.ts";
import { jobs, lakeTables, pendingDeletions } from "../db/schema.ts";

export const GB = 2 ** 30;
const CRUNCH_KINDS = ["crunch", "optimize"];

export interface ReportFigures {
  from: Date;
  to: Date;
  crunch: {
    jobs: number;
    tables: number;
    bytesBefore: number;
    bytesAfter: number;
    bytesSaved: number;
    /** Percent of the rewritten bytes saved; null when nothing was rewritten. */
    drrPercent: number | null;
    /** The tables that saved most, at most five. */
    top: { name: string; bytesSaved: number }[];
  };
  dollars: {
    /** Storage cost after the discount, USD per GB-month. */
    effectiveRate: number;
    perMonth: number;
    projectionMonths: number | null;
    projected: number | null;
  };
  deletions: { pendingFiles: number; pendingBytes: number; deletedFiles: number; deletedBytes: number };
  failures: { count: number; latest: { jobId: string; kind: string; error: string | null; at: Date }[] };
}

/** Monthly dollars saved for `bytesSaved`, and the projection, as the settings say. */
export function dollarsSaved(bytesSaved: number, values: Config): ReportFigures["dollars"] {
  const effectiveRate = values.storage_cost_usd_per_gb_month * (1 - values.cloud_discount_percent / 100);
  const perMonth = (bytesSaved / GB) * effectiveRate;
  const months = values.projection_period_months;
  return {
    effectiveRate,
    perMonth,
    projectionMonths: months,
    projected: months === null ? null : perMonth * months,
  };
}

export async function reportFigures(db: Db, values: Config, from: Date, to: Date): Promise<ReportFigures> {
  const inPeriod = and(gte(jobs.finishedAt, from), lt(jobs.finishedAt, to));
  const crunched = and(inArray(jobs.kind, CRUNCH_KINDS), eq(jobs.status, "succeeded"), inPeriod);
  const before = sql<number>`coalesce(sum(json_extract(${jobs.result}, '$.bytes_before')), 0)`;
  const after = sql<number>`coalesce(sum(json_extract(${jobs.result}, '$.bytes_after')), 0)`;
  const [[totals], top, [pending], [deleted], [failedCount], failed] = await Promise.all([
    db
      .select({ jobs: count(), tables: sql<number>`count(distinct ${jobs.tableId})`, before, after })
      .from(jobs)
      .where(crunched),
    db
      .select({
        name: sql<string>`coalesce(${lakeTables.name}, ${jobs.tableId})`,
        saved: sql<number>`${before} - ${after}`,
      })
      .from(jobs)
      .leftJoin(lakeTables, eq(lakeTables.id, jobs.tableId))
      .where(crunched)
      .groupBy(jobs.tableId)
      .orderBy(desc(sql`${before} - ${after}`))
      .limit(5),
    db
      .select({ files: count(), bytes: sql<number>`coalesce(sum(${pendingDeletions.sizeBytes}), 0)` })
      .from(pendingDeletions)
      .where(eq(pendingDeletions.status, "PENDING_DELETE")),
    db
      .select({ files: count(), bytes: sql<number>`coalesce(sum(${pendingDeletions.sizeBytes}), 0)` })
      .from(pendingDeletions)
      .where(
        and(
          eq(pendingDeletions.status, "DELETED"),
          gte(pendingDeletions.deletedAt, from),
          lt(pendingDeletions.deletedAt, to),
        ),
      ),
    db
      .select({ n: count() })
      .from(jobs)
      .where(and(eq(jobs.status, "failed"), inPeriod)),
    db
      .select({ id: jobs.id, kind: jobs.kind, error: jobs.error, at: jobs.finishedAt })
      .from(jobs)
      .where(and(eq(jobs.status, "failed"), inPeriod))
      .orderBy(desc(jobs.finishedAt))
      .limit(10),
  ]);
  const bytesBefore = Number(totals?.before ?? 0);
  const bytesAfter = Number(totals?.after ?? 0);
  const bytesSaved = Math.max(0, bytesBefore - bytesAfter);
  return {
    from,
    to,
    crunch: {
      jobs: totals?.jobs ?? 0,
      tables: Number(totals?.tables ?? 0),
      bytesBefore,
      bytesAfter,
      bytesSaved,
      drrPercent: bytesBefore > 0 ? 100 * (1 - bytesAfter / bytesBefore) : null,
      top: top.map((t) => ({ name: String(t.name ?? "?"), bytesSaved: Number(t.saved) })),
    },
    dollars: dollarsSaved(bytesSaved, values),
    deletions: {
      pendingFiles: pending?.files ?? 0,
      pendingBytes: Number(pending?.bytes ?? 0),
      deletedFiles: deleted?.files ?? 0,
      deletedBytes: Number(deleted?.bytes ?? 0),
    },
    failures: {
      count: failedCount?.n ?? 0,
      latest: failed.map((f) => ({ jobId: f.id, kind: f.kind, error: f.error, at: f.at ?? to })),
    },
  };
}
