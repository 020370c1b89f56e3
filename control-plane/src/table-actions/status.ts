/**
 * The status and trigger values of document 2's actions and runs, read from the job row they view
 * (document 2 leaves both to us):
 *
 * | status      | job                                                                         |
 * | ----------- | --------------------------------------------------------------------------- |
 * | `SCHEDULED` | queued, never attempted, not offered before a later time (`schedule.at`, or held for the table's onboarding) |
 * | `QUEUED`    | queued (or retrying after a failed attempt) or offered: waiting for an agent |
 * | `RUNNING`   | running, or cancelling (an agent still holds it)                            |
 * | `SUCCEEDED` | succeeded                                                                   |
 * | `FAILED`    | failed (attempts used up, or a failure the agent called permanent)          |
 * | `CANCELLED` | cancelled                                                                   |
 *
 * Trigger: `POLICY` for jobs the policy engine (`trigger` `policy`) or a document-1 schedule
 * (`schedule`) queued; `ACTION` for every other (actions, manual triggers, onboarding, recovers).
 * SCHEDULED and QUEUED depend on the time of the read, so their filters take `now`.
 */
import { and, eq, gt, inArray, not, type SQL, sql } from "drizzle-orm";
import { type Job, jobs } from "../db/schema.ts";

export const RUN_STATUSES = ["SCHEDULED", "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_TRIGGERS = ["POLICY", "ACTION"] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** The `jobs.trigger` values a POLICY run has. */
const POLICY_TRIGGERS = ["policy", "schedule"];

export const STATUS_DESCRIPTION =
  "SCHEDULED: queued and not offered before a later time (`not_before`: an action's `schedule.at`, or held until the table's onboarding ends); " +
  "QUEUED: waiting for an agent (queued, offered, or queued again after a failed attempt); RUNNING: an agent holds it (running or being cancelled); " +
  "SUCCEEDED, FAILED, CANCELLED: ended. The job's own status is in `job.status`.";

export const TRIGGER_DESCRIPTION =
  "POLICY: queued by the policy engine or a table schedule (the job's trigger `policy` or `schedule`); ACTION: everything else (actions of this API, manual triggers of document 1, onboarding).";

/** The run status of `job` at `now`. */
export function runStatusOf(job: Job, now: Date): RunStatus {
  switch (job.status) {
    case "queued":
      return job.attempt === 0 && job.notBefore > now ? "SCHEDULED" : "QUEUED";
    case "offered":
      return "QUEUED";
    case "running":
    case "cancelling":
      return "RUNNING";
    case "succeeded":
      return "SUCCEEDED";
    case "failed":
      return "FAILED";
    case "cancelled":
      return "CANCELLED";
  }
}

export function runTriggerOf(job: Job): RunTrigger {
  return POLICY_TRIGGERS.includes(job.trigger) ? "POLICY" : "ACTION";
}

/** The jobs whose run status at `now` is `status`. */
export function runStatusIs(status: RunStatus, now: Date): SQL | undefined {
  const scheduled = and(eq(jobs.status, "queued"), eq(jobs.attempt, 0), gt(jobs.notBefore, now));
  switch (status) {
    case "SCHEDULED":
      return scheduled;
    case "QUEUED":
      return and(inArray(jobs.status, ["queued", "offered"]), not(scheduled ?? sql`0`));
    case "RUNNING":
      return inArray(jobs.status, ["running", "cancelling"]);
    case "SUCCEEDED":
      return eq(jobs.status, "succeeded");
    case "FAILED":
      return eq(jobs.status, "failed");
    case "CANCELLED":
      return eq(jobs.status, "cancelled");
  }
}

/** The jobs with run trigger `trigger`. */
export function runTriggerIs(trigger: RunTrigger): SQL | undefined {
  return trigger === "POLICY"
    ? inArray(jobs.trigger, POLICY_TRIGGERS)
    : not(inArray(jobs.trigger, POLICY_TRIGGERS));
}
