/**
 * Payload and result of `opportunity_scan`: an agent measures what a crunch of a table would gain
 * (document 2, managed table "opportunities"), and never writes to the table.
 *
 * - Potential DRR: a bounded, deterministic sample of the files a crunch would rewrite (at most
 *   `sample_max_files` files and `sample_max_bytes` bytes, spread evenly over the candidates in key
 *   order) is rewritten on the agent's scratch disk with the crunch's own settings tuner and rewrite;
 *   `100 * (1 - bytes after / bytes before)` of that sample.
 * - Small files: live files under the target file size, with their count, bytes and share of files;
 *   a partition's only such file has nothing to merge with and is counted apart (`lone_small_files`).
 * - Ordering: whether the sampled files' rows are in the order of the cluster columns (the recipe's,
 *   or the payload's), checked row by row in each file; `missing_ordering` when cluster columns are
 *   named and a sampled file is not sorted by them.
 * - Everything is measured against one snapshot, recorded as `table_version`.
 *
 * @example
 * const payload = OpportunityScanPayloadSchema.parse(offer.payload);
 * const result = OpportunityScanResultSchema.parse(job.result); // result.potential_drr_percent
 */
import { z } from "zod";
import { CatalogRefSchema, OnboardingRecipeSchema } from "./jobs.ts";

export const OPPORTUNITY_SCAN_KIND = "opportunity_scan";

/** The most bytes of the table one scan downloads and rewrites. */
export const DEFAULT_SAMPLE_MAX_BYTES = 256 * 2 ** 20;
/** The most files one scan samples. */
export const DEFAULT_SAMPLE_MAX_FILES = 16;

export const OpportunityScanPayloadSchema = z.object({
  table_id: z.string().min(1),
  uri: z.string().min(1),
  format: z.enum(["delta", "iceberg", "hive"]),
  catalog: CatalogRefSchema.optional(),
  /** The table's target file size; a live file under it is small. */
  target_file_size_mb: z.number().int().positive().optional(),
  recipe: OnboardingRecipeSchema.nullable().optional(),
  /** The order a crunch would sort by; default the recipe's cluster columns. */
  cluster_columns: z.array(z.string().min(1)).optional(),
  parquet_v2: z.boolean().optional(),
  sample_max_bytes: z.number().int().positive().default(DEFAULT_SAMPLE_MAX_BYTES),
  sample_max_files: z.number().int().positive().max(256).default(DEFAULT_SAMPLE_MAX_FILES),
});
export type OpportunityScanPayload = z.infer<typeof OpportunityScanPayloadSchema>;

export const OpportunitySampleSchema = z.object({
  files: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  rows: z.number().int().nonnegative(),
  /** The sample's bytes as the crunch settings rewrote them, and the files written. */
  bytes_after: z.number().nonnegative(),
  files_after: z.number().int().nonnegative(),
  /** The settings the sample was rewritten with, as crunch describes them. */
  settings: z.string().nullable(),
});
export type OpportunitySample = z.infer<typeof OpportunitySampleSchema>;

export const OpportunityOrderingSchema = z.object({
  /** The columns the rows should be in order of; empty when neither the recipe nor the payload names any. */
  columns: z.array(z.string()),
  source: z.enum(["payload", "recipe", "none"]),
  /** Sampled files whose rows were checked, and those already in the columns' order. */
  files_checked: z.number().int().nonnegative(),
  files_sorted: z.number().int().nonnegative(),
});
export type OpportunityOrdering = z.infer<typeof OpportunityOrderingSchema>;

export const OpportunityScanResultSchema = z.object({
  /** When the measurement was taken (ISO 8601, UTC). */
  measured_at: z.string(),
  /** The snapshot measured (Delta: log version; Iceberg: metadata version; Hive: 0). */
  table_version: z.number().int().nonnegative(),
  /** How the figures were measured, in words: the sample and the tuner. */
  method: z.string(),
  files: z.number().int().nonnegative(),
  total_bytes: z.number().nonnegative(),
  target_file_size_bytes: z.number().positive(),
  /** Live files under the target size that share their partition with another such file. */
  small_files: z.number().int().nonnegative(),
  small_files_bytes: z.number().nonnegative(),
  /** `small_files / files`; 0 for a table without files. */
  small_file_share: z.number().min(0).max(1),
  /**
   * Files under the target size that are their partition's only one: nothing to merge them with (a
   * partition smaller than the target size is one such file once crunched). Not in `small_files`.
   */
  lone_small_files: z.number().int().nonnegative().default(0),
  /** Files a crunch would rewrite now (small, or not written by Lakesmith), and their bytes. */
  crunch_candidates: z.number().int().nonnegative(),
  crunch_candidate_bytes: z.number().nonnegative(),
  sample: OpportunitySampleSchema,
  /** Percent of the sample's bytes the rewrite saved; null when nothing was sampled. */
  potential_drr_percent: z.number().nullable(),
  ordering: OpportunityOrderingSchema,
  missing_ordering: z.boolean(),
  /** The columns a crunch would sort by to give the order; empty when none is missing. */
  suggested_columns: z.array(z.string()),
  notes: z.array(z.string()),
  duration_ms: z.number().nonnegative(),
});
export type OpportunityScanResult = z.infer<typeof OpportunityScanResultSchema>;
