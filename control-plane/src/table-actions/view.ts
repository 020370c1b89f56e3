/** Actions and runs as the API shows them: views of one job row each (`schemas.ts` has the shapes). */
import type { z } from "@hono/zod-openapi";
import type { Job } from "../db/schema.ts";
import { iso } from "../jobs/view.ts";
import type { Action } from "../policies/actions.ts";
import { isHeld } from "./hold.ts";
import { actionOf } from "./kinds.ts";
import type { ActionSchema, RunSchema } from "./schemas.ts";
import { runStatusOf, runTriggerOf } from "./status.ts";

/** What an action and a run both show of their job. */
function common(job: Job, now: Date) {
  return {
    status: runStatusOf(job, now),
    lakesmith_table_id: job.tableId,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    error: job.error,
    result: job.result,
  };
}

export function actionView(job: Job, now: Date): z.infer<typeof ActionSchema> {
  const held = isHeld(job);
  return {
    action_id: job.id,
    action: actionOf(job) as Action,
    ...common(job, now),
    not_before: !held && job.status === "queued" && job.notBefore > now ? job.notBefore.toISOString() : null,
    waiting_for_onboarding: held,
    created_by: job.createdBy,
  };
}

export function runView(job: Job, now: Date): z.infer<typeof RunSchema> {
  return {
    run_id: job.id,
    kind: job.kind,
    action: actionOf(job) ?? null,
    trigger: runTriggerOf(job),
    job_trigger: job.trigger,
    ...common(job, now),
  };
}
