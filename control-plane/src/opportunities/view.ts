/** The API's view of a table's opportunities: the stored measurement and the active scan. */
import { OpportunityScanResultSchema } from "@lakesmith/shared/opportunities";
import type { Job, TableOpportunity } from "../db/schema.ts";
import type { TableOpportunitiesWire } from "./schemas.ts";

export function scanJobView(job: Job) {
  return {
    job_id: job.id,
    status: job.status,
    trigger: job.trigger,
    created_at: job.createdAt.toISOString(),
  };
}

export function opportunitiesView(
  tableId: string,
  latest: TableOpportunity | undefined,
  active: Job | undefined,
): TableOpportunitiesWire {
  // Stored by the finish hook after the same parse; a row that no longer parses reads as unmeasured.
  const parsed = latest ? OpportunityScanResultSchema.safeParse(latest.result) : undefined;
  const measurement = latest && parsed?.success ? { ...parsed.data, job_id: latest.jobId } : null;
  return {
    table_id: tableId,
    status: measurement ? "measured" : "not_measured",
    measurement,
    scan: active ? scanJobView(active) : null,
  };
}
