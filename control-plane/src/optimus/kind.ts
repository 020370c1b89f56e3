/**
 * The `query_log_analysis` job kind (`@lakesmith/shared/optimus`): one run of an Optimus submission,
 * routed to an agent allowed the submission's query-log location. Until an agent announces the kind
 * its jobs stay queued, as any job of a kind no agent runs.
 *
 * Rules: a submission's runs never run beside each other (exclusivity on the submission, so sync-now
 * and retry answer 409 while one is active); the finish hook records how the run ended on its
 * submission (`last_run_status`, `last_run_error`, `last_run_finished_at`) in the batch that ends the
 * job, cancelled counting as failed; a submission deleted meanwhile records nothing.
 *
 * Its parts are the tables' workloads (`OptimusWorkloadPart`, one per table the run mapped scans
 * to): each is stored as it arrives (`optimus_workloads`, one row per run and table), guarded by
 * `fresh`, so a part sent again is stored once; a later attempt's part of the same table replaces
 * the earlier attempt's. A part that does not parse, or names a table the run was not given, is
 * refused with the reason. A succeeded run's finish queues one `layout_scoring` job per stored
 * workload, in the same batch (`scoring-queue.ts`); a failed or cancelled run queues none.
 */
import {
  OptimusWorkloadPartSchema,
  QUERY_LOG_ANALYSIS_KIND,
  QueryLogAnalysisPayloadSchema,
} from "@lakesmith/shared/optimus";
import { and, eq, sql } from "drizzle-orm";
import { insertSelect } from "../db/insert-select.ts";
import { optimusSubmissions, optimusWorkloads } from "../db/schema.ts";
import { issueSummary } from "../http/problem.ts";
import { defineJobKind, type FinishHook, type PartHook } from "../jobs/kinds.ts";
import { queueScoringJobs } from "./scoring-queue.ts";

/** The exclusivity scope of a submission's runs. */
export const submissionScope = (submissionId: string) => `optimus:${submissionId}/`;

const record: FinishHook = ({ db, clock }, job, end, ended) => {
  const parsed = QueryLogAnalysisPayloadSchema.safeParse(job.payload);
  if (!parsed.success) return [];
  const succeeded = end.status === "succeeded";
  return [
    ...(succeeded ? [queueScoringJobs(db, job.id, clock.now(), ended)] : []),
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

const store: PartHook = async ({ db, clock }, job, part, fresh) => {
  const parsed = OptimusWorkloadPartSchema.safeParse(part);
  if (!parsed.success) return { invalid: `not a table workload: ${issueSummary(parsed.error, "part", 3)}` };
  const workload = parsed.data;
  const payload = QueryLogAnalysisPayloadSchema.safeParse(job.payload);
  if (!payload.success) return { invalid: "the job's payload is not a query log analysis" };
  if (!payload.data.tables.some((t) => t.table_id === workload.table_id))
    return { invalid: `table_id '${workload.table_id}' is not one of the run's tables` };
  return {
    statements: [
      insertSelect(
        db,
        optimusWorkloads,
        {
          runId: sql`${job.id}`,
          tableId: sql`${workload.table_id}`,
          submissionId: sql`${payload.data.submission_id}`,
          tableFqn: sql`${workload.table_fqn}`,
          queries: sql`${workload.queries}`,
          bytesScanned: sql`${workload.bytes_scanned}`,
          filterSets: sql`${JSON.stringify(workload.filter_sets)}`,
          other: sql`${JSON.stringify(workload.other)}`,
          createdAt: sql`${clock.now().getTime()}`,
        },
        sql`where ${fresh}`,
      ).onConflictDoUpdate({
        target: [optimusWorkloads.runId, optimusWorkloads.tableId],
        set: {
          tableFqn: sql`excluded.table_fqn`,
          queries: sql`excluded.queries`,
          bytesScanned: sql`excluded.bytes_scanned`,
          filterSets: sql`excluded.filter_sets`,
          other: sql`excluded.other`,
          createdAt: sql`excluded.created_at`,
        },
      }),
    ],
  };
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
  part: store,
  finish: record,
  retry: { maxAttempts: 2 },
});
