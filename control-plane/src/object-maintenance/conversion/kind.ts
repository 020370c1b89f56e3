/**
 * The job kinds of a managed prefix's policy (`@lakesmith/shared/prefix-conversion`): routed to an
 * agent allowed both the source and the target prefix. A conversion and a removal of the same
 * prefix never run at once (one reads the manifest the other writes): they share an exclusivity
 * group whose scopes are both prefixes. A job of either that fails for good puts its prefix in
 * `error` (its `state_reason` the job's error) in the batch that ends it; enable clears it.
 * `prefix_hard_delete` is queued set-based by hard-delete (`pending-deletions/hard-delete.ts`).
 */
import {
  CONVERT_KIND,
  ConvertPayloadSchema,
  PREFIX_HARD_DELETE_KIND,
  PrefixHardDeletePayloadSchema,
  REMOVE_INPUTS_KIND,
  RemoveInputsPayloadSchema,
} from "@lakesmith/shared/prefix-conversion";
import { and, eq, type SQL } from "drizzle-orm";
import { prefixes } from "../../db/schema.ts";
import { defineJobKind, type FinishHook, type KindContext, prefixScope } from "../../jobs/kinds.ts";
import { hardDeleteFinished } from "../../pending-deletions/hard-delete.ts";
import { recordRemovedInputs } from "../../pending-deletions/record.ts";

const exclusive = {
  group: "prefix_conversion",
  grain: "prefix" as const,
  scopes: (p: { source_uri: string; target_uri: string }) => [
    prefixScope(p.source_uri),
    prefixScope(p.target_uri),
  ],
};

/** A failed-for-good job puts its prefix in error, naming the job and its error. */
const errorOnFailure: FinishHook = ({ db, clock }: KindContext, job, end, ended: SQL) => {
  if (end.status !== "failed") return [];
  const prefixId = (job.payload as { prefix_id?: string }).prefix_id ?? "";
  return [
    db
      .update(prefixes)
      .set({
        managementState: "error",
        stateReason: `${job.kind} job ${job.id} failed: ${(end.error ?? "no error given").slice(0, 500)}`,
        updatedAt: clock.now(),
      })
      .where(and(eq(prefixes.id, prefixId), eq(prefixes.managementState, "active"), ended)),
  ];
};

export const convertKind = defineJobKind({
  kind: CONVERT_KIND,
  label: "conversion",
  payload: ConvertPayloadSchema,
  needs: (p) => ({ locations: [p.source_uri, p.target_uri] }),
  exclusive,
  finish: errorOnFailure,
  retry: { maxAttempts: 3 },
});

export const removeInputsKind = defineJobKind({
  kind: REMOVE_INPUTS_KIND,
  label: "removal of converted inputs",
  payload: RemoveInputsPayloadSchema,
  needs: (p) => ({ locations: [p.source_uri, p.target_uri] }),
  exclusive,
  finish: (ctx, job, end, ended) => [
    ...recordRemovedInputs(ctx, job, end, ended),
    ...errorOnFailure(ctx, job, end, ended),
  ],
  retry: { maxAttempts: 3 },
});

/** Queued set-based by `pending-deletions/hard-delete.ts`, which writes what `needs` derives. */
export const prefixHardDeleteKind = defineJobKind({
  kind: PREFIX_HARD_DELETE_KIND,
  label: "hard-delete of converted inputs",
  payload: PrefixHardDeletePayloadSchema,
  needs: (p) => ({ locations: [p.source_uri] }),
  finish: hardDeleteFinished,
  retry: { maxAttempts: 3 },
});
