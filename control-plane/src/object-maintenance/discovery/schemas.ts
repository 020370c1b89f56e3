/**
 * Wire shapes of discovery (document 1, "Object maintenance"): attempts ("discovery schedules"),
 * their live state, plan and effective configuration, and a location's discovered prefixes.
 */
import { z } from "@hono/zod-openapi";
import { DISCOVERY_FILTERS, DISCOVERY_STATUSES } from "../../db/schema.ts";
import { pageQuery } from "../../http/pagination.ts";

export const ScheduleIdParam = z.object({
  schedule_id: z.string().min(1).max(64).openapi({ example: "dsc_4k9x2m7q0c1v8b3n5z6t" }),
});
export const SkipBinParams = ScheduleIdParam.extend({
  bin_id: z.string().min(1).max(256).openapi({ example: "d794c570-95bb-4271-9128-26023c8b4900" }),
});

const STATUS_DESCRIPTION =
  "queued (waiting for an agent), running (reading the report), paused (stopped; resume continues after the bins done), " +
  "completed (its prefixes applied), failed (`error` says why), cancelled (its location was archived or deleted, or its job cancelled).";

export const DiscoveryScheduleSchema = z
  .object({
    id: z.string(),
    location_id: z.string(),
    status: z.enum(DISCOVERY_STATUSES).openapi({ description: STATUS_DESCRIPTION }),
    trigger: z.enum(["manual", "schedule", "creation"]),
    job_id: z.string().nullable().openapi({ description: "The attempt's current job." }),
    report: z
      .string()
      .nullable()
      .openapi({ description: "The inventory manifest read (known once it started)." }),
    bins_total: z.number().int().nullable(),
    bins_done: z.number().int(),
    bins_skipped: z.number().int(),
    files_seen: z.number().int().openapi({ description: "Objects under the location in the bins done." }),
    bytes_seen: z.number().int(),
    objects_scanned: z.number().int().openapi({ description: "Inventory rows read (the whole bucket's)." }),
    error: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    updated_at: z.string(),
  })
  .openapi("DiscoverySchedule");

export const DiscoveryStateSchema = z
  .object({
    id: z.string(),
    status: z.enum(DISCOVERY_STATUSES),
    files_seen: z.number().int(),
    bytes_seen: z.number().int(),
    objects_scanned: z.number().int(),
    bins_done: z.number().int(),
    bins_skipped: z.number().int(),
    bins_total: z.number().int().nullable(),
    updated_at: z.string(),
  })
  .openapi("DiscoveryState", {
    description: "Live progress; a console polls it every 5 seconds while running.",
  });

export const DiscoveryBinSchema = z
  .object({
    id: z.string(),
    key: z.string().openapi({ description: "The inventory data file, relative to the report's folder." }),
    size: z.number().int(),
    status: z.enum(["pending", "reading", "done", "skipped"]),
    files: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
  })
  .openapi("DiscoveryBin");

export const DiscoveryPlanSchema = z
  .object({
    id: z.string(),
    report: z.string().nullable(),
    bins_total: z.number().int().nullable(),
    total_bytes: z.number().int().nullable().openapi({ description: "Bytes of the report's data files." }),
    estimated_wall_ms: z.number().int().nullable().openapi({
      description:
        "The attempt's wall time: once bins are done, the time so far scaled by the bytes left; before, the bytes at a nominal rate. Null until the report is read.",
    }),
    bins: z.array(DiscoveryBinSchema).openapi({ description: "A page of the bins, in the report's order." }),
    offset: z.number().int(),
    limit: z.number().int(),
  })
  .openapi("DiscoveryPlan");

export const PlanQuery = pageQuery(100, 1000);

const LAYERS = ["platform", "location", "prefix"] as const;
const EffectiveValueSchema = z.object({
  name: z.string(),
  value: z.unknown(),
  layer: z
    .enum(LAYERS)
    .openapi({ description: "Where the value comes from: platform default, location or prefix." }),
});
export type EffectiveValue = z.infer<typeof EffectiveValueSchema>;

export const EffectiveConfigSchema = z
  .object({
    schedule_id: z.string(),
    location_id: z.string(),
    values: z.array(EffectiveValueSchema).openapi({ description: "What the discovery runs with." }),
    prefixes: z
      .array(z.object({ prefix_id: z.string(), uri: z.string(), values: z.array(EffectiveValueSchema) }))
      .openapi({
        description:
          "The location's managed prefixes (first 100 by URI): each value the prefix's policy sets (layer prefix), the rest from the location or the platform.",
      }),
  })
  .openapi("DiscoveryEffectiveConfig");

export const DiscoveredPrefixSchema = z
  .object({
    uri: z.string(),
    prefix: z
      .string()
      .openapi({ description: 'Relative to the location, ending with `/` (`""`: the location itself).' }),
    files: z.number().int(),
    bytes: z.number().int(),
    data_files: z
      .number()
      .int()
      .openapi({ description: "`.json`, `.jsonl`, `.ndjson`, each optionally `.gz`." }),
    data_bytes: z.number().int(),
    oldest_object_at: z.string().nullable(),
    newest_object_at: z.string().nullable(),
    filtered: z.boolean(),
    filter_reason: z
      .enum(DISCOVERY_FILTERS)
      .nullable()
      .openapi({
        description:
          "Why the prefix is left out, the first that holds: claimed (inside a registered or synced catalog table), too_young (its newest object is younger than the skip age), " +
          "empty (no bytes), no_data_files (only non-data files), below_min_size (its data files hold less than `min_discovery_prefix_size_mb`). Null: it survived and is a managed prefix.",
      }),
  })
  .openapi("DiscoveredPrefix");

export const DiscoveredQuery = pageQuery(100, 1000).extend({
  filter: z
    .enum(["all", "survivors", ...DISCOVERY_FILTERS])
    .default("all")
    .openapi({ description: "all (default), survivors (not filtered), or one filter reason." }),
});
