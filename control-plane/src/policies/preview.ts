/**
 * The preview (dry run) of a policy, before it is enabled: the tables it would manage as their
 * effective policy, the actions each would take or skip, and what each destructive action would
 * delete, measured by the same jobs the engine would queue (`jobs.ts`) run as dry runs by an agent.
 *
 * - Tables: the managed tables in the policy's scope whose effective policy would be this one were
 *   it enabled (no more specific enabled policy covers them). At most `MAX_TABLES` are listed.
 * - Dry runs: one per destructive action and onboarded table (at most `MAX_DRY_RUNS` a preview),
 *   queued by `POST` and keyed by the policy's version, so asking again answers the same jobs; a
 *   changed policy is previewed afresh. A table not onboarded yet says so instead.
 * - What runs later deletes what its dry run listed when the table has not changed meanwhile: the
 *   same payload, the retention counted back from the run's date instead of the preview's.
 */
import type { Clock } from "@lakesmith/shared";
import { and, eq, gte, lt } from "drizzle-orm";
import { catalogId, tableId } from "../catalogs/ids.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import {
  catalogConnections,
  catalogTables,
  jobs,
  lakeTables,
  managedTables,
  type Policy,
  policies,
} from "../db/schema.ts";
import type { JobService } from "../jobs/service.ts";
import { connectionOf, effectivePolicyOf, lakeTableOf, syncedTableOf } from "../managed-tables/joins.ts";
import type { PendingDeletionService } from "../pending-deletions/service.ts";
import { CATALOG_HOLD } from "../scheduler/fire.ts";
import { DESTRUCTIVE_ACTIONS } from "./actions.ts";
import { type DestructiveRun, destructiveJob } from "./jobs.ts";
import { effectiveActions } from "./plan.ts";
import { underPrefix } from "./resolve.ts";
import type { PolicyBody } from "./schemas.ts";
import { factsOf, type PolicyService } from "./service.ts";

export const MAX_TABLES = 1000;
export const MAX_DRY_RUNS = 100;

const rank = (p: Pick<Policy, "scope" | "target">) =>
  p.scope === "table" ? 1_000_000 : p.scope === "prefix" ? 1 + p.target.length : 0;

export class PolicyPreview {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    private readonly jobs: JobService,
    private readonly deletions: PendingDeletionService,
    private readonly policiesService: PolicyService,
  ) {}

  /** Queues the dry runs of the policy's destructive actions (once per version) and answers the preview. */
  async start(catalogIdText: string, policyId: string) {
    return this.preview(catalogIdText, policyId, true);
  }

  async read(catalogIdText: string, policyId: string) {
    return this.preview(catalogIdText, policyId, false);
  }

  private async preview(catalogIdText: string, policyId: string, queue: boolean) {
    const policy = await this.policiesService.find(catalogIdText, policyId);
    const body = policy.body as PolicyBody;
    const { values } = await this.config.get();
    const now = this.clock.now();
    const rows = await this.candidates(policy);
    const keyHead = `preview:${policy.id}:v${policy.version}:`;
    const destructive = DESTRUCTIVE_ACTIONS.filter((a) => a in body.actions);
    let dryRuns = 0;
    const queued = [];
    const tables = [];
    for (const row of rows) {
      const facts = factsOf(
        { format: row.format, hasPartitions: row.hasPartitions },
        row.connectionType,
        row.table?.recipe ?? null,
      );
      const actions = effectiveActions(body, facts, values);
      const deletes = [];
      for (const a of actions.filter((x) => destructive.includes(x.action))) {
        if (a.skipped) continue;
        if (row.table?.onboardingStatus !== "active") {
          deletes.push({ action: a.action, job_id: null, status: "not_onboarded" as const, result: null });
          continue;
        }
        if (dryRuns >= MAX_DRY_RUNS) {
          deletes.push({ action: a.action, job_id: null, status: "over_limit" as const, result: null });
          continue;
        }
        dryRuns++;
        const run: DestructiveRun =
          a.action === "expire_snapshots"
            ? {
                group: "expire_snapshots",
                at: now,
                retentionHours: (a.parameters.retention_hours?.value as number | null) ?? undefined,
                shortenRetention: a.parameters.shorten_retention?.value === true,
              }
            : {
                group: "expire_partitions",
                at: now,
                retentionDays: a.parameters.retention_days?.value as number,
              };
        const dedupeKey = `${keyHead}${row.table.id}:${a.action}`;
        if (queue) {
          const keep = run.group === "expire_snapshots" ? await this.deletions.keepPaths(row.table.id) : [];
          queued.push(
            destructiveJob(row.table, run, {
              dryRun: true,
              keep,
              queueing: {
                trigger: "preview",
                createdBy: null,
                dedupeKey,
                ...(row.table.catalogConnectionId ? { notBefore: CATALOG_HOLD } : {}),
              },
            }),
          );
        }
        deletes.push({ action: a.action, job_id: null, status: "queued" as const, result: null, dedupeKey });
      }
      tables.push({
        table_id: tableId({ connectionId: row.connectionId, catalog: row.catalog }, row.fullName),
        full_name: row.fullName,
        lake_table_id: row.table?.id ?? null,
        currently_effective_policy_id: row.policyId,
        actions: actions.map((a) => ({ action: a.action, ...(a.skipped ? { skipped: a.skipped } : {}) })),
        deletes,
      });
    }
    for (const job of queued) await this.jobs.enqueue(job);
    const byKey = await this.dryRunJobs(keyHead);
    return {
      policy_id: policy.id,
      catalog_id: catalogId({ connectionId: policy.connectionId, catalog: policy.catalog }),
      version: policy.version,
      enabled: policy.enabled,
      tables_count: tables.length,
      truncated: rows.length >= MAX_TABLES,
      tables: tables.map((t) => ({
        ...t,
        deletes: t.deletes.map(({ dedupeKey, ...d }) => {
          const job = dedupeKey ? byKey.get(dedupeKey) : undefined;
          if (!dedupeKey) return d;
          if (!job) return { ...d, status: "not_requested" as const };
          return { ...d, job_id: job.id, status: job.status, result: job.result ?? null };
        }),
      })),
    };
  }

  /** Managed tables in the policy's scope that no more specific enabled policy covers. */
  private async candidates(policy: Policy) {
    const inScope =
      policy.scope === "table"
        ? eq(managedTables.fullName, policy.target)
        : policy.scope === "prefix"
          ? underPrefix(managedTables.schema, policy.target)
          : undefined;
    const rows = await this.db
      .select({
        connectionId: managedTables.connectionId,
        fullName: managedTables.fullName,
        catalog: managedTables.catalog,
        policyId: managedTables.policyId,
        format: catalogTables.format,
        hasPartitions: catalogTables.hasPartitions,
        connectionType: catalogConnections.type,
        table: lakeTables,
        current: { scope: policies.scope, target: policies.target },
      })
      .from(managedTables)
      .leftJoin(catalogTables, syncedTableOf)
      .leftJoin(catalogConnections, connectionOf)
      .leftJoin(lakeTables, lakeTableOf)
      .leftJoin(policies, effectivePolicyOf)
      .where(
        and(
          eq(managedTables.connectionId, policy.connectionId),
          eq(managedTables.catalog, policy.catalog),
          inScope,
        ),
      )
      .orderBy(managedTables.fullName)
      .limit(MAX_TABLES);
    return rows.filter(
      (r) => !r.current?.scope || r.policyId === policy.id || rank(r.current as Policy) <= rank(policy),
    );
  }

  private async dryRunJobs(keyHead: string) {
    const rows = await this.db
      .select({ id: jobs.id, status: jobs.status, result: jobs.result, dedupeKey: jobs.dedupeKey })
      .from(jobs)
      .where(and(gte(jobs.dedupeKey, keyHead), lt(jobs.dedupeKey, `${keyHead}\uffff`)));
    return new Map(rows.map((r) => [r.dedupeKey as string, r]));
  }
}
