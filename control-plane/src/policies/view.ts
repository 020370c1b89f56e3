/** A policy row as the API shows it (`PolicySchema` in `routes-schemas.ts`). */
import { catalogId, tableId } from "../catalogs/ids.ts";
import type { Policy } from "../db/schema.ts";
import { iso } from "../jobs/view.ts";
import type { PolicyBody } from "./schemas.ts";

export function policyView(row: Policy) {
  const ref = { connectionId: row.connectionId, catalog: row.catalog };
  const body = row.body as PolicyBody;
  return {
    policy_id: row.id,
    catalog_id: catalogId(ref),
    scope: row.scope,
    prefix: row.scope === "prefix" ? row.target : null,
    table_id: row.scope === "table" ? tableId(ref, row.target) : null,
    name: body.name ?? null,
    enabled: row.enabled,
    actions: body.actions,
    schedule: body.schedule ?? null,
    target_file_size_mb: body.target_file_size_mb ?? null,
    lookback_days: body.lookback_days,
    version: row.version,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: iso(row.updatedAt),
  };
}
export type PolicyWire = ReturnType<typeof policyView>;
