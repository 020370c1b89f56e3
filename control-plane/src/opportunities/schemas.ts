/**
 * Wire shapes of table opportunities: the latest measurement (the agent's `OpportunityScanResult`
 * with the job that took it) and the scan in progress, and the answer to a scan trigger.
 */
import { z } from "@hono/zod-openapi";
import { OpportunityScanResultSchema } from "@lakesmith/shared/opportunities";
import { JOB_STATUSES } from "../db/schema.ts";

const ScanJobSchema = z
  .object({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    trigger: z.string().openapi({ description: "`manual` (POST ...:scan) or `policy` (the policy engine)." }),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("OpportunityScanJob");

export const TableOpportunitiesSchema = z
  .object({
    table_id: z.string(),
    status: z.enum(["measured", "not_measured"]).openapi({
      description:
        "`not_measured` until the table's first opportunity scan succeeds; `measurement` is null then.",
    }),
    measurement: OpportunityScanResultSchema.extend({ job_id: z.string() })
      .nullable()
      .openapi({
        description:
          "The latest successful scan: `measured_at` and `method` say when and how; `table_version` the snapshot measured. " +
          "`potential_drr_percent`: the share of a bounded sample's bytes (at most 16 files / 256 MB of the files a crunch would rewrite, chosen deterministically) " +
          "that a rewrite with the crunch's own settings saved, validated and never uploaded; 0 when a crunch would rewrite nothing; null when no such file fits the sample. " +
          "`small_files` / `small_file_share`: live files under the table's target file size. " +
          "`missing_ordering`: the recipe's cluster columns name an order and a checked file's rows are not in it; `suggested_columns` then says which.",
      }),
    scan: ScanJobSchema.nullable().openapi({
      description: "The table's scan that is queued or running, if any.",
    }),
  })
  .openapi("TableOpportunities");
export type TableOpportunitiesWire = z.infer<typeof TableOpportunitiesSchema>;

export const ScanTriggeredSchema = ScanJobSchema.extend({ table_id: z.string() }).openapi(
  "OpportunityScanTriggered",
);
