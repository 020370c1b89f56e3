/**
 * The figures of a report period, read from the database as it stands:
 *
 * - crunched: crunch and optimize jobs that succeeded and committed in the period (the rewrites the
 *   savings count, `savings/rollup.ts`), the tables they rewrote, and
 *   the bytes before and after from each job's result (`CrunchResult`); bytes saved, DRR and
 *   dollars are the savings formulas (`savings/formulas.ts`) applied to the sums;
 * - deletions: files pending deletion now (PENDING_DELETE), and files deleted in the period;
 * - failures: jobs that failed for good in the period, the latest ten named.
 * Bounds: five aggregate queries on indexed columns; the period is a half-open [from, to).
 */
import { and, count, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Config } from "../config/definitions.ts";
import type { Db } from "../db/index.ts";
import { jobs, lakeTables, pendingDeletions } from "../db/schema.ts";
import { bytesSaved, type Dollars, dollarsSaved, drrPercent } from "../savings/formulas.ts";

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
  dollars: Dollars;
  deletions: { pendingFiles: number; pendingBytes: number; deletedFiles: number; deletedBytes: number };
  failures: { count: number; latest: { jobId: string; kind: string; error: string | null; at: Date }[] };
}

export async function reportFigures(db: Db, values: Config, from: Date, to: Date): Promise<ReportFigures> {
  const inPeriod = and(gte(jobs.finishedAt, from), lt(jobs.finishedAt, to));
  const crunched = and(
    inArray(jobs.kind, CRUNCH_KINDS),
    eq(jobs.status, "succeeded"),
    sql`json_extract(${jobs.result}, '$.committed_version') is not null`,
    inPeriod,
  );
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
  const saved = bytesSaved(bytesBefore, bytesAfter);
  return {
    from,
    to,
    crunch: {
      jobs: totals?.jobs ?? 0,
      tables: Number(totals?.tables ?? 0),
      bytesBefore,
      bytesAfter,
      bytesSaved: saved,
      drrPercent: drrPercent(bytesBefore, bytesAfter),
      top: top.map((t) => ({ name: String(t.name ?? "?"), bytesSaved: Number(t.saved) })),
    },
    dollars: dollarsSaved(saved, values),
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
