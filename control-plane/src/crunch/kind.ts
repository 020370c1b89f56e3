/**
 * The `crunch` and `optimize` job kinds. Both rewrite files and commit to the table's log, so two
 * of them never run on overlapping parts of a table: a job of a fanned-out crunch (`fan-out.ts`,
 * payload `partition`) holds its partition's scope, any other crunch the whole table's, and a table
 * scope overlaps every partition scope of the table. A manual trigger that overlaps an active one
 * is a 409 (`crunch/service.ts`); a schedule's run (or a retry) waits queued until the active one
 * ends. Jobs on disjoint partitions run at once on any allowed agents, and each commits only its
 * own partition's files (the agent's commit rebases on the others). A catalog-managed
 * table's job commits through its catalog (`catalog`): its agent must be allowed the catalog's
 * endpoints too, and the client secret is purged at the job's end.
 */
import { type CrunchKind, CrunchPayloadSchema, crunchPartitionLabel } from "@lakesmith/shared/jobs";
import { CATALOG_REF_SECRETS, catalogRefEndpoints } from "../catalog-connections/ref-needs.ts";
import { defineJobKind, partitionScope, tableScope } from "../jobs/kinds.ts";
import { recordSupersededFiles } from "../pending-deletions/record.ts";
import { countRewrite } from "../savings/rollup.ts";

/** The exclusivity group of the jobs that rewrite a table. */
export const REWRITE_GROUP = "rewrite";

const crunchLike = (kind: CrunchKind) =>
  defineJobKind({
    kind,
    label: kind,
    payload: CrunchPayloadSchema,
    needs: (payload) => ({ locations: [payload.uri], endpoints: catalogRefEndpoints(payload.catalog) }),
    secrets: CATALOG_REF_SECRETS,
    exclusive: {
      group: REWRITE_GROUP,
      grain: "table",
      scopes: (payload) => [
        payload.partition
          ? partitionScope(payload.table_id, crunchPartitionLabel(payload.partition))
          : tableScope(payload.table_id),
      ],
    },
    // In the batch that ends the job: a Hive crunch's old folders become pending deletions, and a
    // committed rewrite's bytes and files are added to the savings rollup.
    finish: (ctx, job, end, ended) => [
      ...recordSupersededFiles(ctx, job, end, ended),
      ...countRewrite(ctx, job, end, ended),
    ],
    retry: { maxAttempts: 3 },
  });

export const crunchKind = crunchLike("crunch");
export const optimizeKind = crunchLike("optimize");
