/**
 * The job kinds of pending deletions: `recover` commits expired files back into their table (or
 * moves a Hive partition back to its old folder), and
 * `hard_delete` deletes the files of claimed records. Their finish hooks move the records in the
 * batch that ends the job (`service.ts`, `hard-delete.ts` state the record's states).
 */
import {
  HARD_DELETE_KIND,
  HardDeletePayloadSchema,
  RECOVER_KIND,
  RecoverPayloadSchema,
} from "@lakesmith/shared/maintenance";
import { CATALOG_REF_SECRETS, catalogRefEndpoints } from "../catalog-connections/ref-needs.ts";
import { defineJobKind } from "../jobs/kinds.ts";
import { countHardDeleted } from "../savings/rollup.ts";
import { hardDeleteFinished } from "./hard-delete.ts";
import { recoverFinished } from "./service.ts";

export const recoverKind = defineJobKind({
  kind: RECOVER_KIND,
  label: "recover",
  payload: RecoverPayloadSchema,
  // A Hive table's recover moves folders back in its metastore: an endpoint, and a secret.
  needs: (payload) => ({ locations: [payload.uri], endpoints: catalogRefEndpoints(payload.catalog) }),
  secrets: CATALOG_REF_SECRETS,
  finish: recoverFinished,
  retry: { maxAttempts: 3 },
});

/** Queued set-based by `hard-delete.ts`, which writes what `needs` derives (the table's location). */
export const hardDeleteKind = defineJobKind({
  kind: HARD_DELETE_KIND,
  label: "hard-delete",
  payload: HardDeletePayloadSchema,
  needs: (payload) => ({ locations: [payload.uri] }),
  // The records move, and what was deleted is added to the savings rollup, in the batch that ends the job.
  finish: (ctx, job, end, ended) => [
    ...hardDeleteFinished(ctx, job, end, ended),
    ...countHardDeleted(ctx, job, end, ended),
  ],
  retry: { maxAttempts: 3 },
});
