/**
 * The jobs a policy's destructive runs make, for the engine (real runs) and the preview (the same
 * jobs as dry runs): one place, so a preview lists what the run will then delete.
 */
import {
  PARTITION_EXPIRATION_KIND,
  type PartitionExpirationPayload,
  VACUUM_KIND,
  type VacuumPayload,
} from "@lakesmith/shared/maintenance";
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type LakeTable, lakeTables, managedTables, policies } from "../db/schema.ts";
import { jobOnTable, type NewJob } from "../jobs/enqueue.ts";
import { effectivePolicyOf } from "../managed-tables/joins.ts";
import type { DueRun } from "./plan.ts";

export type DestructiveRun = Exclude<DueRun, { group: "rewrite" }>;

/** The columns of a Lakesmith table that its jobs and its onboarding state need. */
export const JOB_TABLE_COLUMNS = {
  id: lakeTables.id,
  name: lakeTables.name,
  uri: lakeTables.uri,
  format: lakeTables.format,
  priority: lakeTables.priority,
  targetFileSizeMb: lakeTables.targetFileSizeMb,
  parquetV2: lakeTables.parquetV2,
  recipe: lakeTables.recipe,
  onboardingStatus: lakeTables.onboardingStatus,
  onboardingError: lakeTables.onboardingError,
  catalogConnectionId: lakeTables.catalogConnectionId,
  catalogFullName: lakeTables.catalogFullName,
};
export type JobTable = Pick<LakeTable, keyof typeof JOB_TABLE_COLUMNS>;

/**
 * The vacuum or partition expiration of `run` on `table`. `keep`: paths a vacuum must not propose
 * (recovered deletions). A partition expiration counts back from the run's UTC date.
 */
export function destructiveJob(
  table: JobTable,
  run: DestructiveRun,
  options: { dryRun: boolean; keep: string[]; queueing: Omit<NewJob, "kind" | "payload" | "tableId"> },
): NewJob {
  const base = { table_id: table.id, uri: table.uri, format: table.format };
  if (run.group === "expire_snapshots") {
    const payload: VacuumPayload = {
      ...base,
      mode: "lite",
      ...(run.retentionHours !== undefined ? { retention_hours: run.retentionHours } : {}),
      keep_table_retention: !run.shortenRetention,
      dry_run: options.dryRun,
      keep: options.keep,
    };
    return jobOnTable(table, { kind: VACUUM_KIND, payload, ...options.queueing });
  }
  const payload: PartitionExpirationPayload = {
    ...base,
    retention_days: run.retentionDays,
    as_of: run.at.toISOString().slice(0, 10),
    recipe: table.recipe ?? null,
    dry_run: options.dryRun,
    validate: false,
  };
  return jobOnTable(table, { kind: PARTITION_EXPIRATION_KIND, payload, ...options.queueing });
}

/**
 * The target file size of `table`'s effective policy (`managed_tables.policy_id`), which a rewrite
 * of the table writes; undefined where no policy applies or it names none (the table's own then).
 */
export async function policyTargetFileSize(
  db: Db,
  table: Pick<LakeTable, "catalogConnectionId" | "catalogFullName">,
): Promise<number | undefined> {
  if (!table.catalogConnectionId || !table.catalogFullName) return undefined;
  const [row] = await db
    .select({ body: policies.body })
    .from(managedTables)
    .innerJoin(policies, effectivePolicyOf)
    .where(
      and(
        eq(managedTables.connectionId, table.catalogConnectionId),
        eq(managedTables.fullName, table.catalogFullName),
      ),
    );
  const size = row?.body.target_file_size_mb;
  return typeof size === "number" ? size : undefined;
}
