/**
 * Onboarding (document 1): `GET /api/v1/onboarding/{table_id}/status` and
 * `POST /api/v1/onboarding/{table_id}/retry`. API keys need `tables:read` or `tables:write`.
 */
import { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { JOB_STATUSES, ONBOARDING_STATUSES } from "../db/schema.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import { RecipeSchema } from "../tables/schemas.ts";
import type { OnboardingState } from "./service.ts";

const OnboardingStatusSchema = z
  .object({
    table_id: z.string(),
    table_name: z.string(),
    status: z.enum(ONBOARDING_STATUSES).openapi({
      description:
        "pending → active or failed; failed → retry (POST .../retry) → active or failed. active is final.",
    }),
    error: z
      .string()
      .nullable()
      .openapi({
        description:
          "failed: why onboarding failed. pending or retry: why the job's latest attempt did not finish (it failed, its lease lapsed, an agent refused it) while the job is tried again " +
          "(`next_attempt_at` says when; `attempt` of `max_attempts` used), so a failing table does not look merely slow. " +
          "null when nothing failed, and once active.",
      }),
    recipe: RecipeSchema.nullable(),
    job_id: z
      .string()
      .nullable()
      .openapi({ description: "The latest onboarding job (see GET /api/v1/jobs/{job_id})." }),
    job_status: z.enum(JOB_STATUSES).nullable(),
    attempt: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Attempts the latest job has used; a retryable failure is tried again." }),
    max_attempts: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Attempts the latest job may use before onboarding fails." }),
    next_attempt_at: z
      .string()
      .nullable()
      .openapi({
        description:
          "When the job is tried again after a failed attempt (retry backoff); null unless it waits to retry. " +
          "A failure that another attempt can't fix (for example no Delta log at the table's URI) is not retried: the table is failed at once.",
      }),
    onboarded_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .openapi("OnboardingStatus");

const tags = ["onboarding"];

const status = defineRoute({
  method: "get",
  path: "/api/v1/onboarding/{table_id}/status",
  tags,
  summary: "Onboarding status of a table",
  access: access.read("tables"),
  request: { params: TableIdParam },
  responses: {
    200: jsonResponse("The status and what onboarding found.", OnboardingStatusSchema),
    404: problemResponse("No such table."),
  },
});

const retry = defineRoute({
  method: "post",
  path: "/api/v1/onboarding/{table_id}/retry",
  tags,
  summary: "Retry failed onboarding",
  description:
    "Only from `failed`: sets the status to `retry` and queues a new onboarding job. Any other status is a 409 whose detail names it.",
  access: access.write("tables"),
  request: { params: TableIdParam },
  responses: {
    200: jsonResponse("Status `retry`; the new job is queued.", OnboardingStatusSchema),
    404: problemResponse("No such table."),
    409: problemResponse("Onboarding is not failed; the detail names the current status."),
  },
});

function toWire({ table, job, retrying }: OnboardingState): z.infer<typeof OnboardingStatusSchema> {
  return {
    table_id: table.id,
    table_name: table.name,
    status: table.onboardingStatus,
    error: table.onboardingError ?? retrying?.error ?? null,
    recipe: table.recipe ?? null,
    job_id: table.onboardingJobId,
    job_status: job?.status ?? null,
    attempt: job?.attempt ?? null,
    max_attempts: job?.maxAttempts ?? null,
    next_attempt_at: retrying?.nextAttemptAt?.toISOString() ?? null,
    onboarded_at: table.onboardedAt?.toISOString() ?? null,
    updated_at: table.updatedAt?.toISOString() ?? null,
  };
}

export const onboardingRoutes = newRouter()
  .openapi(status, async (c) =>
    c.json(toWire(await c.var.services.onboarding.status(c.req.valid("param").table_id)), 200),
  )
  .openapi(retry, async (c) => {
    const state = await c.var.services.onboarding.retry(
      c.req.valid("param").table_id,
      principalId(c.var.principal),
    );
    return c.json(toWire(state), 200);
  });
