/**
 * Document 2's managed tables: the synced tables at least one policy applies to (`managed_tables`,
 * kept by `policies/resolve.ts`), each with its state and, in detail, its effective policy value by
 * value with where each came from.
 *
 * - State: `disabled` (only disabled policies apply: it runs nothing), `paused` (the global or its
 *   catalog's emergency stop), `waiting` (it does not qualify yet, or onboarding has not finished:
 *   `waiting_reason` says which), else `active`.
 * - List: keyset on (full_name, connection_id) by index `managed_tables_list_idx`; a page reads at
 *   most `page_size + 1` rows past its token; `q` (a wildcard on the name) filters the same walk on
 *   the index's `name`. The total is the resolutions' counts per catalog, or with `q` a count over
 *   the name index.
 */
import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import { wildcardLike } from "../catalogs/directory.ts";
import { catalogId, parseTableId, tableId } from "../catalogs/ids.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import {
  catalogConnections,
  catalogTables,
  lakeTables,
  type ManagedTable,
  managedTables,
  policies,
  policyCatalogs,
} from "../db/schema.ts";
import { type PreparedSelect, preparedSelect } from "../db/statement-cache.ts";
import { keyAfter, keysetPage } from "../http/pagination.ts";
import { ApiError } from "../http/problem.ts";
import { iso } from "../jobs/view.ts";
import type { OpportunityService } from "../opportunities/service.ts";
import { opportunitiesView } from "../opportunities/view.ts";
import { effectiveActions } from "../policies/plan.ts";
import type { PolicyBody } from "../policies/schemas.ts";
import { factsOf } from "../policies/service.ts";
import { policyView } from "../policies/view.ts";
import type { SavingsService } from "../savings/service.ts";
import { catalogStopOf, connectionOf, effectivePolicyOf, lakeTableOf, syncedTableOf } from "./joins.ts";

export const MANAGED_STATES = ["active", "waiting", "paused", "disabled"] as const;

export class ManagedTableService {
  constructor(
    private readonly db: Db,
    private readonly config: ConfigService,
    private readonly opportunities: OpportunityService,
    private readonly savings: SavingsService,
  ) {}

  /** The list's prepared reads, by shape (`listStatements`). */
  private readonly lists = new Map<
    string,
    {
      page: PreparedSelect<{ m: ManagedTable; pausedAt: Date | null }>;
      total: PreparedSelect<{ n: number }>;
    }
  >();

  async list(filter: { q?: string | undefined; page_size: number; page_token?: string | undefined }) {
    const after = keyAfter(filter.page_token, 2);
    const q = filter.q;
    const statements = this.listStatements(q !== undefined, after !== undefined);
    const head = q === undefined ? "" : literalHead(q);
    const values = {
      limit: filter.page_size + 1,
      afterName: after?.[0] ?? "",
      afterConnection: after?.[1] ?? "",
      like: q === undefined ? "" : wildcardLike(q),
      lowerLike: q === undefined ? "" : wildcardLike(q).toLowerCase(),
      head,
      headEnd: `${head}\u{10FFFF}`,
    };
    const [rows, total, pausedAll] = await Promise.all([
      statements.page.all(values),
      statements.total.get(values),
      this.pausedAll(),
    ]);
    return keysetPage(
      rows,
      filter.page_size,
      Number(total?.n ?? 0),
      (r) => [r.m.fullName, r.m.connectionId],
      (r) => managedView(r.m, pausedAll, r.pausedAt),
    );
  }

  /**
   * The list's two reads, built and prepared once per shape (with or without `q`, first page or
   * not): values go in as placeholders, so every page is the same statement.
   * - The page walks index `managed_tables_list_idx` in order, filtering `q` on its `name`.
   * - The total: without `q`, the resolutions' counts per catalog; with it, a count over index
   *   `managed_tables_name_idx` within the range of (lower-cased) names that start with the
   *   pattern's literal head. SQLite's lower() and LIKE both fold ASCII letters only, so matching
   *   the lower-cased name is the same match, read from the index without the row.
   */
  private listStatements(filtered: boolean, paged: boolean) {
    const key = `${filtered}/${paged}`;
    const known = this.lists.get(key);
    if (known) return known;
    const p = (name: string) => sql.placeholder(name);
    const page = this.db
      .select({ m: managedTables, pausedAt: policyCatalogs.pausedAt })
      .from(managedTables)
      .leftJoin(policyCatalogs, catalogStopOf)
      .where(
        and(
          filtered ? sql`${managedTables.name} like ${p("like")} escape '\\'` : undefined,
          paged
            ? or(
                gt(managedTables.fullName, p("afterName")),
                and(
                  eq(managedTables.fullName, p("afterName")),
                  gt(managedTables.connectionId, p("afterConnection")),
                ),
              )
            : undefined,
        ),
      )
      .orderBy(asc(managedTables.fullName), asc(managedTables.connectionId))
      .limit(p("limit"));
    const lower = sql`lower(${managedTables.name})`;
    const total = filtered
      ? this.db
          .select({ n: sql<number>`count(*)` })
          .from(managedTables)
          .where(
            sql`${lower} >= ${p("head")} and ${lower} < ${p("headEnd")} and ${lower} like ${p("lowerLike")} escape '\\'`,
          )
      : this.db
          .select({ n: sql<number>`coalesce(sum(${policyCatalogs.managedCount}), 0)` })
          .from(policyCatalogs);
    const statements = { page: preparedSelect(this.db, page), total: preparedSelect(this.db, total) };
    this.lists.set(key, statements);
    return statements;
  }

  /** One managed table with its effective policy, value by value, and its Lakesmith table. */
  async get(tableIdText: string) {
    const parsed = parseTableId(tableIdText);
    const [row] = parsed
      ? await this.db
          .select({
            m: managedTables,
            pausedAt: policyCatalogs.pausedAt,
            synced: catalogTables,
            connectionType: catalogConnections.type,
            policy: policies,
            table: {
              id: lakeTables.id,
              name: lakeTables.name,
              onboardingStatus: lakeTables.onboardingStatus,
              onboardingError: lakeTables.onboardingError,
              recipe: lakeTables.recipe,
            },
          })
          .from(managedTables)
          .leftJoin(policyCatalogs, catalogStopOf)
          .leftJoin(catalogTables, syncedTableOf)
          .leftJoin(catalogConnections, connectionOf)
          .leftJoin(policies, effectivePolicyOf)
          .leftJoin(lakeTables, lakeTableOf)
          .where(
            and(
              eq(managedTables.connectionId, parsed.ref.connectionId),
              eq(managedTables.fullName, parsed.fullName),
            ),
          )
      : [];
    if (!row)
      throw new ApiError(
        404,
        `No managed table '${tableIdText}': no policy applies to it. GET /api/v1/managedtables lists managed tables.`,
      );
    const lakeId = row.table?.id;
    const [{ values }, opportunities, savings] = await Promise.all([
      this.config.get(),
      lakeId ? this.opportunities.ofTable(lakeId) : undefined,
      lakeId ? this.savings.forTable(lakeId) : undefined,
    ]);
    const facts = factsOf(
      { format: row.synced?.format ?? null, hasPartitions: row.synced?.hasPartitions ?? null },
      row.connectionType ?? null,
      row.table?.recipe ?? null,
    );
    const effective = row.policy
      ? {
          ...policyView(row.policy),
          actions_applied: effectiveActions(row.policy.body as PolicyBody, facts, values),
        }
      : null;
    return {
      ...managedView(row.m, values.policy_engine_paused, row.pausedAt),
      type: row.synced?.format?.toLowerCase() ?? null,
      size_bytes: row.synced?.sizeBytes ?? null,
      location: row.synced?.location ?? null,
      effective_policy: effective,
      opportunities:
        lakeId && opportunities
          ? opportunitiesView(lakeId, opportunities.latest, opportunities.active)
          : null,
      savings: savings ?? null,
      lake_table: row.table
        ? {
            id: row.table.id,
            name: row.table.name,
            onboarding_status: row.table.onboardingStatus,
            onboarding_error: row.table.onboardingError,
          }
        : null,
    };
  }

  private async pausedAll(): Promise<boolean> {
    return (await this.config.get()).values.policy_engine_paused;
  }
}

/** The literal head of a wildcard pattern (before its first `*` or `?`), lower-cased. */
function literalHead(q: string): string {
  return q.slice(0, q.search(/[*?]|$/)).toLowerCase();
}

/** The state of a managed table, from its row and the stops that cover it. */
export function stateOf(row: ManagedTable, pausedAll: boolean, pausedAt: Date | null) {
  if (!row.policyId) return "disabled" as const;
  if (pausedAll || pausedAt) return "paused" as const;
  if (row.waitingReason) return "waiting" as const;
  return "active" as const;
}

export function managedView(row: ManagedTable, pausedAll: boolean, pausedAt: Date | null) {
  const ref = { connectionId: row.connectionId, catalog: row.catalog };
  return {
    table_id: tableId(ref, row.fullName),
    catalog_id: catalogId(ref),
    full_name: row.fullName,
    namespace: row.schema,
    name: row.name,
    state: stateOf(row, pausedAll, pausedAt),
    waiting_reason: row.waitingReason,
    paused:
      pausedAll || pausedAt
        ? { global: pausedAll, catalog: pausedAt !== null, catalog_paused_at: iso(pausedAt) }
        : null,
    effective_policy_id: row.policyId,
    lake_table_id: row.lakeTableId,
    next_run_at: iso(row.nextRunAt),
    managed_since: row.managedSince.toISOString(),
  };
}
export type ManagedTableWire = ReturnType<typeof managedView>;
