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
  inArray,
  isNull,
  lte,
  type Placeholder,
  type SQL,
  sql,
} from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogTable, catalogConnections, catalogTables } from "../db/schema.ts";
import { type PreparedSelect, preparedSelect } from "../db/statement-cache.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, notFound } from "../http/problem.ts";
import type { CatalogTablesFilter, SortKey } from "./schemas.ts";
import type { CatalogTableListRow } from "./view.ts";

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

const sortColumn = (key: SortKey) =>
  ({
    full_name: catalogTables.fullName,
    name: catalogTables.name,
    size_bytes: catalogTables.sizeBytes,
    updated_at: catalogTables.updatedAt,
    synced_at: catalogTables.syncedAt,
  })[key];

/** The columns the list of tables shows (`catalogTableView`). */
const LIST_COLUMNS = {
  fullName: catalogTables.fullName,
  catalog: catalogTables.catalog,
  schema: catalogTables.schema,
  name: catalogTables.name,
  format: catalogTables.format,
  tableType: catalogTables.tableType,
  location: catalogTables.location,
  sizeBytes: catalogTables.sizeBytes,
  hasPartitions: catalogTables.hasPartitions,
  updatedAt: catalogTables.updatedAt,
  syncedAt: catalogTables.syncedAt,
  deletedAt: catalogTables.deletedAt,
} satisfies Record<keyof CatalogTableListRow, unknown>;

interface LiveListStatements {
  page: PreparedSelect<CatalogTableListRow>;
  total: PreparedSelect<{ n: number }>;
}

/** Only the connection's live tables, in any order and page: no filter beyond the defaults. */
const isUnfiltered = (f: CatalogTablesFilter) =>
  f.include_deleted !== "true" &&
  [
    f.catalog,
    f.schema,
    f.prefix,
    f.search,
    f.format,
    f.table_type,
    f.min_size_bytes,
    f.max_size_bytes,
    f.has_partitions,
  ].every((v) => v === undefined);

/** `text` as a LIKE pattern that matches it literally. */
const literalLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export class CatalogBrowser {
  private readonly connectionById;
  /** Prepared statements of the unfiltered live list, by sort key and order. */
  private readonly liveLists = new Map<string, LiveListStatements>();

  constructor(private readonly db: Db) {
    this.connectionById = preparedSelect(
      db,
      db
        .select({ id: catalogConnections.id })
        .from(catalogConnections)
        .where(eq(catalogConnections.id, sql.placeholder("id"))),
    );
  }

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

  /**
   * The connection's tables that match `filter`, in its order. The page's keys are found first
   * (from an index alone where the filter allows) and only those rows are read, without `detail`.
   * The unfiltered list of live tables, the common case, runs prepared statements.
   */
  async tables(connectionId: string, filter: CatalogTablesFilter): Promise<Page<CatalogTableListRow>> {
    const { sort_by, sort_order, offset, limit } = filter;
    const statements = isUnfiltered(filter) ? this.liveListStatements(sort_by, sort_order) : undefined;
    const [exists, items, total] = await Promise.all([
      this.connectionById.get({ id: connectionId }),
      statements
        ? statements.page.all({ connectionId, offset, limit })
        : this.tablesPage(conditionsOf(connectionId, filter), sort_by, sort_order, limit, offset),
      statements
        ? statements.total.get({ connectionId })
        : this.db
            .select({ n: count() })
            .from(catalogTables)
            .where(and(...conditionsOf(connectionId, filter)))
            .then(([row]) => row),
    ]);
    if (!exists) throw notFound("Catalog connection", connectionId);
    return { items, total: total?.n ?? 0, offset, limit };
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
    if (!(await this.connectionById.get({ id }))) throw notFound("Catalog connection", id);
  }

  /**
   * A page of the list's columns, keys first: the inner select orders and skips on `full_name`
   * and the sort column only (for live rows, a partial index `catalog_tables_live_*_idx` holds
   * both), the outer one reads the page's rows by primary key and orders them again.
   * `conditions[0]` names the connection (`conditionsOf`).
   */
  private tablesPage(
    conditions: SQL[],
    sortBy: SortKey,
    sortOrder: "asc" | "desc",
    limit: number | Placeholder,
    offset: number | Placeholder,
  ) {
    const direction = sortOrder === "desc" ? sql`desc` : sql`asc`;
    // full_name is never null and is its own tie-break: one term, which its index serves as is.
    // `+` (a no-op in SQLite) keeps the outer select off the sort indexes: it must look its page up
    // by primary key and sort those rows, not walk every row in order to avoid that small sort.
    const order = (plus: SQL) =>
      sortBy === "full_name"
        ? [sql`${plus}${catalogTables.fullName} ${direction}`]
        : [
            sql`${plus}${sortColumn(sortBy)} ${direction} nulls last`,
            sql`${plus}${catalogTables.fullName} asc`,
          ];
    return this.db
      .select(LIST_COLUMNS)
      .from(catalogTables)
      .where(
        and(
          conditions[0],
          inArray(
            catalogTables.fullName,
            this.db
              .select({ fullName: catalogTables.fullName })
              .from(catalogTables)
              .where(and(...conditions))
              .orderBy(...order(sql``))
              .limit(limit)
              .offset(offset),
          ),
        ),
      )
      .orderBy(...order(sql.raw("+")));
  }

  private liveListStatements(sortBy: SortKey, sortOrder: "asc" | "desc"): LiveListStatements {
    const key = `${sortBy}/${sortOrder}`;
    let statements = this.liveLists.get(key);
    if (statements) return statements;
    const live = [
      eq(catalogTables.connectionId, sql.placeholder("connectionId")),
      isNull(catalogTables.deletedAt),
    ];
    statements = {
      page: preparedSelect(
        this.db,
        this.tablesPage(live, sortBy, sortOrder, sql.placeholder("limit"), sql.placeholder("offset")),
      ),
      total: preparedSelect(
        this.db,
        this.db
          .select({ n: count() })
          .from(catalogTables)
          .where(and(...live)),
      ),
    };
    this.liveLists.set(key, statements);
    return statements;
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
