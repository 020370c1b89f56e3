/**
 * The `query_log_analysis` job kind (`@lakesmith/shared/optimus`): one run of an Optimus submission,
 * routed to an agent allowed the submission's query-log location. Until an agent announces the kind
 * its jobs stay queued, as any job of a kind no agent runs.
 *
 * Rules: a submission's runs never run beside each other (exclusivity on the submission, so sync-now
 * and retry answer 409 while one is active); the finish hook records how the run ended on its
 * submission (`last_run_status`, `last_run_error`, `last_run_finished_at`) in the batch that ends the
 * job, cancelled counting as failed; a submission deleted meanwhile records nothing.
 */
import { QUERY_LOG_ANALYSIS_KIND, QueryLogAnalysisPayloadSchema } from "@lakesmith/shared/optimus";
import { and, eq } from "drizzle-orm";
import { optimusSubmissions } from "../db/schema.ts";
import { defineJobKind, type FinishHook } from "../jobs/kinds.ts";

/** The exclusivity scope of a submission's runs. */
export const submissionScope = (submissionId: string) => `optimus:${submissionId}/`;

const record: FinishHook = ({ db, clock }, job, end, ended) => {
  const parsed = QueryLogAnalysisPayloadSchema.safeParse(job.payload);
  if (!parsed.success) return [];
  const succeeded = end.status === "succeeded";
  return [
    db
      .update(optimusSubmissions)
      .set({
        lastRunStatus: succeeded ? "succeeded" : "failed",
        lastRunError: succeeded ? null : (end.error ?? (end.status === "cancelled" ? "cancelled" : "failed")),
        lastRunFinishedAt: clock.now(),
      })
      .where(and(eq(optimusSubmissions.id, parsed.data.submission_id), ended)),
  ];
};

export const queryLogAnalysisKind = defineJobKind({
  kind: QUERY_LOG_ANALYSIS_KIND,
  label: "query log analysis",
  payload: QueryLogAnalysisPayloadSchema,
  needs: (payload) => ({ locations: [payload.query_logs_uri] }),
  exclusive: {
    group: QUERY_LOG_ANALYSIS_KIND,
    // No grain names a submission; the grain matters only to table schedules (`scheduler/fire.ts`),
    // which never queue this kind, so the scope alone decides.
    grain: "connection",
    scopes: (payload) => [submissionScope(payload.submission_id)],
  },
  finish: record,
  retry: { maxAttempts: 2 },
});
