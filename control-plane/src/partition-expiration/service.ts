/**
 * Partition expiration (document 1): delete-only expiration of a Delta table's old date
 * partitions. The agent commits `remove` actions for the files of partitions dated before
 * `as_of - retention_days` and reports them; the files stay in storage as PENDING_DELETE records
 * (`pending-deletions/record.ts`) until hard-delete, and a recover commits them back.
 *
 * A validate (`.../validate`) is the same job with `validate: true`: the agent answers whether the
 * policy can run and what would expire, and writes nothing. A user waits for it, so:
 *
 * - it is queued only while a connected agent may run it (`mayRun`: the kind, and an allow list
 *   covering the table's location); otherwise a 503 says so and nothing is queued;
 * - the request then waits for the job's end for up to `preflightWaitMs` (`jobs/wait.ts`, no
 *   transaction held) and answers with the job, ended or not (the route picks 200 or 202).
 *
 * The kind, its precondition and its overlap rule (validates take no part) are declared in `kind.ts`.
 */
import type { Clock } from "@lakesmith/shared";
import { describeKey } from "@lakesmith/shared/locations";
import { PARTITION_EXPIRATION_KIND, type PartitionExpirationPayload } from "@lakesmith/shared/maintenance";
import { type Abilities, mayRun } from "../agents/routing.ts";
import type { ConfigService } from "../config/service.ts";
import type { Job, JobStatus, LakeTable } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, invalidField, notFound } from "../http/problem.ts";
import { jobOnTable, type NewJob, type Queueing } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { TERMINAL_STATUSES } from "../jobs/state.ts";
import { checkPrecondition, listOfTable, triggerOnTable } from "../jobs/triggers.ts";
import { utcDate } from "../schedules/timing.ts";
import type { TableService } from "../tables/service.ts";
import type { PartitionExpirationTrigger } from "./schemas.ts";

export class PartitionExpirationService {
  constructor(
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly config: ConfigService,
  ) {}

  /**
   * Queues an expiration of a Delta table. 404 unknown table; 409 other formats or an active
   * expiration; 422 on partition_column when the recipe rules it out. `queueing` overrides the
   * manual trigger's `trigger: "manual"`, now.
   */
  async trigger(
    tableId: string,
    body: PartitionExpirationTrigger,
    actor: string | null,
    queueing: Queueing = {},
  ): Promise<Job> {
    const { table, job } = await this.planned(tableId, body, { validate: false, actor });
    return triggerOnTable(this.jobs, table, { ...job, ...queueing });
  }

  /**
   * Queues a preflight of the policy and waits for its answer (see the header). The same refusals
   * as `trigger`, and a 503 when none of the `connected` agents may run it. `answered` says whether
   * the job ended within the wait.
   */
  async validate(
    tableId: string,
    body: PartitionExpirationTrigger,
    options: { actor: string | null; connected: Abilities; signal?: AbortSignal },
  ): Promise<{ job: Job; answered: boolean }> {
    const { table, job } = await this.planned(tableId, body, { validate: true, actor: options.actor });
    const routing = { kind: job.kind, ...this.jobs.routingOf(jobOnTable(table, job)) };
    if (!options.connected.some((agent) => mayRun(agent, routing)))
      throw noAgentFor(table, routing.locations, options.connected);
    const queued = await triggerOnTable(this.jobs, table, job);
    const latest = (await this.jobs.waitForEnd(queued.id, undefined, options.signal)) ?? queued;
    return { job: latest, answered: TERMINAL_STATUSES.includes(latest.status) };
  }

  /** The table and the job a trigger or validate queues, after every check of the request. */
  private async planned(
    tableId: string,
    body: PartitionExpirationTrigger,
    options: { validate: boolean; actor: string | null },
  ): Promise<{ table: LakeTable; job: Omit<NewJob, "tableId"> }> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    // Before the partition column: a table of another format is a 409, whatever its columns.
    checkPrecondition(this.jobs, PARTITION_EXPIRATION_KIND, table);
    const column = partitionColumn(table, body.partition_column);
    const { values } = await this.config.get();
    const payload: PartitionExpirationPayload = {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      partition_column: column,
      retention_days: body.retention_days ?? values.default_partition_expiration_days,
      as_of: utcDate(this.clock.now()),
      dry_run: options.validate || body.dry_run,
      validate: options.validate,
      recipe: table.recipe ?? null,
    };
    return {
      table,
      job: { kind: PARTITION_EXPIRATION_KIND, payload, trigger: "manual", createdBy: options.actor },
    };
  }

  listOfTable(
    tableId: string,
    status: JobStatus | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Job>> {
    return listOfTable(
      this.jobs,
      async (id) => (await this.tables.find(id)) !== undefined,
      [PARTITION_EXPIRATION_KIND],
      { tableId, status, offset, limit },
    );
  }
}

/**
 * The column to expire on: the one asked for, else the recipe's date filter column. With a recipe
 * it must be a partition column; without one (onboarding not done) a column must be named.
 */
function partitionColumn(table: LakeTable, asked: string | undefined): string {
  const recipe = table.recipe;
  const columns = recipe?.partition_columns ?? [];
  const known = columns.length
    ? `its partition columns: ${columns.join(", ")}`
    : "it has no partition columns";
  if (asked !== undefined) {
    if (recipe && !columns.includes(asked))
      throw invalidField(
        "partition_column",
        `'${asked}' is not a partition column of table '${table.name}' (${known})`,
      );
    return asked;
  }
  if (!recipe)
    throw invalidField(
      "partition_column",
      `required: onboarding of table '${table.name}' is '${table.onboardingStatus}' and has not found its date filter column; name the date partition column`,
    );
  if (!recipe.date_filter_column)
    throw invalidField(
      "partition_column",
      `required: table '${table.name}' has no date filter column; name a date partition column (${known})`,
    );
  if (!columns.includes(recipe.date_filter_column))
    throw invalidField(
      "partition_column",
      `required: the date filter column '${recipe.date_filter_column}' of table '${table.name}' is not a partition column, so no partition can expire by it (${known})`,
    );
  return recipe.date_filter_column;
}

/** The 503 of a validate no connected agent may run: what is missing and what to do about it. */
function noAgentFor(table: LakeTable, locations: readonly string[], connected: Abilities): ApiError {
  const handlers = connected.filter((a) => a.kinds.includes(PARTITION_EXPIRATION_KIND));
  const why = handlers.length
    ? `the connected agents that run partition expiration allow ${handlers
        .map((a) => `${a.name}: ${a.allow.map(describeKey).join(", ") || "nothing"}`)
        .join("; ")}`
    : "no connected agent runs partition expiration";
  return new ApiError(
    503,
    `No connected agent may read table '${table.name}' at ${locations.map(describeKey).join(", ")}: ${why}. ` +
      "Connect an agent whose allow list (LAKESMITH_AGENT_ALLOW) covers the table's location and try again; nothing was queued.",
  );
}
