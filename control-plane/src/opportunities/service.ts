/**
 * Table opportunities (document 2, managed table detail): the latest measurement of each table, and
 * when to measure again. A measurement is an `opportunity_scan` job (`kind.ts`); this service reads
 * what its finish hook stored and queues new scans.
 *
 * `enqueueIfStale` (for the policy engine, trigger `policy`) queues a scan when the table
 * - was never measured,
 * - was measured more than `STALE_AFTER_DAYS` days ago (covers writers Lakesmith does not see), or
 * - changed since: a succeeded job on it committed a version newer than the one measured (a crunch,
 *   an optimize, a partition expiration, a recover, an Iceberg vacuum);
 * and not while one of its scans is active. The dedupe key is the table, the UTC day and the version
 * known, so a repeated call queues nothing new, and a change on the same day queues once more. A
 * table no job can load (its catalog link is gone) is answered `unavailable`, never thrown.
 */
import type { Clock } from "@lakesmith/shared";
import {
  DEFAULT_SAMPLE_MAX_BYTES,
  DEFAULT_SAMPLE_MAX_FILES,
  OPPORTUNITY_SCAN_KIND,
  type OpportunityScanPayload,
} from "@lakesmith/shared/opportunities";
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { Db } from "../db/index.ts";
import { type Job, jobs, type LakeTable, type TableOpportunity, tableOpportunities } from "../db/schema.ts";
import { ApiError, notFound } from "../http/problem.ts";
import { jobOnTable } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { ACTIVE_STATUSES } from "../jobs/state.ts";
import { triggerOnTable } from "../jobs/triggers.ts";
import { utcDate } from "../schedules/timing.ts";
import type { TableService } from "../tables/service.ts";

/** A measurement older than this is taken again. */
export const STALE_AFTER_DAYS = 7;
const DAY_MS = 86_400_000;

/** Why `enqueueIfStale` queued a scan, or did not. */
export type StaleReason =
  | "never_measured"
  | "older_than_7_days"
  | "table_changed"
  | "fresh"
  | "scan_active"
  /** Due, but no job can load the table now (its catalog link is gone); `detail` says why. */
  | "unavailable";

/** A table row as the policy engine reads it (its `wire` copy left out). */
export type ScanTable = Omit<LakeTable, "wire">;

export interface StaleCheck {
  reason: StaleReason;
  /** The scan queued (or the one the day's dedupe key already named); null when none was due. */
  job: Job | null;
  /** Whether this call created `job`. */
  created: boolean;
  detail?: string;
}

export class OpportunityService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly catalogRefs: CatalogTableRefs,
  ) {}

  /** The table's latest measurement; undefined before the first. */
  async latest(tableId: string): Promise<TableOpportunity | undefined> {
    const [row] = await this.db
      .select()
      .from(tableOpportunities)
      .where(eq(tableOpportunities.tableId, tableId));
    return row;
  }

  /** The table's latest measurement and its active scan, if any; 404 for an unknown table. */
  async ofTable(tableId: string): Promise<{ latest: TableOpportunity | undefined; active: Job | undefined }> {
    if (!(await this.tables.find(tableId))) throw notFound("Table", tableId);
    const [latest, active] = await Promise.all([this.latest(tableId), this.activeScan(tableId)]);
    return { latest, active };
  }

  /** Queues a scan now (ad hoc); 404 unknown table, 409 while one of its scans is active. */
  async scanNow(tableId: string, actor: string | null): Promise<Job> {
    const table = await this.tables.find(tableId);
    if (!table) throw notFound("Table", tableId);
    return triggerOnTable(this.jobs, table, {
      kind: OPPORTUNITY_SCAN_KIND,
      payload: await this.payload(table),
      trigger: "manual",
      createdBy: actor,
    });
  }

  /** Queues a scan of `table` when its measurement is missing, old or behind the table (module comment). */
  async enqueueIfStale(table: ScanTable, now: Date = this.clock.now()): Promise<StaleCheck> {
    const [latest, active] = await Promise.all([this.latest(table.id), this.activeScan(table.id)]);
    if (active) return { reason: "scan_active", job: active, created: false };
    const committed = latest ? await this.committedSince(table.id, latest.measuredAt) : null;
    const reason: StaleReason = !latest
      ? "never_measured"
      : committed !== null && committed > latest.tableVersion
        ? "table_changed"
        : now.getTime() - latest.measuredAt.getTime() > STALE_AFTER_DAYS * DAY_MS
          ? "older_than_7_days"
          : "fresh";
    if (reason === "fresh") return { reason, job: null, created: false };
    const version = Math.max(committed ?? -1, latest?.tableVersion ?? -1);
    // The policy engine checks many tables a tick: one it can't load is an answer, not a failure.
    let payload: OpportunityScanPayload;
    try {
      payload = await this.payload(table);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      return { reason: "unavailable", job: null, created: false, detail: err.message };
    }
    const { job, created } = await this.jobs.enqueue(
      jobOnTable(table, {
        kind: OPPORTUNITY_SCAN_KIND,
        payload,
        trigger: "policy",
        dedupeKey: `${OPPORTUNITY_SCAN_KIND}:${table.id}:${utcDate(now)}:v${version}`,
      }),
    );
    return { reason, job, created };
  }

  /** The newest version a succeeded job committed to the table since `since`; null when none did. */
  private async committedSince(tableId: string, since: Date): Promise<number | null> {
    const version = sql<
      number | null
    >`max(cast(json_extract(${jobs.result}, '$.committed_version') as integer))`;
    const [row] = await this.db
      .select({ version })
      .from(jobs)
      .where(and(eq(jobs.tableId, tableId), eq(jobs.status, "succeeded"), gte(jobs.finishedAt, since)));
    return row?.version ?? null;
  }

  private async activeScan(tableId: string): Promise<Job | undefined> {
    const [job] = await this.db
      .select()
      .from(jobs)
      .where(
        and(
          eq(jobs.tableId, tableId),
          eq(jobs.kind, OPPORTUNITY_SCAN_KIND),
          sql`${jobs.status} in ${ACTIVE_STATUSES}`,
        ),
      )
      .orderBy(desc(jobs.createdAt))
      .limit(1);
    return job;
  }

  private async payload(table: ScanTable): Promise<OpportunityScanPayload> {
    const catalog = await this.catalogRefs.of(table);
    return {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      ...(catalog ? { catalog } : {}),
      target_file_size_mb: table.targetFileSizeMb,
      recipe: table.recipe ?? null,
      parquet_v2: table.parquetV2,
      sample_max_bytes: DEFAULT_SAMPLE_MAX_BYTES,
      sample_max_files: DEFAULT_SAMPLE_MAX_FILES,
    };
  }
}
