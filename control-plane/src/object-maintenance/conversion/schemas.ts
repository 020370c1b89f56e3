/**
 * Wire shapes of a managed prefix's actions and runs (document 1 leaves ActionRequest and the
 * records' fields to us: defined here and in the OpenAPI description).
 */
import { z } from "@hono/zod-openapi";
import { JOB_STATUSES, PREFIX_ACTIONS, PREFIX_RUN_TRIGGERS } from "../../db/schema.ts";
import { pageQuery } from "../../http/pagination.ts";

export const RUN_PAGE_MAX = 500;

const ACTION_DESCRIPTION =
  "convert: convert the prefix's JSON inputs not converted yet (and older than the location's skip age) to Parquet under the policy's `convert.target_prefix`. " +
  "remove_inputs: propose the inputs converted at least `remove_inputs.retention_days` ago as pending deletions of the prefix (recoverable until hard-deleted). " +
  "Each runs with the active policy version's settings; the step must be in the policy (its `enabled` flag governs the schedule only).";

export const ActionRequestSchema = z
  .strictObject({
    action: z.enum(PREFIX_ACTIONS).openapi({ description: ACTION_DESCRIPTION, example: "convert" }),
  })
  .openapi("ActionRequest", { description: "An ad-hoc run of one step of the prefix's policy, now." });

const jobFields = {
  job_id: z.string().openapi({ description: "The agent job; GET /api/v1/jobs/{job_id} has its details." }),
  prefix_id: z.string(),
  action: z.enum(PREFIX_ACTIONS),
  status: z.enum(JOB_STATUSES).openapi({
    description:
      "The job's status: queued, offered, running, cancelling, then succeeded, failed (for good: the prefix is put in error) or cancelled.",
  }),
  policy_version: z.number().int().nullable().openapi({ description: "The policy version it ran with." }),
  requested_by: z.string().nullable(),
  created_at: z.string(),
};

export const PrefixActionSchema = z.object(jobFields).openapi("PrefixAction");

export const RunMetricsSchema = z
  .object({
    files_in: z.number().int().optional(),
    files_out: z.number().int().optional(),
    bytes_before: z.number().int().optional(),
    bytes_after: z.number().int().optional(),
    drr: z.number().nullable().optional(),
    rows: z.number().int().optional(),
    pending_deletions_recorded: z.number().int().optional(),
  })
  .catchall(z.unknown())
  .openapi("PrefixRunMetrics", {
    description:
      "The job's result once it succeeded, counts only. A conversion: files_in and files_out, bytes_before (JSON) and bytes_after (Parquet), drr (bytes_before / bytes_after), rows, and the inputs it left (inputs_converted_before, inputs_too_young, inputs_deferred, inputs_changed_since). " +
      "A removal: pending_deletions_recorded, within_retention, absent.",
  });

export const PrefixRunSchema = z
  .object({
    ...jobFields,
    trigger: z
      .enum(PREFIX_RUN_TRIGGERS)
      .openapi({ description: "schedule: the policy's convert schedule; action: an ad-hoc ActionRequest." }),
    attempt: z.number().int(),
    error: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    metrics: RunMetricsSchema.nullable(),
  })
  .openapi("PrefixRun");

export const RunListQuery = pageQuery(50, RUN_PAGE_MAX);
