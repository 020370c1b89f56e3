/**
 * Document 2's actions on a catalog table: what it supports (`policies/actions.ts`), triggering one
 * now or at a time, reading and retrying one. An action is a document-1 job on the table's
 * Lakesmith table (`trigger: action`), queued by the service that queues that kind by hand
 * (crunch, vacuum, partition expiration), so every precondition and overlap rule holds alike.
 *
 * - Checks, in order: the table exists (404), the action suits it (422 naming `action` with the
 *   reason), its parameters (422 naming the field: a retention below the format's default without
 *   `shorten_retention`, a `schedule.at` too far ahead), then the kind's own (409, 422).
 * - `schedule.at` in the future becomes the job's `not_before`: it is not offered before then.
 * - A catalog table without a Lakesmith table is onboarded by its first action, whose job is held
 *   until onboarding succeeds (`hold.ts`).
 */
import type { Clock } from "@lakesmith/shared";
import {
  DEFAULT_DELETED_FILE_RETENTION_HOURS,
  DEFAULT_SNAPSHOT_RETENTION_HOURS,
} from "@lakesmith/shared/maintenance";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { CrunchService } from "../crunch/service.ts";
import type { Db } from "../db/index.ts";
import { type Job, jobs, type LakeTable } from "../db/schema.ts";
import type { KeysetPage } from "../http/pagination.ts";
import { ApiError, conflict, invalidField } from "../http/problem.ts";
import type { Queueing } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import type { PartitionExpirationService } from "../partition-expiration/service.ts";
import {
  ACTIONS,
  type Action,
  DESTRUCTIVE_ACTIONS,
  REWRITE_ACTIONS,
  unsupportedReason,
} from "../policies/actions.ts";
import { policyTargetFileSize } from "../policies/jobs.ts";
import type { TableService } from "../tables/service.ts";
import type { VacuumService } from "../vacuum/service.ts";
import { heldQueueing } from "./hold.ts";
import { ACTION_JOB_KINDS, ACTION_TRIGGER, actionOf, JOB_KIND_OF } from "./kinds.ts";
import { onboardCatalogTable } from "./onboard.ts";
import { jobsPage, type RunService } from "./runs.ts";
import { type ActionRequest, MAX_SCHEDULE_DAYS, PARAMETERS } from "./schemas.ts";
import { type ActionTarget, factsOf, resolveTarget } from "./target.ts";

/** The table's own retention an expire_snapshots may not go below without `shorten_retention`. */
const FORMAT_RETENTION_HOURS: Record<string, number> = {
  delta: DEFAULT_DELETED_FILE_RETENTION_HOURS,
  iceberg: DEFAULT_SNAPSHOT_RETENTION_HOURS,
};

export interface SupportedAction {
  action: Action;
  job_kind: string;
  destructive: boolean;
  parameters: { name: string; type: string; required: boolean; default: unknown; description: string }[];
}

export class TableActionService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly crunch: CrunchService,
    private readonly vacuum: VacuumService,
    private readonly expiration: PartitionExpirationService,
    private readonly runs: RunService,
  ) {}

  /** The actions the table supports (and why not the others), and a page of its actions. */
  async list(
    catalogId: string,
    tableId: string,
    page: { page_size: number; page_token?: string | undefined },
  ): Promise<{
    supported: SupportedAction[];
    unsupported: { action: Action; reason: string }[];
    page: KeysetPage<Job>;
  }> {
    const target = await resolveTarget(this.db, catalogId, tableId);
    const facts = factsOf(target);
    const defaults = await this.defaults(target);
    const supported: SupportedAction[] = [];
    const unsupported: { action: Action; reason: string }[] = [];
    for (const action of ACTIONS) {
      const reason = unsupportedReason(action, facts);
      if (reason) unsupported.push({ action, reason });
      else
        supported.push({
          action,
          job_kind: JOB_KIND_OF[action],
          destructive: DESTRUCTIVE_ACTIONS.includes(action),
          parameters: PARAMETERS[action].map((p) => ({
            ...p,
            default: defaults[`${action}.${p.name}`] ?? null,
          })),
        });
    }
    // Before its first action the table has no Lakesmith table, so no jobs.
    const where = target.table
      ? and(
          eq(jobs.tableId, target.table.id),
          eq(jobs.trigger, ACTION_TRIGGER),
          inArray(jobs.kind, ACTION_JOB_KINDS),
        )
      : sql`0`;
    return { supported, unsupported, page: await jobsPage(this.db, where, page.page_size, page.page_token) };
  }

  /** Queues the action (see the header); the job, held or scheduled where asked. */
  async trigger(
    catalogId: string,
    tableId: string,
    request: ActionRequest,
    actor: string | null,
  ): Promise<Job> {
    const target = await resolveTarget(this.db, catalogId, tableId);
    const reason = unsupportedReason(request.action, factsOf(target));
    if (reason)
      throw invalidField("action", `${request.action} can't run on '${target.synced.fullName}': ${reason}`);
    checkParameters(request, target);
    const at = this.scheduledAt(request);
    const table = target.table ?? (await onboardCatalogTable(this.db, this.tables, target, actor));
    if (table.onboardingStatus === "failed")
      throw conflict(
        `Onboarding of the Lakesmith table '${table.name}' failed: ${table.onboardingError ?? "no reason given"}. Retry it (POST /api/v1/onboarding/${table.id}/retry), then the action.`,
      );
    const queueing: Queueing =
      table.onboardingStatus === "active"
        ? { trigger: ACTION_TRIGGER, ...(at ? { notBefore: at } : {}) }
        : heldQueueing(at);
    return this.queue(table, request, queueing, actor);
  }

  /** One action of the table; 404 for a job that is not one of its actions. */
  async get(
    catalogId: string,
    tableId: string,
    actionId: string,
  ): Promise<{ job: Job; target: ActionTarget }> {
    const target = await resolveTarget(this.db, catalogId, tableId);
    const job = await this.jobs.get(actionId);
    if (
      !job ||
      !target.table ||
      job.tableId !== target.table.id ||
      job.trigger !== ACTION_TRIGGER ||
      !actionOf(job)
    )
      throw new ApiError(
        404,
        `Table '${tableId}' has no action '${actionId}'; GET /api/v1/catalogs/${catalogId}/tables/${encodeURIComponent(tableId)}/actions lists its actions.`,
      );
    return { job, target };
  }

  /** A new job of a failed or cancelled action's parameters, now; 409 for any other status. */
  async retry(catalogId: string, tableId: string, actionId: string, actor: string | null): Promise<Job> {
    const { job, target } = await this.get(catalogId, tableId, actionId);
    if (job.status !== "failed" && job.status !== "cancelled")
      throw conflict(`Action '${actionId}' is ${job.status}; only a failed or cancelled action is retried.`);
    return this.runs.again(job, target.table as LakeTable, actor);
  }

  private async queue(table: LakeTable, request: ActionRequest, queueing: Queueing, actor: string | null) {
    // A rewrite writes the file size the table's policy names, as the policy's own runs do.
    const targetFileSizeMb = REWRITE_ACTIONS.includes(request.action)
      ? await policyTargetFileSize(this.db, table)
      : undefined;
    const crunch = {
      skipRecipeCheck: true,
      actor,
      queueing,
      ...(targetFileSizeMb ? { targetFileSizeMb } : {}),
    };
    switch (request.action) {
      case "compress":
        return this.crunch.trigger(table.id, { whole_table: true }, crunch);
      case "compact":
        return this.crunch.trigger(table.id, { whole_table: true }, { ...crunch, kind: "optimize" });
      case "improve_layout":
        return this.crunch.trigger(table.id, { whole_table: true, layout: request.layout }, crunch);
      case "expire_snapshots":
        return this.vacuum.trigger(
          table.id,
          {
            mode: "lite",
            dry_run: request.dry_run,
            ...(request.retention_hours !== undefined ? { retention_hours: request.retention_hours } : {}),
          },
          actor,
          // Without shorten_retention a table whose own retention is longer keeps it.
          { queueing, keepTableRetention: !request.shorten_retention },
        );
      case "expire_partitions":
        return this.expiration.trigger(
          table.id,
          {
            dry_run: request.dry_run,
            ...(request.retention_days !== undefined ? { retention_days: request.retention_days } : {}),
            ...(request.partition_column !== undefined ? { partition_column: request.partition_column } : {}),
          },
          actor,
          queueing,
        );
    }
  }

  /** `schedule.at` when it is later than now; 422 naming it beyond `MAX_SCHEDULE_DAYS`. */
  private scheduledAt(request: ActionRequest): Date | undefined {
    if (!request.schedule) return undefined;
    const at = new Date(request.schedule.at);
    const now = this.clock.now();
    if (at.getTime() - now.getTime() > MAX_SCHEDULE_DAYS * 86_400_000)
      throw invalidField("schedule.at", `at most ${MAX_SCHEDULE_DAYS} days ahead`);
    return at > now ? at : undefined;
  }

  /** Each parameter's default for this table, keyed `<action>.<name>`. */
  private async defaults(target: ActionTarget): Promise<Record<string, unknown>> {
    const { values } = await this.config.get();
    const format = target.synced.format?.toLowerCase() ?? "";
    return {
      "expire_snapshots.retention_hours": FORMAT_RETENTION_HOURS[format] ?? null,
      "expire_snapshots.shorten_retention": false,
      "expire_snapshots.dry_run": false,
      "expire_partitions.retention_days": values.default_partition_expiration_days,
      "expire_partitions.partition_column": target.table?.recipe?.date_filter_column ?? null,
      "expire_partitions.dry_run": false,
    };
  }
}

/**
 * The 422s of parameters the table decides: a retention below the format's default without
 * `shorten_retention`; a partition column that only onboarding could find, before it has.
 */
function checkParameters(request: ActionRequest, target: ActionTarget): void {
  if (request.action === "expire_snapshots" && request.retention_hours !== undefined) {
    const floor = FORMAT_RETENTION_HOURS[target.synced.format?.toLowerCase() ?? ""];
    if (floor !== undefined && request.retention_hours < floor && !request.shorten_retention)
      throw invalidField(
        "retention_hours",
        `${request.retention_hours} h is below the ${target.synced.format} default of ${floor} h; send shorten_retention: true to shorten it on purpose`,
      );
  }
  if (
    request.action === "expire_partitions" &&
    request.partition_column === undefined &&
    !target.table?.recipe
  )
    throw invalidField(
      "partition_column",
      `required: '${target.synced.fullName}' is not onboarded yet, so its date filter column is not known; name the date partition column`,
    );
}
