/**
 * What Optimus found, as the API reads it (document 1, "Optimus"): a submission's latest run's
 * recommendations and the tables they name, and a table's per-day metrics with applied markers.
 *
 * - "The latest run" is the submission's newest run whose analysis job succeeded; before one, the
 *   lists are empty (`run_id` null). Recommendations page by offset/limit, the largest
 *   `bytes_saved_per_day` first (id breaks ties), so a page never depends on insertion order.
 * - Tables: those with at least one recommendation in that run, by `table_fqn`, with the run's
 *   workload of each (`optimus_workloads`) where it was kept.
 * - Metrics: one entry per UTC day from `days - 1` days before today to today, both included. A day
 *   no run measured has every figure null: no data is not zero queries. A `table_fqn` the submission
 *   has neither a recommendation nor a measured day of is a 404. When one name covers several
 *   Lakesmith tables (re-registered), the series is the one of the table measured last.
 * - Markers: the table's recommendations of this submission applied while the window lasted
 *   (applied on or before its last day, not reverted before its first).
 */
import type { Clock } from "@lakesmith/shared";
import { utcDay } from "@lakesmith/shared/optimus";
import { and, asc, count, desc, eq, gte, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import {
  jobs,
  type OptimusRecommendation,
  type OptimusTableDay,
  optimusRecommendations,
  optimusRuns,
  optimusSubmissions,
  optimusTableDays,
  optimusWorkloads,
} from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, notFound } from "../http/problem.ts";
import { appliedRecord } from "./applied.ts";

const DAY_MS = 86_400_000;

export interface TableSummary {
  tableFqn: string;
  tableId: string;
  recommendations: number;
  open: number;
  applied: number;
  bestExpectedSkip: number;
  bytesSavedPerDay: number;
  queries: number | null;
  bytesScanned: number | null;
}

export interface TableMetrics {
  tableFqn: string;
  tableId: string;
  from: string;
  to: string;
  days: { day: string; row: OptimusTableDay | undefined }[];
  markers: OptimusRecommendation[];
}

export class OptimusRecommendations {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The recommendation; 404 naming where to list them. */
  async find(id: string): Promise<OptimusRecommendation> {
    const [row] = await this.db
      .select()
      .from(optimusRecommendations)
      .where(eq(optimusRecommendations.id, id));
    if (!row)
      throw new ApiError(
        404,
        `No Optimus recommendation '${id}'; GET /api/v1/optimus/runs/{submission_id}/recommendations lists a submission's.`,
      );
    return row;
  }

  /** The id of the submission's newest run whose analysis succeeded; null before one. 404 for no submission. */
  async latestRun(submissionId: string): Promise<string | null> {
    const [submission] = await this.db
      .select({ id: optimusSubmissions.id })
      .from(optimusSubmissions)
      .where(eq(optimusSubmissions.id, submissionId));
    if (!submission) throw notFound("Optimus submission", submissionId);
    const [run] = await this.db
      .select({ id: optimusRuns.jobId })
      .from(optimusRuns)
      .innerJoin(jobs, eq(jobs.id, optimusRuns.jobId))
      .where(and(eq(optimusRuns.submissionId, submissionId), eq(jobs.status, "succeeded")))
      .orderBy(desc(optimusRuns.createdAt), desc(sql.raw(`"optimus_runs"."rowid"`)))
      .limit(1);
    return run?.id ?? null;
  }

  async list(
    submissionId: string,
    offset: number,
    limit: number,
  ): Promise<Page<OptimusRecommendation> & { runId: string | null }> {
    const runId = await this.latestRun(submissionId);
    if (!runId) return { items: [], total: 0, offset, limit, runId };
    const where = and(
      eq(optimusRecommendations.submissionId, submissionId),
      eq(optimusRecommendations.runId, runId),
    );
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(optimusRecommendations)
        .where(where)
        .orderBy(desc(optimusRecommendations.bytesSavedPerDay), asc(optimusRecommendations.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(optimusRecommendations).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit, runId };
  }

  async tables(submissionId: string): Promise<{ runId: string | null; items: TableSummary[] }> {
    const runId = await this.latestRun(submissionId);
    if (!runId) return { runId, items: [] };
    const r = optimusRecommendations;
    const items = await this.db
      .select({
        tableFqn: r.tableFqn,
        tableId: r.tableId,
        recommendations: sql<number>`count(*)`,
        open: sql<number>`sum(${r.status} = 'open')`,
        applied: sql<number>`sum(${r.status} = 'applied')`,
        bestExpectedSkip: sql<number>`max(${r.expectedSkipFraction})`,
        bytesSavedPerDay: sql<number>`sum(${r.bytesSavedPerDay})`,
        queries: sql<number | null>`max(${optimusWorkloads.queries})`,
        bytesScanned: sql<number | null>`max(${optimusWorkloads.bytesScanned})`,
      })
      .from(r)
      .leftJoin(
        optimusWorkloads,
        and(eq(optimusWorkloads.runId, r.runId), eq(optimusWorkloads.tableId, r.tableId)),
      )
      .where(and(eq(r.submissionId, submissionId), eq(r.runId, runId)))
      .groupBy(r.tableId, r.tableFqn)
      .orderBy(asc(r.tableFqn), asc(r.tableId));
    return { runId, items: items.map((t) => ({ ...t, open: Number(t.open), applied: Number(t.applied) })) };
  }

  /** The table's last `days` UTC days (today included) and the recommendations applied meanwhile. */
  async metrics(submissionId: string, tableFqn: string, days: number): Promise<TableMetrics> {
    await this.latestRun(submissionId);
    const tableId = await this.tableOf(submissionId, tableFqn);
    const today = Date.parse(`${utcDay(this.clock.now())}T00:00:00Z`);
    const dayList = Array.from({ length: days }, (_, i) => utcDay(new Date(today - (days - 1 - i) * DAY_MS)));
    const from = dayList[0] as string;
    const to = dayList[dayList.length - 1] as string;
    const [rows, applied] = await Promise.all([
      this.db
        .select()
        .from(optimusTableDays)
        .where(
          and(
            eq(optimusTableDays.submissionId, submissionId),
            eq(optimusTableDays.tableId, tableId),
            gte(optimusTableDays.day, from),
            lte(optimusTableDays.day, to),
          ),
        ),
      this.db
        .select()
        .from(optimusRecommendations)
        .where(
          and(
            eq(optimusRecommendations.submissionId, submissionId),
            eq(optimusRecommendations.tableId, tableId),
            inArray(optimusRecommendations.status, ["applied", "reverted"]),
          ),
        ),
    ]);
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const end = today + DAY_MS;
    const start = today - (days - 1) * DAY_MS;
    const markers = applied
      .map((rec) => ({ rec, at: appliedRecord(rec) }))
      .filter(({ rec, at }) => {
        if (!at || at.applied_at >= end) return false;
        const reverted = rec.status === "reverted" ? (rec.statusChangedAt?.getTime() ?? 0) : null;
        return reverted === null || reverted >= start;
      })
      .sort((a, b) => (a.at?.applied_at ?? 0) - (b.at?.applied_at ?? 0))
      .map(({ rec }) => rec);
    return {
      tableFqn,
      tableId,
      from,
      to,
      days: dayList.map((day) => ({ day, row: byDay.get(day) })),
      markers,
    };
  }

  /** The Lakesmith table a name means in the submission's data: the one measured or recommended last. */
  private async tableOf(submissionId: string, tableFqn: string): Promise<string> {
    const [measured] = await this.db
      .select({ tableId: optimusTableDays.tableId })
      .from(optimusTableDays)
      .where(and(eq(optimusTableDays.submissionId, submissionId), eq(optimusTableDays.tableFqn, tableFqn)))
      .orderBy(desc(optimusTableDays.measuredAt))
      .limit(1);
    if (measured) return measured.tableId;
    const [recommended] = await this.db
      .select({ tableId: optimusRecommendations.tableId })
      .from(optimusRecommendations)
      .where(
        and(
          eq(optimusRecommendations.submissionId, submissionId),
          eq(optimusRecommendations.tableFqn, tableFqn),
        ),
      )
      .orderBy(desc(optimusRecommendations.createdAt))
      .limit(1);
    if (recommended) return recommended.tableId;
    throw new ApiError(
      404,
      `Submission '${submissionId}' has no recommendation or measured day of table '${tableFqn}'; GET /api/v1/optimus/runs/${submissionId}/tables lists its tables.`,
    );
  }
}
