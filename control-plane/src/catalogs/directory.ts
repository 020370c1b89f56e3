/**
 * Document 2's reads over what syncs wrote (`catalog_tables`): every connection's catalogs, a
 * catalog's namespace tree, its tables, one table. Only live rows (no `deleted_at`) count.
 *
 * - Catalogs: grouped by (catalog, connection_id), which is also the keyset; one pass over the live
 *   rows for the counts and sizes every page shows.
 * - Namespaces: one grouped read of the catalog's namespaces (index `catalog_tables_schema_idx`),
 *   the tree built in memory (`namespaces.ts`) and paged by its depth-first key.
 * - Tables: keyset on `full_name` within the primary key (connection_id, full_name), so a page
 *   reads at most `page_size + 1` rows past the token however deep it is; `q` scans the catalog.
 * - A `catalog_id` is decoded, not looked up (`ids.ts`); it names a catalog while that has a live table.
 */
import type { CatalogType } from "@lakesmith/shared/catalogs";
import { and, asc, count, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogTable, catalogConnections, catalogTables } from "../db/schema.ts";
import { type KeysetPage, keyAfter, keysetPage } from "../http/pagination.ts";
import { ApiError } from "../http/problem.ts";
import { iso } from "../jobs/view.ts";
import { type CatalogRef, catalogId, fullNameOf, parseCatalogId, tableId } from "./ids.ts";
import { compareLevels, isUnder, type NamespaceNode, namespaceTree } from "./namespaces.ts";
import type { NamespacesFilter, TablesFilter } from "./schemas.ts";

const live = isNull(catalogTables.deletedAt);

/** `text` as a LIKE pattern that matches it literally. */
const literalLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A `q` wildcard (`*`, `?`) as a LIKE pattern; every other character matches itself. */
export const wildcardLike = (q: string) => literalLike(q).replace(/\*/g, "%").replace(/\?/g, "_");

const like = (column: SQL | typeof catalogTables.name, pattern: string) =>
  sql`${column} like ${pattern} escape '\\'`;

export class CatalogDirectory {
  constructor(private readonly db: Db) {}

  /** Every catalog of every connection (active or not) with a live table, by name then connection. */
  async catalogs(pageSize: number, token: string | undefined): Promise<KeysetPage<CatalogWire>> {
    const after = keyAfter(token, 2);
    const rows = await this.db
      .select({
        catalog: catalogTables.catalog,
        connectionId: catalogTables.connectionId,
        connectionName: catalogConnections.name,
        connectionType: catalogConnections.type,
        connectionIsActive: catalogConnections.isActive,
        tables: count(),
        size: sql<number>`coalesce(sum(${catalogTables.sizeBytes}), 0)`.mapWith(Number),
      })
      .from(catalogTables)
      .innerJoin(catalogConnections, eq(catalogConnections.id, catalogTables.connectionId))
      .where(
        and(
          live,
          after &&
            or(
              gt(catalogTables.catalog, after[0] as string),
              and(
                eq(catalogTables.catalog, after[0] as string),
                gt(catalogTables.connectionId, after[1] as string),
              ),
            ),
        ),
      )
      .groupBy(catalogTables.catalog, catalogTables.connectionId)
      .orderBy(asc(catalogTables.catalog), asc(catalogTables.connectionId))
      .limit(pageSize + 1);
    const [total] = await this.db
      .select({
        n: sql<number>`count(distinct ${catalogTables.connectionId} || ':' || ${catalogTables.catalog})`,
      })
      .from(catalogTables)
      .where(live);
    return keysetPage(
      rows,
      pageSize,
      Number(total?.n ?? 0),
      (r) => [r.catalog, r.connectionId],
      (r) => ({
        catalog_id: catalogId({ connectionId: r.connectionId, catalog: r.catalog }),
        name: r.catalog,
        connection_id: r.connectionId,
        connection_name: r.connectionName,
        connection_type: r.connectionType as CatalogWire["connection_type"],
        connection_is_active: r.connectionIsActive,
        tables_count: r.tables,
        size_bytes: r.size,
      }),
    );
  }

  /** The catalog's namespace tree in depth-first order, or the subtree beneath `prefix`. */
  async namespaces(id: string, filter: NamespacesFilter): Promise<KeysetPage<NamespaceNode>> {
    const ref = await this.catalog(id);
    const after = keyAfter(filter.page_token, 1);
    const counts = await this.db
      .select({ schema: catalogTables.schema, tables: count() })
      .from(catalogTables)
      .where(inCatalog(ref))
      .groupBy(catalogTables.schema);
    const prefix = filter.prefix;
    const tree = namespaceTree(counts).filter((n) => prefix === undefined || isUnder(n.namespace, prefix));
    const afterLevels = after?.[0]?.split(".");
    const rest = afterLevels ? tree.filter((n) => compareLevels(n.levels, afterLevels) > 0) : tree;
    return keysetPage(
      rest.slice(0, filter.page_size + 1),
      filter.page_size,
      tree.length,
      (n) => [n.namespace],
      (n) => n,
    );
  }

  /** The catalog's live tables matching `filter`, by full_name. */
  async tables(id: string, filter: TablesFilter): Promise<KeysetPage<TableWire>> {
    const ref = await this.catalog(id);
    const after = keyAfter(filter.page_token, 1);
    const where = and(
      inCatalog(ref),
      filter.q !== undefined ? like(catalogTables.name, wildcardLike(filter.q)) : undefined,
      filter.prefix !== undefined
        ? or(
            eq(catalogTables.schema, filter.prefix),
            sql`substr(${catalogTables.schema}, 1, ${filter.prefix.length + 1}) = ${`${filter.prefix}.`}`,
          )
        : undefined,
      filter.type !== undefined ? sql`lower(${catalogTables.format}) = lower(${filter.type})` : undefined,
    );
    const [rows, [total]] = await Promise.all([
      this.db
        .select()
        .from(catalogTables)
        .where(and(where, after && gt(catalogTables.fullName, after[0] as string)))
        .orderBy(asc(catalogTables.fullName))
        .limit(filter.page_size + 1),
      this.db.select({ n: count() }).from(catalogTables).where(where),
    ]);
    return keysetPage(
      rows,
      filter.page_size,
      total?.n ?? 0,
      (r) => [r.fullName],
      (r) => tableView(ref, r),
    );
  }

  /** One live table of the catalog with the catalog's record of it; 404 otherwise. */
  async table(id: string, tableIdText: string): Promise<TableDetailWire> {
    const ref = await this.catalog(id);
    const fullName = fullNameOf(ref, tableIdText);
    const [row] = fullName
      ? await this.db
          .select()
          .from(catalogTables)
          .where(and(inCatalog(ref), eq(catalogTables.fullName, fullName)))
      : [];
    if (!row)
      throw new ApiError(
        404,
        `Catalog '${id}' has no live table '${tableIdText}'; GET /api/v1/catalogs/${id}/tables lists its tables and their table_id.`,
      );
    return {
      ...tableView(ref, row),
      connection_id: row.connectionId,
      catalog: row.catalog,
      format: row.format,
      metadata: row.detail,
    };
  }

  /** The catalog a `catalog_id` names; 404 unless it is one with a live table. */
  private async catalog(id: string): Promise<CatalogRef> {
    const ref = parseCatalogId(id);
    const [row] = ref
      ? await this.db.select({ one: sql`1` }).from(catalogTables).where(inCatalog(ref)).limit(1)
      : [];
    if (!ref || !row)
      throw new ApiError(
        404,
        `No catalog '${id}' with a live synced table; GET /api/v1/catalogs lists every catalog and its catalog_id.`,
      );
    return ref;
  }
}

function inCatalog(ref: CatalogRef): SQL | undefined {
  return and(eq(catalogTables.connectionId, ref.connectionId), eq(catalogTables.catalog, ref.catalog), live);
}

export interface CatalogWire {
  catalog_id: string;
  name: string;
  connection_id: string;
  connection_name: string;
  connection_type: CatalogType;
  connection_is_active: boolean;
  tables_count: number;
  size_bytes: number;
}

export type TableWire = ReturnType<typeof tableView>;
export type TableDetailWire = TableWire & {
  connection_id: string;
  catalog: string;
  format: string | null;
  metadata: Record<string, unknown>;
};

function tableView(ref: CatalogRef, row: CatalogTable) {
  return {
    table_id: tableId(ref, row.fullName),
    catalog_id: catalogId(ref),
    full_name: row.fullName,
    namespace: row.schema,
    name: row.name,
    type: row.format?.toLowerCase() ?? null,
    table_type: row.tableType,
    location: row.location,
    size_bytes: row.sizeBytes,
    has_partitions: row.hasPartitions,
    updated_at: iso(row.updatedAt),
    synced_at: row.syncedAt.toISOString(),
  };
}
