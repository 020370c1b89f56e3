/**
 * An attempt's plan summary and its effective configuration (document 1: "plan summary (bins,
 * total bytes, estimated wall-time), effective config (three-layer resolution)").
 *
 * - Estimated wall time: once bins are done, the time since the attempt started scaled by the
 *   report's bytes over the bytes of the bins done (an ended attempt: its actual time); before,
 *   the report's bytes at `NOMINAL_BYTES_PER_S`; null until the report is read.
 * - Effective configuration: each value with the layer it comes from, platform default (the
 *   configuration), then location, then prefix (a managed prefix's active policy).
 */

import { DATA_FILE_PATTERN } from "@lakesmith/shared/discovery";
import { and, asc, eq } from "drizzle-orm";
import type { Config } from "../../config/definitions.ts";
import type { Db } from "../../db/index.ts";
import {
  type DiscoverySchedule,
  discoveryBins,
  type Location,
  prefixes,
  prefixPolicies,
} from "../../db/schema.ts";
import type { EffectiveValue } from "./schemas.ts";

/** Inventory Parquet read per second before an attempt has timed any of its own bins. */
const NOMINAL_BYTES_PER_S = 20 * 2 ** 20;
const PREFIXES_SHOWN = 100;

export async function planOf(db: Db, now: Date, attempt: DiscoverySchedule, offset: number, limit: number) {
  const bins = await db
    .select()
    .from(discoveryBins)
    .where(eq(discoveryBins.attemptId, attempt.id))
    .orderBy(asc(discoveryBins.position))
    .limit(limit)
    .offset(offset);
  return {
    id: attempt.id,
    report: attempt.report,
    bins_total: attempt.binsTotal,
    total_bytes: attempt.totalBytes,
    estimated_wall_ms: estimatedWallMs(attempt, now),
    bins: bins.map((b) => ({
      id: b.binId,
      key: b.key,
      size: b.size,
      status: b.status,
      files: b.files,
      bytes: b.bytes,
    })),
    offset,
    limit,
  };
}

function estimatedWallMs(attempt: DiscoverySchedule, now: Date): number | null {
  if (attempt.totalBytes === null) return null;
  const started = attempt.startedAt?.getTime();
  if (started !== undefined && attempt.status === "completed" && attempt.endedAt)
    return attempt.endedAt.getTime() - started;
  if (started !== undefined && attempt.doneBinBytes > 0)
    return Math.round(((now.getTime() - started) * attempt.totalBytes) / attempt.doneBinBytes);
  return Math.round((attempt.totalBytes / NOMINAL_BYTES_PER_S) * 1000);
}

export async function effectiveConfigOf(
  db: Db,
  config: Config,
  attempt: DiscoverySchedule,
  location: Location,
) {
  const platform = (name: string, value: unknown): EffectiveValue => ({ name, value, layer: "platform" });
  const fromLocation = (name: string, value: unknown): EffectiveValue => ({ name, value, layer: "location" });
  const values = [
    fromLocation("inventory_uri", location.inventoryUri),
    fromLocation("inventory_format", location.inventoryFormat),
    fromLocation("discovery_cadence", location.discoveryCadence),
    fromLocation("skip_age_days", location.skipAgeDays),
    fromLocation("input_format", location.inputFormat),
    platform("min_discovery_prefix_size_mb", config.min_discovery_prefix_size_mb),
    platform("data_file_pattern", DATA_FILE_PATTERN),
  ];
  const rows = await db
    .select({ id: prefixes.id, uri: prefixes.uri, policy: prefixPolicies.policy })
    .from(prefixes)
    .leftJoin(prefixPolicies, and(eq(prefixPolicies.prefixId, prefixes.id), eq(prefixPolicies.active, true)))
    .where(eq(prefixes.locationId, location.id))
    .orderBy(asc(prefixes.uri))
    .limit(PREFIXES_SHOWN);
  return {
    schedule_id: attempt.id,
    location_id: location.id,
    values,
    prefixes: rows.map((r) => ({
      prefix_id: r.id,
      uri: r.uri,
      values: [
        ...values.filter((v) => v.name === "skip_age_days" || v.name === "input_format"),
        ...policyValues(r.policy),
      ],
    })),
  };
}

/** A policy's settings, flattened (`convert.target_prefix`), each of layer prefix. */
function policyValues(policy: Record<string, unknown> | null): EffectiveValue[] {
  if (!policy) return [];
  const out: EffectiveValue[] = [];
  for (const [action, settings] of Object.entries(policy))
    if (settings && typeof settings === "object")
      for (const [name, value] of Object.entries(settings))
        out.push({ name: `${action}.${name}`, value, layer: "prefix" });
  return out;
}
