/**
 * The `layout_scoring` job kind (`@lakesmith/shared/optimus`): one table's workload of a run replayed
 * against candidate layouts on a sample of the table. A table job like any other: routed to an
 * agent allowed the table's location (and its catalog's endpoints: a linked table's payload carries
 * its catalog reference, whose secrets no job view shows and the job's end purges). Queued by a
 * succeeded run (`scoring-queue.ts`).
 *
 * Rules:
 * - Two scorings of one table never run together (group `layout_scoring`, the table's scope); a
 *   scoring only reads, so it neither waits for nor blocks a crunch (group `rewrite`).
 * - The finish hook of a succeeded scoring whose result parses records, in the batch that ends it:
 *   the per-day rows of the table (`optimus_table_days`, one per submission, table and day; a
 *   measurement replaces the stored one of its day when it was taken at the same time or later),
 *   each with the expected skip of the table's newest open-or-applied recommendation of the
 *   submission standing before this one; then, when the result recommends a layout, one
 *   recommendation (`status` open; one per scoring job, however often the finish runs). Older open
 *   recommendations stay as they are: the API shows the latest run's.
 * - A result that does not parse fails nothing but records nothing, and is logged. A failed or
 *   cancelled scoring records nothing; neither does one whose submission was deleted meanwhile.
 */
import { newId } from "@lakesmith/shared";
import {
  LAYOUT_SCORING_KIND,
  type LayoutScoringPayload,
  LayoutScoringPayloadSchema,
  type LayoutScoringResult,
  LayoutScoringResultSchema,
} from "@lakesmith/shared/optimus";
import { and, eq, type SQL, sql } from "drizzle-orm";
import { CATALOG_REF_SECRETS, catalogRefEndpoints } from "../catalog-connections/ref-needs.ts";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import {
  jobs,
  type OptimusEvidence,
  optimusRecommendations,
  optimusSubmissions,
  optimusTableDays,
} from "../db/schema.ts";
import { issueSummary } from "../http/problem.ts";
import { type BatchItem, defineJobKind, type FinishHook, tableScope } from "../jobs/kinds.ts";
import { SCORING_ATTEMPTS } from "./scoring-queue.ts";

/** The most filter sets a recommendation's evidence keeps: the workload's largest by bytes scanned. */
export const EVIDENCE_FILTER_SETS = 20;

const record: FinishHook = ({ db, clock }, job, end, ended) => {
  if (end.status !== "succeeded") return [];
  const payload = LayoutScoringPayloadSchema.safeParse(job.payload);
  if (!payload.success) return [];
  const result = LayoutScoringResultSchema.safeParse(end.result);
  if (!result.success) {
    console.warn(
      `[lakesmith] optimus: layout scoring ${job.id} succeeded with a result that does not parse (${issueSummary(result.error, "result", 3)}); nothing recorded`,
    );
    return [];
  }
  const measured = Date.parse(result.data.measured_at);
  const measuredAt = Number.isNaN(measured) ? clock.now().getTime() : measured;
  const guard = and(
    ended,
    sql`exists (select 1 from ${optimusSubmissions} where ${optimusSubmissions.id} = ${payload.data.submission_id})`,
  ) as SQL;
  const rec = result.data.recommendation;
  return [
    dayRows(db, job.id, payload.data, result.data, measuredAt, guard),
    ...(rec ? [recommendation(db, job.id, payload.data, result.data, clock.now().getTime(), guard)] : []),
  ];
};

/** The result's per-day rows, upserted; the newest measurement of a day wins. */
function dayRows(
  db: Db,
  jobId: string,
  payload: LayoutScoringPayload,
  result: LayoutScoringResult,
  measuredAt: number,
  guard: SQL,
): BatchItem {
  const f = (key: string) => sql`json_extract(d.value, ${`$.${key}`})`;
  const predicted = sql`(select r.expected_skip_fraction from ${optimusRecommendations} r
      where r.submission_id = ${payload.submission_id} and r.table_id = ${payload.table_id}
        and r.status in ('open', 'applied') and r.scoring_job_id != ${jobId}
      order by r.created_at desc, r.id desc limit 1)`;
  return insertSelect(
    db,
    optimusTableDays,
    {
      submissionId: sql`${payload.submission_id}`,
      tableId: sql`${payload.table_id}`,
      day: f("day"),
      tableFqn: sql`${payload.table_fqn}`,
      queries: f("queries"),
      bytesScanned: f("bytes_scanned"),
      measuredSkipFraction: f("measured_skip_fraction"),
      predictedSkipFraction: predicted,
      runId: sql`${payload.run_id}`,
      measuredAt: sql`${measuredAt}`,
    },
    sql`from json_each(${JSON.stringify(result.days)}) d where ${guard}`,
  ).onConflictDoUpdate({
    target: [optimusTableDays.submissionId, optimusTableDays.tableId, optimusTableDays.day],
    set: {
      tableFqn: sql`excluded.table_fqn`,
      queries: sql`excluded.queries`,
      bytesScanned: sql`excluded.bytes_scanned`,
      measuredSkipFraction: sql`excluded.measured_skip_fraction`,
      predictedSkipFraction: sql`excluded.predicted_skip_fraction`,
      runId: sql`excluded.run_id`,
      measuredAt: sql`excluded.measured_at`,
    },
    setWhere: sql`excluded.measured_at >= ${optimusTableDays.measuredAt}`,
  });
}

/** The result's recommendation, inserted once per scoring job. */
function recommendation(
  db: Db,
  jobId: string,
  payload: LayoutScoringPayload,
  result: LayoutScoringResult,
  recordedAt: number,
  guard: SQL,
): BatchItem {
  const rec = result.recommendation as NonNullable<LayoutScoringResult["recommendation"]>;
  const evidence: OptimusEvidence = {
    candidates: result.candidates,
    sample_rows: result.sample_rows,
    pseudo_files: result.pseudo_files,
    method: result.method,
    table_version: result.table_version,
    filter_sets: [...payload.filter_sets]
      .sort((a, b) => b.bytes_scanned - a.bytes_scanned || b.queries - a.queries)
      .slice(0, EVIDENCE_FILTER_SETS),
  };
  const json = (value: unknown) => sql`${value === null ? null : JSON.stringify(value)}`;
  return insertSelect(
    db,
    optimusRecommendations,
    {
      id: sql`${newId("orec")}`,
      submissionId: sql`${payload.submission_id}`,
      runId: sql`${payload.run_id}`,
      scoringJobId: sql`${jobId}`,
      tableId: sql`${payload.table_id}`,
      tableFqn: sql`${payload.table_fqn}`,
      layout: json(rec.layout),
      currentLayout: json(result.current.layout ?? payload.current_layout),
      expectedSkipFraction: sql`${rec.expected_skip_fraction}`,
      currentSkipFraction: sql`${result.current.predicted_skip_fraction}`,
      measuredSkipFraction: sql`${result.current.measured_skip_fraction}`,
      bytesSavedPerDay: sql`${rec.bytes_saved_per_day}`,
      rewriteBytes: sql`${rec.rewrite_bytes}`,
      reason: sql`${rec.reason}`,
      evidence: json(evidence),
      status: sql`'open'`,
      statusChangedAt: sql`null`,
      statusChangedBy: sql`null`,
      appliedPolicyId: sql`null`,
      previousPolicy: sql`null`,
      createdAt: sql`${recordedAt}`,
    },
    sql`from ${jobs} where ${eq(jobs.id, jobId)} and ${guard}`,
  ).onConflictDoNothing({ target: optimusRecommendations.scoringJobId });
}

export const layoutScoringKind = defineJobKind({
  kind: LAYOUT_SCORING_KIND,
  label: "layout scoring",
  payload: LayoutScoringPayloadSchema,
  needs: (payload) => ({ locations: [payload.uri], endpoints: catalogRefEndpoints(payload.catalog) }),
  secrets: CATALOG_REF_SECRETS,
  exclusive: {
    group: LAYOUT_SCORING_KIND,
    grain: "table",
    scopes: (payload) => [tableScope(payload.table_id)],
  },
  finish: record,
  retry: { maxAttempts: SCORING_ATTEMPTS },
});
