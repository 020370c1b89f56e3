/** Submissions, runs, recommendations, tables and metrics as the API shows them (`schemas.ts`). */
import type { z } from "@hono/zod-openapi";
import { utcDay } from "@lakesmith/shared/optimus";
import type { OptimusRecommendation } from "../db/schema.ts";
import { appliedRecord } from "./applied.ts";
import type { Applied, Reverted } from "./apply.ts";
import type { TableMetrics, TableSummary } from "./recommendations.ts";
import type {
  RecommendationAppliedSchema,
  RecommendationRevertedSchema,
  RecommendationSchema,
  RunSchema,
  TableMetricsSchema,
  TableSummarySchema,
} from "./schemas.ts";
import type { RunWithJob, SubmissionWithStatus } from "./service.ts";
import { runStatus } from "./status.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function submissionView({ submission: s, status }: SubmissionWithStatus) {
  return {
    id: s.id,
    name: s.name,
    engine: s.engine,
    lookback_days: s.lookbackDays,
    daily_sync_time_utc: s.dailySyncTimeUtc,
    query_logs_uri: s.queryLogsUri,
    active: s.active,
    status,
    last_run_status: s.lastRunStatus,
    last_run_error: s.lastRunError,
    last_run_finished_at: iso(s.lastRunFinishedAt),
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function runView({ run, job }: RunWithJob): z.infer<typeof RunSchema> {
  return {
    job_id: run.jobId,
    trigger: run.trigger,
    status: runStatus(job.status),
    job_status: job.status,
    window_start: run.windowStart,
    window_end: run.windowEnd,
    error: job.error,
    created_at: run.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
  };
}

export function submissionDetailView(submission: SubmissionWithStatus, runs: RunWithJob[]) {
  const latest = runs[0];
  return {
    ...submissionView(submission),
    latest_run: latest ? { ...runView(latest), result: latest.job.result ?? null } : null,
    runs: runs.map(runView),
  };
}

/** A recommendation as the API shows it (`RecommendationSchema`). */
export function recommendationView(rec: OptimusRecommendation): z.infer<typeof RecommendationSchema> {
  const { filter_sets: filterSets, ...evidence } = rec.evidence;
  const applied = appliedRecord(rec);
  return {
    id: rec.id,
    submission_id: rec.submissionId,
    run_id: rec.runId,
    table_fqn: rec.tableFqn,
    table_id: rec.tableId,
    layout: rec.layout,
    current_layout: rec.currentLayout ?? null,
    expected_skip_fraction: rec.expectedSkipFraction,
    current_skip_fraction: rec.currentSkipFraction,
    measured_skip_fraction: rec.measuredSkipFraction,
    bytes_saved_per_day: rec.bytesSavedPerDay,
    rewrite_bytes: rec.rewriteBytes,
    reason: rec.reason,
    queries: filterSets.map((f) => ({
      predicates: f.predicates,
      columns: f.columns,
      queries: f.queries,
      bytes_scanned: f.bytes_scanned,
      examples: f.examples,
    })),
    evidence: {
      candidates: evidence.candidates,
      sample_rows: evidence.sample_rows,
      pseudo_files: evidence.pseudo_files,
      method: evidence.method,
      table_version: evidence.table_version,
    },
    status: rec.status,
    status_changed_at: iso(rec.statusChangedAt),
    status_changed_by: rec.statusChangedBy,
    applied_at: applied ? new Date(applied.applied_at).toISOString() : null,
    applied_policy_id: rec.appliedPolicyId,
    created_at: rec.createdAt.toISOString(),
  };
}

export function tableSummaryView(t: TableSummary): z.infer<typeof TableSummarySchema> {
  return {
    table_fqn: t.tableFqn,
    table_id: t.tableId,
    recommendations: t.recommendations,
    open: t.open,
    applied: t.applied,
    best_expected_skip_fraction: t.bestExpectedSkip,
    bytes_saved_per_day: t.bytesSavedPerDay,
    queries: t.queries,
    bytes_scanned: t.bytesScanned,
  };
}

export function tableMetricsView(submissionId: string, m: TableMetrics): z.infer<typeof TableMetricsSchema> {
  return {
    submission_id: submissionId,
    table_fqn: m.tableFqn,
    table_id: m.tableId,
    from: m.from,
    to: m.to,
    days: m.days.map(({ day, row }) => ({
      day,
      queries: row?.queries ?? null,
      bytes_scanned: row?.bytesScanned ?? null,
      measured_skip_fraction: row?.measuredSkipFraction ?? null,
      predicted_skip_fraction: row?.predictedSkipFraction ?? null,
      run_id: row?.runId ?? null,
    })),
    markers: m.markers.flatMap((rec) => {
      const applied = appliedRecord(rec);
      if (!applied) return [];
      const at = new Date(applied.applied_at);
      return [
        {
          recommendation_id: rec.id,
          layout: rec.layout,
          applied_at: at.toISOString(),
          applied_day: utcDay(at),
          applied_by: applied.applied_by,
          reverted_at: rec.status === "reverted" ? iso(rec.statusChangedAt) : null,
        },
      ];
    }),
  };
}

export function appliedView(a: Applied): z.infer<typeof RecommendationAppliedSchema> {
  return {
    recommendation: recommendationView(a.recommendation),
    policy: {
      policy_id: a.policy.policyId,
      catalog_id: a.policy.catalogId,
      table_id: a.policy.tableId,
      created: a.policy.created,
      version: a.policy.version,
    },
    run_now: a.runNow ? { job_id: a.runNow.jobId, error: a.runNow.error } : null,
  };
}

export function revertedView(r: Reverted): z.infer<typeof RecommendationRevertedSchema> {
  return {
    recommendation: recommendationView(r.recommendation),
    policy_change: r.policyChange,
    detail: r.detail,
  };
}
