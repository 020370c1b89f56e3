/**
 * A submission's effective status, derived at read time from its `active` flag and its latest run's
 * job (so it can never disagree with the job):
 *
 * - `paused`: `active` is false (the schedule never fires it; a run already queued goes on);
 * - `running`: its latest run's job is queued, offered, running or cancelling;
 * - `pending`: it has never run (created paused, then resumed: an active create queues its first run);
 * - `succeeded` / `failed`: how its latest run ended (a cancelled run counts as failed).
 *
 * Retry moves `failed` to a new run, so to `running`.
 */
import type { JobStatus } from "../db/schema.ts";
import { ACTIVE_STATUSES } from "../jobs/state.ts";

export const SUBMISSION_STATUSES = ["pending", "running", "succeeded", "failed", "paused"] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** A run's status as the API names it, from its job's. */
export function runStatus(job: JobStatus): "running" | "succeeded" | "failed" {
  if (ACTIVE_STATUSES.includes(job)) return "running";
  return job === "succeeded" ? "succeeded" : "failed";
}

export function effectiveStatus(active: boolean, latestJob: JobStatus | null): SubmissionStatus {
  if (!active) return "paused";
  return latestJob === null ? "pending" : runStatus(latestJob);
}
