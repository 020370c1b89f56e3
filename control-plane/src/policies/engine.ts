/**
 * The policy engine's step of the scheduler tick: it turns managed tables' effective policies into
 * jobs on the job core (trigger `policy`).
 *
 * Per tick:
 * 1. Catalogs with policies whose connection synced since they were last resolved are resolved
 *    again (`resolve.ts`): tables a sync added under a policy are picked up, tables it dropped let go.
 * 2. Up to `chunk` managed tables whose `next_run_at` has come (index `managed_tables_due_idx`),
 *    read with everything the decision needs in one joined read. For each, in order:
 *    - no effective policy (only disabled ones apply): nothing is scheduled;
 *    - the emergency stop (global setting, or the catalog's): no run is queued; it is due again at
 *      its next occurrence, so a resume needs no catch-up;
 *    - qualification (`min_qualifying_table_size_gb`, `min_existence_days`): it waits, saying why,
 *      until a sync (size) or the day it qualifies (existence);
 *    - no Lakesmith table yet: one is created through the catalog link (onboarding queued), at most
 *      `onboardLimit` a tick; a link the table can't take makes it wait with the reason;
 *    - onboarding not done: it waits (looked at again in a minute); failed: it waits with the error;
 *    - otherwise the runs due in [its due time, now] (`plan.ts`) become jobs, each keyed
 *      `policy:<table>:<run>:<occurrence>` so a repeated tick queues nothing twice, and it is due
 *      again at its next occurrence.
 * 3. The jobs are written in one set-based insert, then the tables' new due times in one set-based
 *    update (both carry their rows as one JSON value). Jobs of catalog-committed tables are held
 *    until the linked-jobs step gives them their catalog reference.
 * 4. In a tick with few tables due, up to 20 onboarded tables checked longest ago (each at most
 *    every 6 hours) have their opportunities measured again when stale (`enqueueIfStale`: missing,
 *    a week old, or behind a version a job committed since): background work that yields to runs.
 * Bounds: the work follows the due tables, not the managed total: an idle tick is one index probe.
 */
import type { Clock } from "@lakesmith/shared";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { and, asc, eq, isNotNull, lte, sql } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import { crunchJobs } from "../crunch/fan-out.ts";
import { fanOutSettings } from "../crunch/partition-size.ts";
import type { Db } from "../db/index.ts";
import {
  catalogConnections,
  catalogTables,
  lakeTables,
  managedTables,
  policies,
  policyCatalogs,
} from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import { ApiError } from "../http/problem.ts";
import { insertManyStatement, type NewJob } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { catalogStopOf, connectionOf, lakeTableOf, syncedTableOf } from "../managed-tables/joins.ts";
import type { PendingDeletionService } from "../pending-deletions/service.ts";
import { CATALOG_HOLD } from "../scheduler/fire.ts";
import type { TableService } from "../tables/service.ts";
import type { ActionFacts } from "./actions.ts";
import { destructiveJob, JOB_TABLE_COLUMNS, type JobTable } from "./jobs.ts";
import { type DueRun, dueRuns, type EffectiveAction, effectiveActions } from "./plan.ts";
import { resolve } from "./resolve.ts";
import type { PolicyBody } from "./schemas.ts";
import { factsOf } from "./service.ts";
import { dayBefore } from "./timing.ts";

const MINUTE = 60_000;
const GIB = 2 ** 30;
const DAY_MS = 86_400_000;

export interface PolicyTick {
  /** Catalogs resolved again after a sync. */
  resolved: number;
  /** Managed tables looked at. */
  due: number;
  /** Jobs queued. */
  queued: number;
  /** Lakesmith tables created (onboarding queued). */
  onboarded: number;
  /** Onboarded tables whose opportunities were checked (a scan queued when stale). */
  scanChecks: number;
}

export interface PolicyEngineOptions {
  /** Due tables per tick. */
  chunk?: number;
  /** Lakesmith tables created per tick. */
  onboardLimit?: number;
  /** Measures managed tables' opportunities when stale (`opportunities/service.ts`); none when absent. */
  opportunities?: { enqueueIfStale(table: JobTable, now: Date): Promise<unknown> };
  /** Opportunity checks per tick. */
  scanLimit?: number;
  /** How often one table's opportunities are checked at most. */
  scanCheckIntervalMs?: number;
}

export class PolicyEngine {
  private readonly chunk: number;
  private readonly onboardLimit: number;
  private readonly dueQuery: ReturnType<typeof dueQuery>;
  private readonly scanLimit: number;
  private readonly scanCheckIntervalMs: number;
  /** `actionsOf`'s answers, for the tick in progress. */
  private readonly tickActions = new Map<string, EffectiveAction[]>();
  private readonly opportunities: PolicyEngineOptions["opportunities"];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    private readonly tables: TableService,
    private readonly jobs: JobService,
    private readonly deletions: PendingDeletionService,
    options: PolicyEngineOptions = {},
  ) {
    this.chunk = options.chunk ?? 1000;
    this.onboardLimit = options.onboardLimit ?? 100;
    this.dueQuery = dueQuery(db);
    this.scanLimit = options.scanLimit ?? 20;
    this.scanCheckIntervalMs = options.scanCheckIntervalMs ?? 6 * 3_600_000;
    this.opportunities = options.opportunities;
  }

  async tick(now: Date = this.clock.now()): Promise<PolicyTick> {
    const resolved = await this.resolveSynced(now);
    const rows = await this.dueRows(now);
    const outcome: PolicyTick = { resolved, due: rows.length, queued: 0, onboarded: 0, scanChecks: 0 };
    // Opportunity checks are background work: they yield to a tick with many due tables.
    if (rows.length < this.chunk / 2) outcome.scanChecks = await this.checkOpportunities(now);
    if (rows.length === 0) return outcome;
    const { values } = await this.config.get();
    this.tickActions.clear();
    const bodies = await this.bodiesOf(rows);
    const queued: NewJob[] = [];
    const moved: {
      c: string;
      f: string;
      next: number | null;
      waiting: string | null;
      lake: string | null;
    }[] = [];
    for (const row of rows) {
      const decision = await this.decide(row, now, values, outcome, bodies);
      queued.push(...decision.jobs);
      moved.push({
        c: row.m.connectionId,
        f: row.m.fullName,
        next: decision.next?.getTime() ?? null,
        waiting: decision.waiting,
        lake: decision.lakeTableId,
      });
    }
    outcome.queued = queued.length;
    // The jobs first: a tick that dies between the two statements leaves the tables due, and the
    // next tick's jobs carry the same dedupe keys, so nothing runs twice and nothing is skipped.
    if (queued.length > 0) await insertManyStatement(this.jobs.engine, queued);
    const u = sql`json_each(${JSON.stringify(moved)})`;
    const field = (key: string) => sql.raw(`json_extract(u.value, '$.${key}')`);
    await this.db
      .update(managedTables)
      .set({
        nextRunAt: sql`${field("next")}`,
        waitingReason: sql`${field("waiting")}`,
        lakeTableId: sql`${field("lake")}`,
        updatedAt: now,
      })
      .from(sql`${u} u`)
      .where(
        and(
          sql`${managedTables.connectionId} = ${field("c")}`,
          sql`${managedTables.fullName} = ${field("f")}`,
        ),
      );
    if (outcome.queued > 0) this.jobs.notifyWork();
    return outcome;
  }

  /**
   * Checks the opportunities of the onboarded managed tables checked longest ago (never first), at
   * most `scanLimit` a tick and each at most every `scanCheckIntervalMs`: a scan is queued when the
   * measurement is missing, a week old, or behind a version a job committed since.
   */
  private async checkOpportunities(now: Date): Promise<number> {
    if (!this.opportunities) return 0;
    const rows = await this.db
      .select({
        m: { connectionId: managedTables.connectionId, fullName: managedTables.fullName },
        table: JOB_TABLE_COLUMNS,
      })
      .from(managedTables)
      .innerJoin(lakeTables, lakeTableOf)
      .where(
        and(
          isNotNull(managedTables.lakeTableId),
          sql`(${managedTables.opportunitiesCheckedAt} is null or ${managedTables.opportunitiesCheckedAt} < ${now.getTime() - this.scanCheckIntervalMs})`,
          eq(lakeTables.onboardingStatus, "active"),
          isNotNull(managedTables.policyId),
        ),
      )
      .orderBy(asc(managedTables.opportunitiesCheckedAt))
      .limit(this.scanLimit);
    for (const row of rows) {
      await this.opportunities.enqueueIfStale(row.table, now);
      await this.db
        .update(managedTables)
        .set({ opportunitiesCheckedAt: now })
        .where(
          and(eq(managedTables.connectionId, row.m.connectionId), eq(managedTables.fullName, row.m.fullName)),
        );
    }
    return rows.length;
  }

  /** Resolves again the catalogs whose connection finished a sync after their last resolution. */
  private async resolveSynced(now: Date): Promise<number> {
    const stale = await this.db
      .select({ connectionId: policyCatalogs.connectionId, catalog: policyCatalogs.catalog })
      .from(policyCatalogs)
      .innerJoin(catalogConnections, eq(catalogConnections.id, policyCatalogs.connectionId))
      .where(
        and(
          isNotNull(catalogConnections.lastSyncedAt),
          sql`${catalogConnections.lastSyncedAt} > coalesce(${policyCatalogs.resolvedAt}, 0)`,
        ),
      );
    for (const ref of stale) await resolve(this.db, ref, { kind: "catalog" }, now);
    return stale.length;
  }

  /** The bodies of the due tables' policies, read once each (a tick's tables share few). */
  private async bodiesOf(rows: DueRow[]): Promise<Map<string, PolicyBody>> {
    const ids = [...new Set(rows.map((r) => r.m.policyId).filter((id): id is string => id !== null))];
    const found = await this.db
      .select({ id: policies.id, body: policies.body })
      .from(policies)
      .where(sql`${policies.id} in (select value from json_each(${JSON.stringify(ids)}))`);
    return new Map(found.map((p) => [p.id, p.body as PolicyBody]));
  }

  /** Up to `chunk` managed tables due by `now`, with all the decision needs (`dueQuery`). */
  private dueRows(now: Date) {
    return this.dueQuery.all({ now: now.getTime(), limit: this.chunk });
  }

  private async decide(
    row: DueRow,
    now: Date,
    values: Settings,
    outcome: PolicyTick,
    bodies: Map<string, PolicyBody>,
  ): Promise<{ jobs: NewJob[]; next: Date | null; waiting: string | null; lakeTableId: string | null }> {
    const lakeTableId = row.table?.id ?? row.m.lakeTableId;
    const wait = (waiting: string, next: Date | null) => ({ jobs: [], next, waiting, lakeTableId });
    const body = row.m.policyId ? bodies.get(row.m.policyId) : undefined;
    if (!row.m.policyId || !body) return { jobs: [], next: null, waiting: null, lakeTableId };
    const facts = factsOf(
      { format: row.synced?.format ?? null, hasPartitions: row.synced?.hasPartitions ?? null },
      row.connection?.type ?? null,
      row.table?.recipe ?? null,
    );
    const actions = this.actionsOf(row.m.policyId, body, facts, values);
    const paused = values.policy_engine_paused || row.pausedAt !== null;
    const size = row.synced?.sizeBytes ?? null;
    if (size !== null && size < values.min_qualifying_table_size_gb * GIB)
      return wait(
        `does not qualify yet: ${gib(size)} GB is below min_qualifying_table_size_gb (${values.min_qualifying_table_size_gb} GB); a later sync checks again`,
        null,
      );
    const since = row.synced?.firstSyncedAt ?? row.m.managedSince;
    const qualifiesAt = since.getTime() + values.min_existence_days * DAY_MS;
    if (qualifiesAt > now.getTime())
      return wait(
        `does not qualify yet: known for less than min_existence_days (${values.min_existence_days} days); qualifies at ${new Date(qualifiesAt).toISOString()}`,
        new Date(qualifiesAt),
      );
    const table = row.table;
    if (!table) {
      if (outcome.onboarded >= this.onboardLimit) return wait("onboarding: queued behind other tables", now);
      const created = await this.onboard(row);
      if (typeof created === "string") return wait(created, null);
      outcome.onboarded++;
      return {
        jobs: [],
        next: new Date(now.getTime() + MINUTE),
        waiting: "onboarding",
        lakeTableId: created.id,
      };
    }
    if (table.onboardingStatus === "failed")
      return wait(
        `onboarding failed: ${table.onboardingError ?? "no reason given"}; retry with POST /api/v1/onboarding/${table.id}/retry`,
        null,
      );
    if (table.onboardingStatus !== "active") return wait("onboarding", new Date(now.getTime() + MINUTE));
    const { runs, next } = dueRuns(actions, row.m.nextRunAt ?? now, now);
    if (paused) return { jobs: [], next, waiting: null, lakeTableId };
    const jobs: NewJob[] = [];
    for (const run of runs) jobs.push(...(await this.jobsOf(table, run, values)));
    return { jobs, next, waiting: null, lakeTableId };
  }

  /**
   * The policy's actions for tables of `facts`, worked out once per policy and kind of table a tick
   * (a tick's due tables share few policies).
   */
  private actionsOf(policyId: string, body: PolicyBody, facts: ActionFacts, values: Settings) {
    const key = `${policyId}|${facts.format}|${facts.catalogCommitted}|${facts.partitioned}`;
    let actions = this.tickActions.get(key);
    if (!actions) {
      actions = effectiveActions(body, facts, values);
      this.tickActions.set(key, actions);
    }
    return actions;
  }

  /** Creates the Lakesmith table of a managed catalog table; the refusal's reason when it can't. */
  private async onboard(row: DueRow): Promise<JobTable | string> {
    // A table onboarded meanwhile by other means (an ad-hoc action, POST /api/v1/tables) is adopted:
    // the oldest one linked to the synced table, as actions and runs pick it.
    const [linked] = await this.db
      .select(JOB_TABLE_COLUMNS)
      .from(lakeTables)
      .where(
        and(
          eq(lakeTables.catalogConnectionId, row.m.connectionId),
          eq(lakeTables.catalogFullName, row.m.fullName),
        ),
      )
      .orderBy(asc(lakeTables.createdAt))
      .limit(1);
    if (linked) return linked;
    const name = lakeTableName(row.connection?.name ?? row.m.connectionId, row.m.fullName);
    try {
      return await this.tables.create(
        {
          name,
          catalog_connection_id: row.m.connectionId,
          catalog_table: row.m.fullName,
          priority: "P2",
          target_file_size_mb: 512,
          parquet_v2: false,
        },
        null,
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return `can't be onboarded: ${err.message}`;
    }
  }

  private async jobsOf(table: JobTable, run: DueRun, values: Settings): Promise<NewJob[]> {
    const held = table.catalogConnectionId !== null;
    const base = { table_id: table.id, uri: table.uri, format: table.format };
    const queueing = {
      trigger: "policy",
      createdBy: null,
      dedupeKey: `policy:${table.id}:${run.group}:${run.at.toISOString()}`,
      ...(held ? { notBefore: CATALOG_HOLD } : {}),
    };
    if (run.group === "rewrite") {
      const recipe = table.recipe ?? null;
      const payload: CrunchPayload = {
        ...base,
        target_file_size_mb: run.targetFileSizeMb ?? table.targetFileSizeMb,
        recipe,
        parquet_v2: table.parquetV2,
        ...(recipe?.date_filter_column
          ? { date_range: { start: dayBefore(run.at, run.lookbackDays), end: dayBefore(run.at, 1) } }
          : {}),
        ...(values.mutation_interval_threshold_minutes !== null
          ? { mutation_interval_minutes: values.mutation_interval_threshold_minutes }
          : {}),
        ...(run.layout ? { layout: run.layout } : {}),
      };
      const settings = await fanOutSettings(
        this.db,
        values.hourly_fanout_min_partition_size_gb,
        table.id,
        payload,
      );
      return crunchJobs(table, { kind: run.kind, payload, ...queueing }, settings);
    }
    const keep = run.group === "expire_snapshots" ? await this.deletions.keepPaths(table.id) : [];
    return [destructiveJob(table, run, { dryRun: false, keep, queueing })];
  }
}

/**
 * The due read, prepared once: the due managed tables by `next_run_at` (index
 * `managed_tables_due_idx`), each with its synced table's size, age and format, its connection,
 * its Lakesmith table's job columns and its catalog's stop. Values: `now` (epoch ms), `limit`.
 */
function dueQuery(db: Db) {
  return preparedSelect(
    db,
    db
      .select({
        m: managedTables,
        synced: {
          sizeBytes: catalogTables.sizeBytes,
          firstSyncedAt: catalogTables.firstSyncedAt,
          format: catalogTables.format,
          hasPartitions: catalogTables.hasPartitions,
        },
        connection: { type: catalogConnections.type, name: catalogConnections.name },
        table: JOB_TABLE_COLUMNS,
        pausedAt: policyCatalogs.pausedAt,
      })
      .from(managedTables)
      .leftJoin(catalogTables, syncedTableOf)
      .leftJoin(catalogConnections, connectionOf)
      .leftJoin(lakeTables, lakeTableOf)
      .leftJoin(policyCatalogs, catalogStopOf)
      .where(and(isNotNull(managedTables.nextRunAt), lte(managedTables.nextRunAt, sql.placeholder("now"))))
      .orderBy(asc(managedTables.nextRunAt))
      .limit(sql.placeholder("limit")),
  );
}

type DueRow = Awaited<ReturnType<PolicyEngine["dueRows"]>>[number];
type Settings = Awaited<ReturnType<ConfigService["get"]>>["values"];

const gib = (bytes: number) => (bytes / GIB).toFixed(3);

/**
 * The Lakesmith table name of a managed catalog table: `<connection name>.<full name>`, with
 * characters a table name can't hold replaced by `_`, at most 255 characters.
 */
export function lakeTableName(connectionName: string, fullName: string): string {
  const name = `${connectionName}.${fullName}`.replace(/[^A-Za-z0-9_.$-]/g, "_").replace(/^[.$-]+/, "");
  return name.slice(0, 255) || "table";
}
