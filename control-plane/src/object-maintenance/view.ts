/** Object maintenance rows as the API shows them (`schemas.ts`). */
import type { Location, Prefix, PrefixPolicy } from "../db/schema.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function locationView(row: Location & { prefixCount: number }) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    uri: row.uri,
    discovery_method: row.discoveryMethod,
    inventory_uri: row.inventoryUri,
    inventory_format: row.inventoryFormat,
    discovery_cadence: row.discoveryCadence,
    skip_age_days: row.skipAgeDays,
    run_discovery_immediately: row.runDiscoveryImmediately,
    input_format: row.inputFormat,
    status: row.status,
    prefixes: row.prefixCount,
    last_discovered_at: iso(row.lastDiscoveredAt),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function prefixView(row: Prefix) {
  return {
    id: row.id,
    location_id: row.locationId,
    uri: row.uri,
    management_state: row.managementState,
    state_reason: row.stateReason,
    source_state: row.sourceState,
    missing_since: iso(row.missingSince),
    files: row.files,
    bytes: row.bytes,
    newest_object_at: iso(row.newestObjectAt),
    discovered_at: iso(row.discoveredAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function policyView(row: PrefixPolicy) {
  return {
    prefix_id: row.prefixId,
    version: row.version,
    active: row.active,
    policy: row.policy,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}

export function prefixDetailView(detail: {
  prefix: Prefix;
  location: Location | null;
  policy: PrefixPolicy | null;
}) {
  const { location } = detail;
  return {
    ...prefixView(detail.prefix),
    location: location
      ? { id: location.id, name: location.name, uri: location.uri, status: location.status }
      : null,
    policy: detail.policy ? policyView(detail.policy) : null,
  };
}
