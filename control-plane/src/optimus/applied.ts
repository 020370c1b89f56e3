/**
 * What an apply records on its recommendation (`previous_policy`), read back by revert and by the
 * metrics' markers: whether the apply created the table's own policy, the `improve_layout` it
 * replaced (for a created policy, the inherited one's, so a restore gives the table what it ran
 * before), the policy version the apply left (a revert deletes a created policy only while it still
 * has that version), and when and by whom it was applied (`status_changed_at` moves on at revert).
 */
import type { Layout } from "@lakesmith/shared/jobs";
import { z } from "zod";
import type { OptimusPreviousPolicy, OptimusRecommendation } from "../db/schema.ts";

export type AppliedRecord = OptimusPreviousPolicy & {
  improve_layout: { layout: Layout; schedule?: unknown } | null;
  policy_version: number;
  applied_at: number;
  applied_by: string | null;
};

const AppliedRecordSchema = z
  .object({
    created: z.boolean(),
    improve_layout: z.object({ layout: z.unknown() }).passthrough().nullable(),
    policy_version: z.number().int(),
    applied_at: z.number(),
    applied_by: z.string().nullable(),
  })
  .passthrough();

/** The apply's record of a recommendation; undefined before an apply finished writing it. */
export function appliedRecord(rec: OptimusRecommendation): AppliedRecord | undefined {
  const parsed = AppliedRecordSchema.safeParse(rec.previousPolicy);
  return parsed.success ? (parsed.data as AppliedRecord) : undefined;
}

/** The same layout: same kind, same columns in the same order. */
export function sameLayout(a: Layout | undefined, b: Layout | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.type === b.type &&
    a.columns.join("\u0000") === b.columns.join("\u0000")
  );
}
