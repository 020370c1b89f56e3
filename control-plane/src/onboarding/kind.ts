/**
 * The `onboarding` job kind: an agent allowed to read the table inspects it and reports its recipe.
 * Its end moves the table (`onboarding/service.ts` states the table's states), in the batch that
 * ends the job; only the table's latest onboarding job can move it. A catalog-managed table's job
 * carries its catalog reference (`catalog`, with the client secret the job's end purges).
 */

import { ONBOARDING_KIND, OnboardingPayloadSchema, OnboardingRecipeSchema } from "@lakesmith/shared/jobs";
import { and, eq, inArray } from "drizzle-orm";
import { CATALOG_REF_SECRETS, catalogRefEndpoints } from "../catalog-connections/ref-needs.ts";
import { lakeTables } from "../db/schema.ts";
import { issueSummary } from "../http/problem.ts";
import { defineJobKind, type FinishHook } from "../jobs/kinds.ts";

const finish: FinishHook = ({ db, clock }, job, end, ended) => {
  if (!job.tableId) return [];
  const now = clock.now();
  const mine = and(
    eq(lakeTables.id, job.tableId),
    eq(lakeTables.onboardingJobId, job.id),
    inArray(lakeTables.onboardingStatus, ["pending", "retry"]),
    ended,
  );
  const fail = (reason: string) =>
    db
      .update(lakeTables)
      .set({ onboardingStatus: "failed", onboardingError: reason, updatedAt: now })
      .where(mine);
  if (end.status === "succeeded") {
    const recipe = OnboardingRecipeSchema.safeParse(end.result);
    if (!recipe.success)
      return [
        fail(`the agent reported a result that is not a recipe (${issueSummary(recipe.error, "(result)")})`),
      ];
    return [
      db
        .update(lakeTables)
        .set({
          onboardingStatus: "active",
          onboardingError: null,
          recipe: recipe.data,
          onboardedAt: now,
          updatedAt: now,
        })
        .where(mine),
    ];
  }
  if (end.status === "cancelled")
    return [
      fail(end.error ? `the onboarding job was cancelled: ${end.error}` : "the onboarding job was cancelled"),
    ];
  return [fail(end.error ?? "the onboarding job failed without a reason")];
};

export const onboardingKind = defineJobKind({
  kind: ONBOARDING_KIND,
  label: "onboarding",
  payload: OnboardingPayloadSchema,
  // A catalog-managed table is read through its catalog too: the agent must be allowed both.
  needs: (payload) => ({ locations: [payload.uri], endpoints: catalogRefEndpoints(payload.catalog) }),
  finish,
  secrets: CATALOG_REF_SECRETS,
  retry: { maxAttempts: 3 },
});
