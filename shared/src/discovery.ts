/**
 * The `discovery` job (document 1, "Object maintenance"): the agent reads a location's newest
 * complete S3 Inventory report and sends, bin by bin (a bin is one of the report's data files), the
 * location's objects grouped into prefixes; the control plane merges them and judges each prefix.
 *
 * - Part 1 of a lease is the plan (`DiscoveryPlanPart`: the report and its bins); then, per bin, a
 *   `start` part (the ack says whether to read it), its aggregates in `rows` parts of at most
 *   `DISCOVERY_PART_ROWS`, and a `done` part with its totals. Each ack (`DiscoveryAck`) says whether
 *   to go on and which bins to skip: the plane steers a running discovery through its acks.
 * - A prefix is a location-relative folder ending with `/` (`""`: the location itself); see
 *   `agent/src/discovery/prefix.ts` for the grouping rule.
 *
 * @example const payload = DiscoveryPayloadSchema.parse(offer.payload);
 */
import { z } from "zod";

export const DISCOVERY_KIND = "discovery";

/** Prefix rows per part: a part's frame stays well under 1 MiB. */
export const DISCOVERY_PART_ROWS = 1000;
/** Bins per plan part. */
export const DISCOVERY_PLAN_BINS = 2000;

/** File name endings the platform converts (JSON, gzip too): a prefix without any has no data files. */
export const DATA_FILE_PATTERN = "\\.(json|jsonl|ndjson)(\\.gz)?$";

/**
 * The configuration's folder of an inventory URI (a `manifest.json` one: its grandparent, where
 * the report's `data/` is): what a discovery reads, and what an agent's allow list must cover.
 */
export function inventoryRoot(inventoryUri: string): string {
  const trimmed = inventoryUri.replace(/\/+$/, "");
  return trimmed.endsWith("/manifest.json") ? trimmed.split("/").slice(0, -2).join("/") : trimmed;
}

export const DiscoveryPayloadSchema = z.object({
  location_id: z.string().min(1),
  attempt_id: z.string().min(1),
  /** The location's canonical URI (no trailing `/`). */
  location_uri: z.string().min(1),
  /** The report's folder (the newest complete report under it is read) or one `manifest.json`. */
  inventory_uri: z.string().min(1),
  /**
   * Location keys (`locationKey`, ending with `/`) of tables inside the location, registered or in
   * a synced catalog: every object under one is grouped into that key's prefix.
   */
  claimed: z.array(z.string().min(1)).default([]),
  /**
   * The filters' settings as they were when the attempt was queued: the plane judges the merged
   * prefixes by them at the end (a prefix spans bins, so no bin can judge it alone).
   */
  skip_age_days: z.number().int().min(0).max(365),
  min_prefix_bytes: z.number().int().nonnegative(),
  /** Bins not to read (skipped by request). */
  skip_bins: z.array(z.string()).default([]),
  /** Bins an earlier lease of this attempt finished (a resumed discovery continues after them). */
  done_bins: z.array(z.string()).default([]),
});
export type DiscoveryPayload = z.infer<typeof DiscoveryPayloadSchema>;

export const DiscoveryBinSchema = z.object({
  /** The data file's name without `.parquet`: unique within a report. */
  id: z.string().min(1),
  /** The data file's key as the manifest lists it. */
  key: z.string(),
  size: z.number().int().nonnegative(),
});
export type DiscoveryBin = z.infer<typeof DiscoveryBinSchema>;

export const DiscoveryRowSchema = z.object({
  prefix: z.string(),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  data_files: z.number().int().nonnegative(),
  data_bytes: z.number().int().nonnegative(),
  /** Epoch milliseconds of the oldest and newest object; null where the report has no dates. */
  oldest_ms: z.number().int().nullable(),
  newest_ms: z.number().int().nullable(),
});
export type DiscoveryRow = z.infer<typeof DiscoveryRowSchema>;

export const DiscoveryPartSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("plan"),
    /** The report read: its manifest's URI and creation time. */
    report: z.string(),
    report_created_ms: z.number().int().nullable(),
    /** Every bin of the report, across the plan parts; `bins` holds this part's share. */
    bins_total: z.number().int().nonnegative(),
    bins: z.array(DiscoveryBinSchema).max(DISCOVERY_PLAN_BINS),
  }),
  z.object({ type: z.literal("start"), bin: z.string() }),
  z.object({
    type: z.literal("rows"),
    bin: z.string(),
    rows: z.array(DiscoveryRowSchema).max(DISCOVERY_PART_ROWS),
  }),
  z.object({
    type: z.literal("done"),
    bin: z.string(),
    /** Objects of the bin under the location, and their bytes. */
    files: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    /** Objects of the bin (the whole bucket's share), for the live state. */
    scanned: z.number().int().nonnegative(),
  }),
]);
export type DiscoveryPart = z.infer<typeof DiscoveryPartSchema>;

/** The plane's answer to every part. */
export const DiscoveryAckSchema = z.object({
  /** False once the attempt is paused, completed or cancelled: the agent stops. */
  go_on: z.boolean(),
  /** Bins to leave out, including the one just started. */
  skip_bins: z.array(z.string()).default([]),
  /** To a `start`: the bin was read by an earlier lease of this job (a retry); it is passed over. */
  read_already: z.boolean().optional(),
});
export type DiscoveryAck = z.infer<typeof DiscoveryAckSchema>;

/** What a discovery answers at its end: counts only (its prefixes went in parts). */
export const DiscoveryResultSchema = z.object({
  report: z.string(),
  bins_total: z.number().int().nonnegative(),
  /** Bins this lease read, skipped, or found done by an earlier lease. */
  bins_read: z.number().int().nonnegative(),
  bins_skipped: z.number().int().nonnegative(),
  bins_already_done: z.number().int().nonnegative(),
  objects_scanned: z.number().int().nonnegative(),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  prefix_rows: z.number().int().nonnegative(),
  /** True when the plane said to stop before every bin was read. */
  stopped: z.boolean(),
  /** Newer reports passed over as incomplete (no checksum, or one that does not match). */
  incomplete_reports: z.array(z.string()),
});
export type DiscoveryResult = z.infer<typeof DiscoveryResultSchema>;
