/**
 * Crunch jobs (document 1, "Crunch"): manual triggers and the lists and metrics of every crunch
 * and optimize job, manual or scheduled. A crunch is a row of `jobs` (kind `crunch`, or
 * `optimize`); the agent parses its payload with `CrunchPayloadSchema` and reports a
 * `CrunchResult`.
 *
 * A trigger over a range of a table partitioned by date fans out to one job per partition
 * (`fan-out.ts`). A table's crunches never overlap on a partition (`kind.ts` declares the rule): a
 * trigger while a crunch or optimize job of the table is active on any partition it covers is a
 * 409 naming that job; disjoint partitions are no conflict. A schedule's run is not refused: it
 * waits queued, since the offer holds it back while an overlapping one holds an agent.
 */
import type { Clock } from "@lakesmith/shared";
import { CRUNCH_KINDS, type CrunchKind, type CrunchPayload } from "@lakesmith/shared/jobs";
import { and, count, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { type Job, type JobStatus, jobs, type LakeTable } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, conflict, notFound } from "../http/problem.ts";
import type { Queueing } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { triggerSetOnTable } from "../jobs/triggers.ts";
import { addDays, utcDate } from "../schedules/timing.ts";
import type { TableService } from "../tables/service.ts";
import { crunchJobs } from "./fan-out.ts";
import { fanOutSettings } from "./partition-size.ts";
import { type CrunchTrigger, clusterColumnNames } from "./schemas.ts";

export interface CrunchFilter {
  tableId?: string | undefined;
  status?: JobStatus | undefined;
  jobType?: CrunchKind | undefined;
}

/** How a trigger runs: the manual route's, or a table action's (`table-actions/`). */
export interface CrunchOptions {
  skipRecipeCheck: boolean;
  actor: string | null;
  /** `optimize` bin-packs without re-sorting; `crunch` by default. */
  kind?: CrunchKind;
  /** Overrides `trigger: "manual"`, now. */
  queueing?: Queueing;
  /** The file size to write (a policy's); the table's own by default. */
  targetFileSizeMb?: number;
}

export class CrunchService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly config: ConfigService,
    private readonly catalogRefs: CatalogTableRefs,
  ) {}

  /**
   * Queues a crunch of the table, bypassing its schedule. 404 for an unknown table; 409 unless its
   * onboarding produced a recipe (or `skipRecipeCheck`), and 409 while another crunch is active.
   */
  async trigger(tableId: string, trigger: CrunchTrigger, options: CrunchOptions): Promise<Job> {
    const [first] = await this.triggerAll(tableId, trigger, options);
    if (!first) throw new Error("a crunch trigger queued no job");
    return first;
  }

  /**
   * `trigger`, answering every job it queued: one per partition when the range fans out
   * (`fan-out.ts`), else one. The set is queued all or none, and is a 409 while an active crunch
   * overlaps any of its partitions.
   */
  async triggerAll(tableId: string, trigger: CrunchTrigger, options: CrunchOptions): Promise<Job[]> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    if (!options.skipRecipeCheck && (table.onboardingStatus !== "active" || !table.recipe))
      throw conflict(
        `Onboarding has not produced the table's recipe: table '${table.name}' onboarding is '${table.onboardingStatus}'. ` +
          `Check GET /api/v1/onboarding/${table.id}/status, or send ?skip_recipe_check=true to crunch without a recipe.`,
      );
    const payload = await this.payload(table, trigger);
    if (options.targetFileSizeMb !== undefined) payload.target_file_size_mb = options.targetFileSizeMb;
    const { values } = await this.config.get();
    const request = {
      kind: options.kind ?? "crunch",
      payload,
      priority: trigger.priority,
      trigger: "manual",
      createdBy: options.actor,
      ...options.queueing,
    };
    const settings = await fanOutSettings(
      this.db,
      values.hourly_fanout_min_partition_size_gb,
      table.id,
      payload,
    );
    const [first, ...rest] = crunchJobs(table, request, settings);
    if (!first) throw new Error("a crunch request made no job");
    return triggerSetOnTable(this.jobs, table, [first, ...rest]);
  }

  /** A crunch or optimize job; 404 for any other id. */
  async get(id: string): Promise<Job> {
    const job = await this.jobs.get(id);
    if (!job || !(CRUNCH_KINDS as readonly string[]).includes(job.kind)) throw notFound("Crunch job", id);
    return job;
  }

  /**
   * Crunch and optimize jobs, newest first; `jobType` matches what a job ran as. One ordered read
   * per kind, merged here: `kind IN (...)` with ORDER BY sorts every crunch job ever (0.7 s at
   * 270,000 jobs), while each kind's read walks the (kind, created_at) or (table_id, kind,
   * created_at) index and stops after `offset + limit` rows (5 ms).
   */
  async list(filter: CrunchFilter, offset: number, limit: number): Promise<Page<Job>> {
    const ranAs = sql`coalesce(json_extract(${jobs.result}, '$.job_type'), ${jobs.kind})`;
    const where = (kinds: readonly string[]) =>
      and(
        ...[
          kinds.length === 1 ? eq(jobs.kind, kinds[0] as string) : inArray(jobs.kind, [...kinds]),
          filter.tableId !== undefined ? eq(jobs.tableId, filter.tableId) : undefined,
          filter.status ? eq(jobs.status, filter.status) : undefined,
          filter.jobType ? eq(ranAs, filter.jobType) : undefined,
        ].filter((c): c is SQL => c !== undefined),
      );
    const newestFirst = (a: Job, b: Job) =>
      b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    const [[total], ...perKind] = await Promise.all([
      this.db.select({ n: count() }).from(jobs).where(where(CRUNCH_KINDS)),
      ...CRUNCH_KINDS.map((kind) =>
        this.db
          .select()
          .from(jobs)
          .where(where([kind]))
          .orderBy(desc(jobs.createdAt), desc(jobs.id))
          .limit(offset + limit),
      ),
    ]);
    const items = perKind
      .flat()
      .sort(newestFirst)
      .slice(offset, offset + limit);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /**
   * A table's crunch jobs. 404 only when the table does not exist and never had one: job history
   * outlives a deleted table, as its inventory history does.
   */
  async listOfTable(
    tableId: string,
    filter: Omit<CrunchFilter, "tableId">,
    offset: number,
    limit: number,
  ): Promise<Page<Job>> {
    const page = await this.list({ ...filter, tableId }, offset, limit);
    if (page.total > 0 || (await this.tables.find(tableId))) return page;
    if ((await this.list({ tableId }, 0, 1)).total > 0) return page;
    throw new ApiError(404, `Table '${tableId}' does not exist and has no crunch jobs.`);
  }

  private async payload(table: LakeTable, trigger: CrunchTrigger): Promise<CrunchPayload> {
    const recipe = table.recipe ?? null;
    const { values } = await this.config.get();
    const backfill = trigger.backfill_start_date !== undefined && trigger.backfill_end_date !== undefined;
    const today = utcDate(this.clock.now());
    // Whole-table mode sends no range: the agent then works on every file of the table.
    const dateRange = trigger.whole_table
      ? undefined
      : backfill
        ? { start: trigger.backfill_start_date as string, end: trigger.backfill_end_date as string }
        : {
            start: addDays(today, -(trigger.lookback_start ?? 0)),
            end: addDays(today, -(trigger.lookback_end ?? 0)),
          };
    const catalog = await this.catalogRefs.of(table);
    const clusterColumns =
      trigger.cluster_columns !== undefined
        ? clusterColumnNames(trigger.cluster_columns).names
        : (recipe?.cluster_columns ?? []);
    return {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      ...(catalog ? { catalog } : {}),
      ...(dateRange ? { date_range: dateRange } : {}),
      ...(backfill && recipe?.date_filter_column ? { backfill_col: recipe.date_filter_column } : {}),
      target_file_size_mb: table.targetFileSizeMb,
      cluster_columns: clusterColumns,
      ...(trigger.layout ? { layout: trigger.layout } : {}),
      recipe,
      mutation_interval_minutes: values.mutation_interval_threshold_minutes,
      parquet_v2: table.parquetV2,
    };
  }
}
