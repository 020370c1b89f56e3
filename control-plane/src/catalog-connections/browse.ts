/**
 * Reading what syncs wrote (`catalog_tables`): a connection's catalogs, a catalog's schemas, and
 * its tables filtered, sorted and paged. Tables marked deleted are left out unless asked for.
 *
 * Bounds: every read names the connection, the leading column of the primary key and of each
 * index (`db/schema.ts`), so it reads that connection's rows only; the sort keys each have an
 * index, and a filter that no index serves (search within names) scans the connection's rows.
 */
import {
  type AnyColumn,
  and,
  asc,
  count,
  countDistinct,
  eq,
  gte,
  isNull,
  lte,
  type SQL,
  sql,
} from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogTable, catalogConnections, catalogTables } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, notFound } from "../http/problem.ts";
import type { CatalogTablesFilter, SortKey } from "./schemas.ts";

export interface CatalogSummary {
  name: string;
  schemas_count: number;
  tables_count: number;
}

export interface SchemaSummary {
  catalog: string;
  name: string;
  tables_count: number;
}

const SORT_COLUMNS = {
  full_name: catalogTables.fullName,
  name: catalogTables.name,
  size_bytes: catalogTables.sizeBytes,
  updated_at: catalogTables.updatedAt,
  synced_at: catalogTables.syncedAt,
} satisfies Record<SortKey, unknown>;

/** `text` as a LIKE pattern that matches it literally. */
const literalLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export class CatalogBrowser {
  constructor(private readonly db: Db) {}

  /** The connection's catalogs by name, from its live synced tables. */
  async catalogs(connectionId: string, offset: number, limit: number): Promise<Page<CatalogSummary>> {
    await this.connectionExists(connectionId);
    const live = and(eq(catalogTables.connectionId, connectionId), isNull(catalogTables.deletedAt));
    const [items, [total]] = await Promise.all([
      this.db
        .select({
          name: catalogTables.catalog,
          schemas_count: countDistinct(catalogTables.schema),
          tables_count: count(),
        })
        .from(catalogTables)
        .where(live)
        .groupBy(catalogTables.catalog)
        .orderBy(asc(catalogTables.catalog))
        .limit(limit)
        .offset(offset),
      this.db
        .select({ n: countDistinct(catalogTables.catalog) })
        .from(catalogTables)
        .where(live),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /** A catalog's schemas by name; 404 when the catalog has no live synced table. */
  async schemas(
    connectionId: string,
    catalog: string,
    offset: number,
    limit: number,
  ): Promise<Page<SchemaSummary>> {
    await this.connectionExists(connectionId);
    const live = and(
      eq(catalogTables.connectionId, connectionId),
      eq(catalogTables.catalog, catalog),
      isNull(catalogTables.deletedAt),
    );
    const [items, [total]] = await Promise.all([
      this.db
        .select({ catalog: catalogTables.catalog, name: catalogTables.schema, tables_count: count() })
        .from(catalogTables)
        .where(live)
        .groupBy(catalogTables.schema)
        .orderBy(asc(catalogTables.schema))
        .limit(limit)
        .offset(offset),
      this.db
        .select({ n: countDistinct(catalogTables.schema) })
        .from(catalogTables)
        .where(live),
    ]);
    const n = total?.n ?? 0;
    if (n === 0)
      throw new ApiError(
        404,
        `Catalog '${catalog}' has no synced tables in connection '${connectionId}'; GET /api/v1/catalog-connections/${connectionId}/catalogs lists those that have.`,
      );
    return { items, total: n, offset, limit };
  }

  /** The connection's tables that match `filter`, in its order. */
  async tables(connectionId: string, filter: CatalogTablesFilter): Promise<Page<CatalogTable>> {
    await this.connectionExists(connectionId);
    const where = and(...conditionsOf(connectionId, filter));
    const column = SORT_COLUMNS[filter.sort_by];
    const direction = filter.sort_order === "desc" ? sql`desc` : sql`asc`;
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(catalogTables)
        .where(where)
        .orderBy(sql`${column} ${direction} nulls last`, asc(catalogTables.fullName))
        .limit(filter.limit)
        .offset(filter.offset),
      this.db.select({ n: count() }).from(catalogTables).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset: filter.offset, limit: filter.limit };
  }

  /** One synced table, deleted or not; 404 when the connection or the table is unknown. */
  async table(connectionId: string, fullName: string): Promise<CatalogTable> {
    await this.connectionExists(connectionId);
    const [row] = await this.db
      .select()
      .from(catalogTables)
      .where(and(eq(catalogTables.connectionId, connectionId), eq(catalogTables.fullName, fullName)));
    if (!row)
      throw new ApiError(
        404,
        `No table '${fullName}' was ever synced from catalog connection '${connectionId}'.`,
      );
    return row;
  }

  private async connectionExists(id: string): Promise<void> {
    const [row] = await this.db
      .select({ id: catalogConnections.id })
      .from(catalogConnections)
      .where(eq(catalogConnections.id, id));
    if (!row) throw notFound("Catalog connection", id);
  }
}

function conditionsOf(connectionId: string, f: CatalogTablesFilter): SQL[] {
  const lowerEq = (column: AnyColumn, value: string) => sql`lower(${column}) = lower(${value})`;
  return [
    eq(catalogTables.connectionId, connectionId),
    f.include_deleted === "true" ? undefined : isNull(catalogTables.deletedAt),
    f.catalog !== undefined ? eq(catalogTables.catalog, f.catalog) : undefined,
    f.schema !== undefined ? eq(catalogTables.schema, f.schema) : undefined,
    f.prefix !== undefined
      ? sql`${catalogTables.name} like ${`${literalLike(f.prefix)}%`} escape '\\'`
      : undefined,
    f.search !== undefined
      ? sql`${catalogTables.fullName} like ${`%${literalLike(f.search)}%`} escape '\\'`
      : undefined,
    f.format !== undefined ? lowerEq(catalogTables.format, f.format) : undefined,
    f.table_type !== undefined ? lowerEq(catalogTables.tableType, f.table_type) : undefined,
    f.min_size_bytes !== undefined ? gte(catalogTables.sizeBytes, f.min_size_bytes) : undefined,
    f.max_size_bytes !== undefined ? lte(catalogTables.sizeBytes, f.max_size_bytes) : undefined,
    f.has_partitions !== undefined ? eq(catalogTables.hasPartitions, f.has_partitions === "true") : undefined,
  ].filter((c): c is SQL => c !== undefined);
}
