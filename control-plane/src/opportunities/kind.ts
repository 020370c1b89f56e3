/**
 * The `opportunity_scan` job kind: an agent allowed to read the table measures what a crunch would
 * gain (`OpportunityScanResult`, shared/opportunities.ts) and writes nothing. Its finish hook keeps
 * the table's latest measurement in `table_opportunities`, in the batch that ends the job:
 *
 * - only a succeeded job whose result parses is recorded; a failed or cancelled scan leaves the
 *   last measurement as it was;
 * - a measurement replaces the stored one only when it was taken at the same time or later, so a
 *   slow scan that ends after a newer one never hides it;
 * - a table's scans never run beside each other (one sample on its agent's disk at a time).
 */
import {
  OPPORTUNITY_SCAN_KIND,
  OpportunityScanPayloadSchema,
  OpportunityScanResultSchema,
} from "@lakesmith/shared/opportunities";
import { and, eq, sql } from "drizzle-orm";
import { CATALOG_REF_SECRETS, catalogRefEndpoints } from "../catalog-connections/ref-needs.ts";
import { insertSelect } from "../db/insert-select.ts";
import { jobs, lakeTables, tableOpportunities } from "../db/schema.ts";
import { defineJobKind, type FinishHook, tableScope } from "../jobs/kinds.ts";

const record: FinishHook = ({ db }, job, end, ended) => {
  if (end.status !== "succeeded" || !job.tableId) return [];
  const parsed = OpportunityScanResultSchema.safeParse(end.result);
  if (!parsed.success) return [];
  const result = parsed.data;
  const measuredAt = Date.parse(result.measured_at);
  if (Number.isNaN(measuredAt)) return [];
  const newer = sql`excluded.measured_at >= ${tableOpportunities.measuredAt}`;
  return [
    insertSelect(
      db,
      tableOpportunities,
      {
        tableId: sql`${job.tableId}`,
        jobId: sql`${job.id}`,
        measuredAt: sql`${measuredAt}`,
        tableVersion: sql`${result.table_version}`,
        potentialDrrPercent: sql`${result.potential_drr_percent}`,
        smallFiles: sql`${result.small_files}`,
        smallFileShare: sql`${result.small_file_share}`,
        missingOrdering: sql`${result.missing_ordering ? 1 : 0}`,
        result: sql`${JSON.stringify(result)}`,
      },
      // The table may have been deleted meanwhile: then there is nothing to record against.
      sql`from ${jobs} where ${and(eq(jobs.id, job.id), ended)} and exists (select 1 from ${lakeTables} where ${lakeTables.id} = ${job.tableId})`,
    ).onConflictDoUpdate({
      target: tableOpportunities.tableId,
      set: {
        jobId: sql`excluded.job_id`,
        measuredAt: sql`excluded.measured_at`,
        tableVersion: sql`excluded.table_version`,
        potentialDrrPercent: sql`excluded.potential_drr_percent`,
        smallFiles: sql`excluded.small_files`,
        smallFileShare: sql`excluded.small_file_share`,
        missingOrdering: sql`excluded.missing_ordering`,
        result: sql`excluded.result`,
      },
      setWhere: newer,
    }),
  ];
};

export const opportunityScanKind = defineJobKind({
  kind: OPPORTUNITY_SCAN_KIND,
  label: "opportunity scan",
  payload: OpportunityScanPayloadSchema,
  // A catalog-managed table is read through its catalog too: the agent must be allowed both.
  needs: (payload) => ({ locations: [payload.uri], endpoints: catalogRefEndpoints(payload.catalog) }),
  secrets: CATALOG_REF_SECRETS,
  exclusive: {
    group: OPPORTUNITY_SCAN_KIND,
    grain: "table",
    scopes: (payload) => [tableScope(payload.table_id)],
  },
  finish: record,
  retry: { maxAttempts: 2 },
});
