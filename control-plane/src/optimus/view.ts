/** Submissions and runs as the API shows them (`schemas.ts`). */
import type { z } from "@hono/zod-openapi";
import type { RunSchema } from "./schemas.ts";
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
