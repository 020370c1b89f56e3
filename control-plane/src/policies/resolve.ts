/**
 * Resolution: which synced tables of a catalog are managed, and by which policy. A table is managed
 * while at least one policy applies to it (its own, a prefix policy over its namespace, or the
 * catalog's), enabled or not; its effective policy is the most specific enabled one: its own, else
 * the longest matching prefix's, else the catalog's (null when only disabled ones apply).
 *
 * Algorithm, one batch (one transaction) per scope (the whole catalog, a prefix, or one table):
 * 1. Delete the rows in scope no policy applies to any more, or whose table the catalog no longer
 *    reports (covered namespaces worked out once, not per row).
 * 2. Upsert a `managed_tables` row for every live synced table in scope that a policy applies to.
 *    Prefix matches are worked out once per namespace (a grouped read of the catalog's namespaces,
 *    index `catalog_tables_schema_idx`), not once per table; table policies by primary-key probe.
 * 3. Record when the catalog was resolved (`policy_catalogs`), so the engine resolves it again after
 *    a later sync, and how many of its tables are managed (the list's total).
 * A row whose effective policy changed, that is new, or that was waiting (for size or onboarding) is
 * due at once (`next_run_at` = now) so the engine looks at it in its next tick; others keep their time.
 * Bounds: one pass over the scope's live tables plus one per namespace; set-based, nothing per row
 * in JavaScript; every value bound, so it batches on D1 too.
 */
import { type AnyColumn, and, eq, type SQL, sql } from "drizzle-orm";
import type { CatalogRef } from "../catalogs/ids.ts";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { managedTables, policyCatalogs } from "../db/schema.ts";

/** What a resolution covers: the whole catalog, the tables under a namespace prefix, or one table. */
export type ResolveScope =
  | { kind: "catalog" }
  | { kind: "prefix"; prefix: string }
  | { kind: "table"; fullName: string };

/** SQL true when `schema` is the namespace `prefix` or beneath it (whole levels). */
export function underPrefix(schema: SQL | AnyColumn, prefix: SQL | string): SQL {
  return sql`(${schema} = ${prefix} or substr(${schema}, 1, length(${prefix}) + 1) = ${prefix} || '.')`;
}

/** The scope as a condition on columns named `schema` and `full_name` (`ct.` in the upsert). */
function inScope(
  columns: { schema: SQL | AnyColumn; fullName: SQL | AnyColumn },
  scope: ResolveScope,
): SQL | undefined {
  if (scope.kind === "prefix") return underPrefix(columns.schema, scope.prefix);
  if (scope.kind === "table") return sql`${columns.fullName} = ${scope.fullName}`;
  return undefined;
}

/** The batch that resolves `scope` of the catalog `ref` at `now`. */
export function resolveStatements(db: Db, ref: CatalogRef, scope: ResolveScope, now: Date) {
  const stamp = now.getTime();
  const conn = ref.connectionId;
  const cat = ref.catalog;
  const policy = (where: SQL, enabledOnly: boolean) =>
    sql`(select p.id from policies p where p.connection_id = ${conn} and p.catalog = ${cat} and ${where}
          ${enabledOnly ? sql`and p.enabled = 1` : sql``} limit 1)`;
  const catalogPolicy = (enabledOnly: boolean) =>
    policy(sql`p.scope = 'catalog' and p.target = ''`, enabledOnly);
  const tablePolicy = (enabledOnly: boolean) =>
    policy(sql`p.scope = 'table' and p.target = ct.full_name`, enabledOnly);
  // Per namespace: the longest enabled prefix policy over it, and whether any prefix policy is.
  const prefixMatch = underPrefix(sql`n.schema`, sql`p.target`);
  const namespaces = sql`(select n.schema as schema,
        (select p.id from policies p where p.connection_id = ${conn} and p.catalog = ${cat} and p.scope = 'prefix'
           and p.enabled = 1 and ${prefixMatch} order by length(p.target) desc limit 1) as best,
        exists (select 1 from policies p where p.connection_id = ${conn} and p.catalog = ${cat} and p.scope = 'prefix'
           and ${prefixMatch}) as covered
      from (select distinct schema from catalog_tables
            where connection_id = ${conn} and catalog = ${cat} and deleted_at is null) n
      -- LIMIT keeps SQLite from flattening this into the join: the matches are worked out per namespace.
      limit -1) ns`;
  const scopeWhere = inScope({ schema: sql`ct.schema`, fullName: sql`ct.full_name` }, scope);
  const upsert = insertSelect(
    db,
    managedTables,
    {
      connectionId: sql`ct.connection_id`,
      fullName: sql`ct.full_name`,
      catalog: sql`ct.catalog`,
      schema: sql`ct.schema`,
      name: sql`ct.name`,
      policyId: sql`coalesce(${tablePolicy(true)}, ns.best, ${catalogPolicy(true)})`,
      lakeTableId: sql`(select t.id from tables t where t.catalog_connection_id = ct.connection_id and t.catalog_full_name = ct.full_name)`,
      waitingReason: sql`null`,
      opportunitiesCheckedAt: sql`null`,
      nextRunAt: sql`${stamp}`,
      managedSince: sql`${stamp}`,
      updatedAt: sql`${stamp}`,
    },
    sql`from catalog_tables ct join ${namespaces} on ns.schema = ct.schema
        where ct.connection_id = ${conn} and ct.catalog = ${cat} and ct.deleted_at is null
          ${scopeWhere ? sql`and ${scopeWhere}` : sql``}
          and (ns.covered or ${catalogPolicy(false)} is not null or ${tablePolicy(false)} is not null)`,
  ).onConflictDoUpdate({
    target: [managedTables.connectionId, managedTables.fullName],
    set: {
      catalog: sql`excluded.catalog`,
      schema: sql`excluded.schema`,
      name: sql`excluded.name`,
      policyId: sql`excluded.policy_id`,
      lakeTableId: sql`coalesce(${managedTables.lakeTableId}, excluded.lake_table_id)`,
      nextRunAt: sql`case when ${managedTables.policyId} is not excluded.policy_id
          or ${managedTables.waitingReason} is not null then excluded.next_run_at else ${managedTables.nextRunAt} end`,
      updatedAt: sql`excluded.updated_at`,
    },
  });
  // Rows in scope no policy applies to any more, or whose table the catalog no longer reports. The
  // covered namespaces are worked out once (a non-correlated subquery), not once per row.
  const m = sql`${managedTables}`;
  const covered = sql`(select n.schema from (select distinct schema from managed_tables
        where connection_id = ${conn} and catalog = ${cat}) n
      where exists (select 1 from policies p where p.connection_id = ${conn} and p.catalog = ${cat}
        and p.scope = 'prefix' and ${prefixMatch}))`;
  const stale = db.delete(managedTables).where(
    and(
      eq(managedTables.connectionId, conn),
      eq(managedTables.catalog, cat),
      inScope(managedTables, scope),
      sql`(not exists (select 1 from catalog_tables ct where ct.connection_id = ${m}.connection_id
               and ct.full_name = ${m}.full_name and ct.deleted_at is null)
             or (${catalogPolicy(false)} is null
                 and not exists (select 1 from policies p where p.connection_id = ${conn} and p.catalog = ${cat}
                   and p.scope = 'table' and p.target = ${m}.full_name)
                 and ${managedTables.schema} not in ${covered}))`,
    ),
  );
  const resolved = db
    .insert(policyCatalogs)
    .values({ connectionId: conn, catalog: cat, resolvedAt: now })
    .onConflictDoUpdate({
      target: [policyCatalogs.connectionId, policyCatalogs.catalog],
      set: { resolvedAt: now },
    });
  const counted = db
    .update(policyCatalogs)
    .set({
      managedCount: sql`(select count(*) from managed_tables where connection_id = ${conn} and catalog = ${cat})`,
    })
    .where(and(eq(policyCatalogs.connectionId, conn), eq(policyCatalogs.catalog, cat)));
  return [stale, upsert, resolved, counted] as const;
}

/** Resolves `scope` of the catalog `ref` at `now`. */
export async function resolve(db: Db, ref: CatalogRef, scope: ResolveScope, now: Date): Promise<void> {
  await db.batch(resolveStatements(db, ref, scope, now));
}
