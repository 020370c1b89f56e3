/**
 * Policies (document 2): create at catalog, prefix or table scope, read, replace, enable, disable,
 * delete, by the catalog's paths and by a managed table's.
 *
 * - One policy per scope: a second POST on the same scope replaces the first (200; 201 when new),
 *   keeping its id and bumping its `version`.
 * - A table policy is checked against the table (`actions.ts`): an action it can't take is a 422
 *   naming `actions.<action>`. A catalog or prefix policy may name actions some of its tables can't
 *   take: those tables skip them and say so (managed table detail, preview).
 * - Every change resolves the policy's scope in the same call (`resolve.ts`): the tables it covers
 *   become managed, change effective policy, or stop being managed when their last policy goes.
 * - Through a table's path, a catalog or prefix policy can be read, enabled and disabled (that acts
 *   on every table it covers, as the route says), never deleted: that is refused with the catalog path.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { and, asc, eq, gt, inArray, or, sql } from "drizzle-orm";
import { type CatalogRef, catalogId, parseCatalogId, parseTableId } from "../catalogs/ids.ts";
import type { Db } from "../db/index.ts";
import {
  type CatalogTable,
  catalogConnections,
  catalogTables,
  lakeTables,
  managedTables,
  type Policy,
  policies,
  policyCatalogs,
} from "../db/schema.ts";
import { type KeysetPage, keyAfter, keysetPage } from "../http/pagination.ts";
import { ApiError, conflict, invalidField } from "../http/problem.ts";
import { type Action, type ActionFacts, unsupportedReason } from "./actions.ts";
import { type ResolveScope, resolveStatements } from "./resolve.ts";
import type { PolicyBody } from "./schemas.ts";
import { type PolicyWire, policyView } from "./view.ts";

export type PolicyTarget =
  | { scope: "catalog" }
  | { scope: "prefix"; prefix: string }
  | { scope: "table"; tableId: string };

export class PolicyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Creates the policy of a scope, or replaces the one it has. */
  async put(
    catalogIdText: string,
    target: PolicyTarget,
    body: PolicyBody,
    actor: string | null,
  ): Promise<{ policy: PolicyWire; created: boolean }> {
    const ref = await this.liveCatalog(catalogIdText);
    let scopeTarget = "";
    if (target.scope === "prefix") scopeTarget = target.prefix;
    if (target.scope === "table") {
      const table = await this.liveTable(target.tableId, ref);
      checkActions(body, await this.factsOf(table));
      scopeTarget = table.fullName;
    }
    const now = this.clock.now();
    const existing = await this.ofScope(ref, target.scope, scopeTarget);
    const upsert = this.db
      .insert(policies)
      .values({
        id: newId("pol"),
        connectionId: ref.connectionId,
        catalog: ref.catalog,
        scope: target.scope,
        target: scopeTarget,
        enabled: body.enabled,
        body,
        createdBy: actor,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [policies.connectionId, policies.catalog, policies.scope, policies.target],
        set: {
          enabled: body.enabled,
          body,
          version: sql`${policies.version} + 1`,
          updatedAt: now,
        },
      })
      .returning();
    const [[row]] = await this.db.batch([
      upsert,
      ...this.changed(ref, scopeOf(target.scope, scopeTarget), now),
    ]);
    if (!row) throw new Error("policy upsert returned no row");
    if (existing) await this.rearm(row.id, now);
    return { policy: policyView(row), created: !existing };
  }

  /** The policy of one scope of a catalog (`target`: a prefix, a table's full name, "" for the catalog's). */
  async ofScope(ref: CatalogRef, scope: Policy["scope"], target: string): Promise<Policy | undefined> {
    const [row] = await this.db
      .select()
      .from(policies)
      .where(
        and(
          eq(policies.connectionId, ref.connectionId),
          eq(policies.catalog, ref.catalog),
          eq(policies.scope, scope),
          eq(policies.target, target),
        ),
      );
    return row;
  }

  /** The catalog's policies: the catalog's, then prefixes, then tables, each by target. */
  async list(
    catalogIdText: string,
    filter: { scope?: Policy["scope"]; page_size: number; page_token?: string | undefined },
  ): Promise<KeysetPage<PolicyWire>> {
    const ref = await this.liveCatalog(catalogIdText);
    const after = keyAfter(filter.page_token, 2);
    const order = sql`case ${policies.scope} when 'catalog' then 0 when 'prefix' then 1 else 2 end`;
    const where = and(
      eq(policies.connectionId, ref.connectionId),
      eq(policies.catalog, ref.catalog),
      filter.scope ? eq(policies.scope, filter.scope) : undefined,
    );
    const [rows, [total]] = await Promise.all([
      this.db
        .select()
        .from(policies)
        .where(
          and(
            where,
            after &&
              or(
                gt(order, Number(after[0])),
                and(eq(order, Number(after[0])), gt(policies.target, after[1] as string)),
              ),
          ),
        )
        .orderBy(order, asc(policies.target))
        .limit(filter.page_size + 1),
      this.db.select({ n: sql<number>`count(*)` }).from(policies).where(where),
    ]);
    return keysetPage(
      rows,
      filter.page_size,
      Number(total?.n ?? 0),
      (r) => [String(rankOf(r.scope)), r.target],
      policyView,
    );
  }

  /** The policy row of a catalog; 404 when the catalog has no such policy. */
  async find(catalogIdText: string, policyId: string): Promise<Policy> {
    return this.inCatalog(catalogIdText, policyId);
  }

  async get(catalogIdText: string, policyId: string): Promise<PolicyWire> {
    return policyView(await this.inCatalog(catalogIdText, policyId));
  }

  /** Replaces the body of a policy found by id (scope and target stay). */
  async replace(catalogIdText: string, policyId: string, body: PolicyBody): Promise<PolicyWire> {
    const row = await this.inCatalog(catalogIdText, policyId);
    if (row.scope === "table") checkActions(body, await this.factsOf(await this.syncedRow(row)));
    return this.update(row, { body, enabled: body.enabled });
  }

  async setEnabled(catalogIdText: string, policyId: string, enabled: boolean): Promise<PolicyWire> {
    return this.update(await this.inCatalog(catalogIdText, policyId), { enabled });
  }

  async delete(catalogIdText: string, policyId: string): Promise<void> {
    await this.remove(await this.inCatalog(catalogIdText, policyId));
  }

  // --- through a managed table's path ------------------------------------------------------------

  /** The policies that apply to a table, most specific first; the first enabled one is effective. */
  async forTable(tableIdText: string): Promise<(PolicyWire & { effective: boolean })[]> {
    const { ref, fullName, schema } = await this.managed(tableIdText);
    const rows = await this.db
      .select()
      .from(policies)
      .where(
        and(
          eq(policies.connectionId, ref.connectionId),
          eq(policies.catalog, ref.catalog),
          or(
            eq(policies.scope, "catalog"),
            and(eq(policies.scope, "table"), eq(policies.target, fullName)),
            and(eq(policies.scope, "prefix"), inArray(policies.target, ancestors(schema))),
          ),
        ),
      );
    rows.sort((a, b) => rankOf(b.scope) - rankOf(a.scope) || b.target.length - a.target.length);
    const effective = rows.find((r) => r.enabled)?.id;
    return rows.map((r) => ({ ...policyView(r), effective: r.id === effective }));
  }

  async getForTable(tableIdText: string, policyId: string): Promise<PolicyWire & { effective: boolean }> {
    const found = (await this.forTable(tableIdText)).find((p) => p.policy_id === policyId);
    if (!found) throw noPolicyForTable(tableIdText, policyId);
    return found;
  }

  async setEnabledForTable(tableIdText: string, policyId: string, enabled: boolean): Promise<PolicyWire> {
    const found = await this.getForTable(tableIdText, policyId);
    return this.setEnabled(found.catalog_id, policyId, enabled);
  }

  /** Deletes the table's own policy; a catalog or prefix policy is refused (409) with its catalog path. */
  async deleteForTable(tableIdText: string, policyId: string): Promise<void> {
    const found = await this.getForTable(tableIdText, policyId);
    if (found.scope !== "table")
      throw conflict(
        `Policy '${policyId}' is the ${found.scope === "catalog" ? "catalog's default policy" : `default policy of prefix '${found.prefix}'`}; deleting it would affect every table it covers, not only '${tableIdText}'. Delete it with DELETE /api/v1/catalogs/${found.catalog_id}/policies/${policyId}, or give this table its own policy with POST /api/v1/catalogs/${found.catalog_id}/tables/${encodeURIComponent(tableIdText)}/policies.`,
      );
    await this.delete(found.catalog_id, policyId);
  }

  // --- emergency stop per catalog ----------------------------------------------------------------

  async setPaused(
    catalogIdText: string,
    paused: boolean,
    actor: string | null,
  ): Promise<{ paused_at: string | null }> {
    const ref = await this.liveCatalog(catalogIdText);
    const now = this.clock.now();
    const value = paused ? { pausedAt: now, pausedBy: actor } : { pausedAt: null, pausedBy: null };
    await this.db
      .insert(policyCatalogs)
      .values({ connectionId: ref.connectionId, catalog: ref.catalog, ...value })
      .onConflictDoUpdate({
        target: [policyCatalogs.connectionId, policyCatalogs.catalog],
        // Pausing twice keeps the first time. Resuming needs no catch-up: a paused table kept its next time.
        set: paused
          ? {
              pausedAt: sql`coalesce(${policyCatalogs.pausedAt}, ${now.getTime()})`,
              pausedBy: sql`coalesce(${policyCatalogs.pausedBy}, ${actor})`,
            }
          : value,
      });
    const [row] = await this.db
      .select({ pausedAt: policyCatalogs.pausedAt })
      .from(policyCatalogs)
      .where(and(eq(policyCatalogs.connectionId, ref.connectionId), eq(policyCatalogs.catalog, ref.catalog)));
    return { paused_at: row?.pausedAt?.toISOString() ?? null };
  }

  // --- internals -----------------------------------------------------------------------------------

  private async update(row: Policy, change: { body?: PolicyBody; enabled: boolean }): Promise<PolicyWire> {
    const now = this.clock.now();
    const ref = { connectionId: row.connectionId, catalog: row.catalog };
    const [[updated]] = await this.db.batch([
      this.db
        .update(policies)
        .set({ ...change, version: sql`${policies.version} + 1`, updatedAt: now })
        .where(eq(policies.id, row.id))
        .returning(),
      ...this.changed(ref, scopeOf(row.scope, row.target), now),
    ]);
    if (!updated) throw noPolicy(catalogId(ref), row.id);
    await this.rearm(row.id, now);
    return policyView(updated);
  }

  private async remove(row: Policy): Promise<void> {
    const now = this.clock.now();
    const ref = { connectionId: row.connectionId, catalog: row.catalog };
    await this.db.batch([
      this.db.delete(policies).where(eq(policies.id, row.id)),
      ...this.changed(ref, scopeOf(row.scope, row.target), now),
    ]);
  }

  /** The resolution of a changed policy's scope, to batch with the change. */
  private changed(ref: CatalogRef, scope: ResolveScope, now: Date) {
    return resolveStatements(this.db, ref, scope, now);
  }

  /** Tables whose effective policy kept its id but changed its body are looked at again. */
  private async rearm(policyId: string, now: Date): Promise<void> {
    await this.db.update(managedTables).set({ nextRunAt: now }).where(eq(managedTables.policyId, policyId));
  }

  private async inCatalog(catalogIdText: string, policyId: string): Promise<Policy> {
    const ref = parseCatalogId(catalogIdText);
    const [row] = ref
      ? await this.db
          .select()
          .from(policies)
          .where(
            and(
              eq(policies.id, policyId),
              eq(policies.connectionId, ref.connectionId),
              eq(policies.catalog, ref.catalog),
            ),
          )
      : [];
    if (!row) throw noPolicy(catalogIdText, policyId);
    return row;
  }

  /** The catalog a `catalog_id` names while it has a live synced table; 404 otherwise. */
  private async liveCatalog(id: string): Promise<CatalogRef> {
    const ref = parseCatalogId(id);
    const [row] = ref
      ? await this.db
          .select({ one: sql`1` })
          .from(catalogTables)
          .where(
            and(
              eq(catalogTables.connectionId, ref.connectionId),
              eq(catalogTables.catalog, ref.catalog),
              sql`${catalogTables.deletedAt} is null`,
            ),
          )
          .limit(1)
      : [];
    if (!ref || !row)
      throw new ApiError(
        404,
        `No catalog '${id}' with a live synced table; GET /api/v1/catalogs lists every catalog and its catalog_id.`,
      );
    return ref;
  }

  private async liveTable(tableIdText: string, ref: CatalogRef): Promise<CatalogTable> {
    const parsed = parseTableId(tableIdText);
    const [row] =
      parsed && parsed.ref.connectionId === ref.connectionId && parsed.ref.catalog === ref.catalog
        ? await this.db
            .select()
            .from(catalogTables)
            .where(
              and(
                eq(catalogTables.connectionId, ref.connectionId),
                eq(catalogTables.fullName, parsed.fullName),
                sql`${catalogTables.deletedAt} is null`,
              ),
            )
        : [];
    if (!row)
      throw new ApiError(
        404,
        `Catalog '${catalogId(ref)}' has no live table '${tableIdText}'; GET /api/v1/catalogs/${catalogId(ref)}/tables lists its tables and their table_id.`,
      );
    return row;
  }

  private async syncedRow(policy: Policy): Promise<CatalogTable> {
    const ref = { connectionId: policy.connectionId, catalog: policy.catalog };
    const [row] = await this.db
      .select()
      .from(catalogTables)
      .where(
        and(eq(catalogTables.connectionId, ref.connectionId), eq(catalogTables.fullName, policy.target)),
      );
    if (!row) throw conflict(`The table of policy '${policy.id}' is no longer in its catalog.`);
    return row;
  }

  /** A managed table's catalog, full name and namespace; 404 when the table is not managed. */
  private async managed(tableIdText: string): Promise<{ ref: CatalogRef; fullName: string; schema: string }> {
    const parsed = parseTableId(tableIdText);
    const [row] = parsed
      ? await this.db
          .select({ schema: managedTables.schema })
          .from(managedTables)
          .where(
            and(
              eq(managedTables.connectionId, parsed.ref.connectionId),
              eq(managedTables.fullName, parsed.fullName),
            ),
          )
      : [];
    if (!parsed || !row)
      throw new ApiError(
        404,
        `No managed table '${tableIdText}': no policy applies to it. GET /api/v1/managedtables lists managed tables; POST /api/v1/catalogs/{catalog_id}/tables/{table_id}/policies manages one.`,
      );
    return { ref: parsed.ref, fullName: parsed.fullName, schema: row.schema };
  }

  /** What decides the actions a synced table can take; an onboarded table's recipe knows its partitions. */
  async factsOf(table: CatalogTable): Promise<ActionFacts> {
    const [row] = await this.db
      .select({ type: catalogConnections.type, recipe: lakeTables.recipe })
      .from(catalogConnections)
      .leftJoin(
        lakeTables,
        and(
          eq(lakeTables.catalogConnectionId, catalogConnections.id),
          eq(lakeTables.catalogFullName, table.fullName),
        ),
      )
      .where(eq(catalogConnections.id, table.connectionId));
    return factsOf(table, row?.type ?? null, row?.recipe ?? null);
  }
}

/** Facts of a synced table of a connection of `type`, refined by its Lakesmith table's recipe when onboarded. */
export function factsOf(
  table: Pick<CatalogTable, "format" | "hasPartitions">,
  type: string | null,
  recipe: { partition_columns: string[] } | null,
): ActionFacts {
  return {
    format: table.format?.toLowerCase() ?? null,
    catalogCommitted: type === "polaris" || type === "hive_metastore",
    partitioned: recipe ? recipe.partition_columns.length > 0 : table.hasPartitions,
  };
}

/** 422 naming `actions.<action>` for the first named action the table can't take. */
function checkActions(body: PolicyBody, facts: ActionFacts): void {
  for (const action of Object.keys(body.actions) as Action[]) {
    const why = unsupportedReason(action, facts);
    if (why) throw invalidField(`actions.${action}`, `this table can't take ${action}: ${why}`);
  }
}

const rankOf = (scope: Policy["scope"]) => (scope === "catalog" ? 0 : scope === "prefix" ? 1 : 2);

function scopeOf(scope: Policy["scope"], target: string): ResolveScope {
  if (scope === "prefix") return { kind: "prefix", prefix: target };
  if (scope === "table") return { kind: "table", fullName: target };
  return { kind: "catalog" };
}

/** `a.b.c` → `a`, `a.b`, `a.b.c`: the prefixes a namespace is under. */
export function ancestors(schema: string): string[] {
  const levels = schema.split(".");
  return levels.map((_, i) => levels.slice(0, i + 1).join("."));
}

const noPolicy = (catalogIdText: string, policyId: string) =>
  new ApiError(
    404,
    `Catalog '${catalogIdText}' has no policy '${policyId}'; GET /api/v1/catalogs/${catalogIdText}/policies lists them.`,
  );

const noPolicyForTable = (tableIdText: string, policyId: string) =>
  new ApiError(
    404,
    `No policy '${policyId}' applies to table '${tableIdText}'; GET /api/v1/managedtables/${encodeURIComponent(tableIdText)}/policies lists those that do.`,
  );
