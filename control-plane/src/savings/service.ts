/**
 * Savings and metrics, read from the daily rollup (`rollup.ts`), never from job results.
 *
 * - A scope is every table (the `*` rows), one table (its rows) or a catalog (its own rows:
 *   what jobs of tables linked to one of its synced tables counted when they ended).
 * - Savings: one aggregate query over the scope's rows, the formulas of `formulas.ts` applied to
 *   the sums at the current settings. Metrics: one query grouped by day over the range, every
 *   missing day filled with zeros.
 * - Bounds: every scope reads one row per day with activity (its primary key's prefix); metrics
 *   ranges are at most `MAX_RANGE_DAYS` days.
 */
import type { Clock } from "@lakesmith/shared";
import { type AnyColumn, and, eq, gte, lte, type SQL, sql } from "drizzle-orm";
import { parseCatalogId } from "../catalogs/ids.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { catalogTables, lakeTables, savingsDaily } from "../db/schema.ts";
import { invalidField, notFound } from "../http/problem.ts";
import {
  bytesSaved,
  dollarsSaved,
  drrPercent,
  goalProgress,
  operationalCost,
  quarterOf,
} from "./formulas.ts";
import { ALL_TABLES, catalogKey } from "./rollup.ts";
import {
  DEFAULT_RANGE_DAYS,
  MAX_RANGE_DAYS,
  type MetricsDayWire,
  type MetricsRange,
  type MetricsWire,
  type SavingsWire,
} from "./schemas.ts";

const DAY_MS = 86_400_000;

/** Whose savings: every table, one table, or one catalog's tables. */
interface Scope {
  scope: SavingsWire["scope"];
  table_id: string | null;
  catalog_id: string | null;
  /** Which rollup rows belong to it. */
  rows: SQL;
}

const sum = (column: SQL | AnyColumn) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);

/** The sums every read takes, keyed as `MetricsDayWire`'s source figures. */
const SUMS = {
  rewrites: sum(savingsDaily.rewrites),
  bytesBefore: sum(savingsDaily.bytesBefore),
  bytesAfter: sum(savingsDaily.bytesAfter),
  filesBefore: sum(savingsDaily.filesBefore),
  filesAfter: sum(savingsDaily.filesAfter),
  partitionsCrunched: sum(savingsDaily.partitionsCrunched),
  partitionsDeleted: sum(savingsDaily.partitionsDeleted),
  filesDeleted: sum(savingsDaily.filesDeleted),
  bytesDeleted: sum(savingsDaily.bytesDeleted),
};
type Sums = { [K in keyof typeof SUMS]: number };

export class SavingsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  /** Savings of every table. */
  total(): Promise<SavingsWire> {
    return this.savings(this.allScope());
  }

  /** Savings of one Lakesmith table (`tables` row id); 404 when there is no such table. */
  async forTable(tableId: string): Promise<SavingsWire> {
    return this.savings(await this.tableScope(tableId));
  }

  /** Savings of a catalog's tables (document 2's `catalog_id`); 404 when no sync saw the catalog. */
  async forCatalog(catalogId: string): Promise<SavingsWire> {
    return this.savings(await this.catalogScope(catalogId));
  }

  /** The daily metrics of every table, one table or a catalog (`by`), over `range`. */
  async metrics(by: { tableId?: string; catalogId?: string }, range: MetricsRange): Promise<MetricsWire> {
    const { start, end } = this.rangeOf(range);
    const scope =
      by.tableId !== undefined
        ? await this.tableScope(by.tableId)
        : by.catalogId !== undefined
          ? await this.catalogScope(by.catalogId)
          : this.allScope();
    const rows = await this.db
      .select({ day: savingsDaily.day, ...SUMS })
      .from(savingsDaily)
      .where(and(scope.rows, gte(savingsDaily.day, start), lte(savingsDaily.day, end)))
      .groupBy(savingsDaily.day);
    const byDay = new Map(rows.map(({ day, ...sums }) => [day, sums]));
    const days: MetricsDayWire[] = [];
    const totals = emptySums();
    for (let at = Date.parse(`${start}T00:00:00Z`); at <= Date.parse(`${end}T00:00:00Z`); at += DAY_MS) {
      const date = new Date(at).toISOString().slice(0, 10);
      const sums = byDay.get(date) ?? emptySums();
      for (const key of Object.keys(totals) as (keyof Sums)[]) totals[key] += sums[key];
      days.push({ date, ...metricsOf(sums) });
    }
    const { rows: _, ...named } = scope;
    return { ...named, start, end, days, totals: metricsOf(totals) };
  }

  private async savings(scope: Scope): Promise<SavingsWire> {
    const quarter = quarterOf(this.clock.now());
    const inQuarter = (column: AnyColumn) =>
      sum(sql`case when ${savingsDaily.day} >= ${quarter.start} then ${column} else 0 end`);
    const [[row], { values }] = await Promise.all([
      this.db
        .select({
          ...SUMS,
          quarterBefore: inQuarter(savingsDaily.bytesBefore),
          quarterAfter: inQuarter(savingsDaily.bytesAfter),
        })
        .from(savingsDaily)
        .where(scope.rows),
      this.config.get(),
    ]);
    const s = row ?? { ...emptySums(), quarterBefore: 0, quarterAfter: 0 };
    const saved = bytesSaved(s.bytesBefore, s.bytesAfter);
    const dollars = dollarsSaved(saved, values);
    const goal = goalProgress(bytesSaved(s.quarterBefore, s.quarterAfter), this.clock.now(), values);
    const { rows: _, ...named } = scope;
    return {
      ...named,
      rewrites: s.rewrites,
      bytes_before: s.bytesBefore,
      bytes_after: s.bytesAfter,
      bytes_saved: saved,
      files_before: s.filesBefore,
      files_after: s.filesAfter,
      drr_percent: drrPercent(s.bytesBefore, s.bytesAfter),
      storage: {
        usd_per_gb_month: values.storage_cost_usd_per_gb_month,
        cloud_discount_percent: values.cloud_discount_percent,
        effective_usd_per_gb_month: dollars.effectiveRate,
        saved_usd_per_month: dollars.perMonth,
        projection_period_months: dollars.projectionMonths,
        projected_usd: dollars.projected,
      },
      goal: goal
        ? {
            quarterly_goal_pb: goal.goalPb,
            quarter: goal.quarter,
            start: goal.start,
            end: goal.end,
            bytes_saved: goal.bytesSaved,
            progress_percent: goal.percent,
          }
        : null,
      operational_cost: {
        usd_per_pb: values.operational_cost_usd_per_pb,
        bytes_processed: s.bytesBefore,
        estimate_usd: operationalCost(s.bytesBefore, values),
      },
      deletions: {
        partitions_deleted: s.partitionsDeleted,
        files_deleted: s.filesDeleted,
        bytes_deleted: s.bytesDeleted,
      },
    };
  }

  private allScope(): Scope {
    return { scope: "all", table_id: null, catalog_id: null, rows: eq(savingsDaily.tableId, ALL_TABLES) };
  }

  private async tableScope(tableId: string): Promise<Scope> {
    const [table] = await this.db
      .select({ id: lakeTables.id })
      .from(lakeTables)
      .where(eq(lakeTables.id, tableId));
    if (!table) throw notFound("Table", tableId);
    return { scope: "table", table_id: tableId, catalog_id: null, rows: eq(savingsDaily.tableId, tableId) };
  }

  private async catalogScope(catalogId: string): Promise<Scope> {
    const ref = parseCatalogId(catalogId);
    const seen =
      ref &&
      (await this.db
        .select({ one: sql`1` })
        .from(catalogTables)
        .where(and(eq(catalogTables.connectionId, ref.connectionId), eq(catalogTables.catalog, ref.catalog)))
        .limit(1));
    if (!ref || !seen?.length) throw notFound("Catalog", catalogId);
    return {
      scope: "catalog",
      table_id: null,
      catalog_id: catalogId,
      rows: eq(savingsDaily.tableId, catalogKey(ref)),
    };
  }

  /** The asked range with its defaults; 422 naming the field when it is backwards or too long. */
  private rangeOf(range: MetricsRange): { start: string; end: string } {
    const day = (at: number) => new Date(at).toISOString().slice(0, 10);
    const end = range.end ?? day(this.clock.now().getTime());
    const start = range.start ?? day(Date.parse(`${end}T00:00:00Z`) - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
    if (start > end) throw invalidField("start", `must not be after end (${end})`);
    const days = (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS + 1;
    if (days > MAX_RANGE_DAYS)
      throw invalidField("end", `the range ${start}..${end} spans ${days} days; at most ${MAX_RANGE_DAYS}`);
    return { start, end };
  }
}

function emptySums(): Sums {
  return {
    rewrites: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    filesBefore: 0,
    filesAfter: 0,
    partitionsCrunched: 0,
    partitionsDeleted: 0,
    filesDeleted: 0,
    bytesDeleted: 0,
  };
}

function metricsOf(s: Sums): Omit<MetricsDayWire, "date"> {
  return {
    bytes_crunched: s.bytesBefore,
    bytes_after: s.bytesAfter,
    bytes_saved: bytesSaved(s.bytesBefore, s.bytesAfter),
    partitions_crunched: s.partitionsCrunched,
    files_reduced: s.filesBefore - s.filesAfter,
    drr_percent: drrPercent(s.bytesBefore, s.bytesAfter),
    partitions_deleted: s.partitionsDeleted,
    files_deleted: s.filesDeleted,
    bytes_deleted: s.bytesDeleted,
  };
}
