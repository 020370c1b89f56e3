/** A prefix's runs and actions as the API shows them (`schemas.ts`). */
import type { Job, PrefixRun } from "../../db/schema.ts";
import { iso } from "../../jobs/view.ts";

export function prefixActionView({ run, job }: { run: PrefixRun; job: Job | null }) {
  return {
    job_id: run.jobId,
    prefix_id: run.prefixId,
    action: run.action,
    status: job?.status ?? "cancelled",
    policy_version: run.policyVersion,
    requested_by: run.requestedBy,
    created_at: run.createdAt.toISOString(),
  };
}

export function prefixRunView(row: { run: PrefixRun; job: Job | null }) {
  const { run, job } = row;
  return {
    ...prefixActionView(row),
    trigger: run.trigger,
    attempt: job?.attempt ?? 0,
    error: job?.error ?? null,
    started_at: iso(job?.startedAt ?? null),
    finished_at: iso(job?.finishedAt ?? null),
    metrics: job?.status === "succeeded" && job.result ? (job.result as Record<string, unknown>) : null,
  };
}
