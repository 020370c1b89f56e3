/**
 * Reading what syncs wrote (`catalog_tables`): a connection's catalogs, a catalog's schemas, and
 * its tables filtered, sorted and paged. Tables marked deleted are left out unless asked for.
 *
 * Bounds: every read names the connection, the leading column of the primary key and of each
 * index (`db/schema.ts`), so it reads that connection's rows only; the sort keys each have an
 * index, and a filter that no index serves (search within names) scans the connection's rows.
 * The list of tables keeps each filter and sort's order in memory between syncs (`list-order.ts`):
 * a page is then one read by primary key whatever its offset, and its total is exact.
 */
import {
  type AnyColumn,
  and,
  asc,
  count,
  countDistinct,
  eq,
  inArray,
  isNull,
  type Placeholder,
  type SQL,
  sql,
} from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogTable, catalogConnections, catalogTables } from "../db/schema.ts";
import { type PreparedSelect, preparedSelect, selectOnce } from "../db/statement-cache.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, notFound } from "../http/problem.ts";
import { ListOrders, versionOf } from "./list-order.ts";
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

/** Sort keys whose column may be null (the others are never null). */
const NULLABLE_SORT_KEYS = new Set<SortKey>(["size_bytes", "updated_at"]);

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
  private readonly rowsByName;
  /** Prepared statements of the unfiltered live list, by sort key and order. */
  private readonly liveLists = new Map<string, LiveListStatements>();
  private readonly orders = new ListOrders();

  constructor(private readonly db: Db) {
    this.connectionById = preparedSelect(
      db,
      db
        .select({
          id: catalogConnections.id,
          syncStatus: catalogConnections.syncStatus,
          lastSyncJobId: catalogConnections.lastSyncJobId,
          lastSyncedAt: catalogConnections.lastSyncedAt,
        })
        .from(catalogConnections)
        .where(eq(catalogConnections.id, sql.placeholder("id"))),
    );
    this.rowsByName = preparedSelect(
      db,
      db
        .select(LIST_COLUMNS)
        .from(catalogTables)
        .where(
          and(
            eq(catalogTables.connectionId, sql.placeholder("connectionId")),
            sql`${catalogTables.fullName} in (select value from json_each(${sql.placeholder("names")}))`,
          ),
        ),
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
   * The connection's tables that match `filter`, in its order: a slice of the order kept in memory
   * since the connection's last sync (`list-order.ts`), read by primary key without `detail`.
   * While a sync writes the tables, from SQL: the page's keys are found first (from an index alone
   * where the filter allows) and only those rows are read; the unfiltered list of live tables runs
   * prepared statements.
   */
  async tables(connectionId: string, filter: CatalogTablesFilter): Promise<Page<CatalogTableListRow>> {
    const connection = await this.connectionById.get({ id: connectionId });
    if (!connection) throw notFound("Catalog connection", connectionId);
    const version = versionOf(connection);
    if (version !== undefined) return this.orderedPage(connectionId, version, filter);
    const { sort_by, sort_order, offset, limit } = filter;
    const statements = isUnfiltered(filter) ? this.liveListStatements(sort_by, sort_order) : undefined;
    const [items, total] = await Promise.all([
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
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /** A page cut from the list's order under `version`, its rows read by primary key. */
  private async orderedPage(
    connectionId: string,
    version: string,
    filter: CatalogTablesFilter,
  ): Promise<Page<CatalogTableListRow>> {
    const { sort_by, sort_order, offset, limit, ...where } = filter;
    const key = JSON.stringify([connectionId, version, sort_by, sort_order, where]);
    const order = await this.orders.get(key, async () => {
      // One JSON array of the names in order, built by SQLite: no row object per table.
      const ordered = this.db
        .select({ fullName: catalogTables.fullName })
        .from(catalogTables)
        .where(and(...conditionsOf(connectionId, filter, sort_by)))
        .orderBy(...orderBy(sort_by, sort_order))
        .as("ordered");
      // Its SQL holds the filter's values: read once, not kept prepared.
      const row = await selectOnce(
        this.db,
        this.db.select({ names: sql<string>`json_group_array(${ordered.fullName})` }).from(ordered),
        ["names"],
      );
      return JSON.parse(row?.names ?? "[]") as string[];
    });
    const names = order.slice(offset, offset + limit);
    const rows = names.length
      ? await this.rowsByName.all({ connectionId, names: JSON.stringify(names) })
      : [];
    const position = new Map(names.map((name, i) => [name, i]));
    rows.sort((a, b) => (position.get(a.fullName) ?? 0) - (position.get(b.fullName) ?? 0));
    return { items: rows, total: order.length, offset, limit };
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
    // `+` (a no-op in SQLite) keeps the outer select off the sort indexes: it must look its page up
    // by primary key and sort those rows, not walk every row in order to avoid that small sort.
    const order = (plus: SQL) => orderBy(sortBy, sortOrder, plus);
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

/**
 * The list's order: the sort key, ties by full_name. A key that may be null (size, last change)
 * puts unknown values last either way by leading with its nullness, as its indexes do
 * (`db/schema.ts`), so SQLite reads the order from an index instead of sorting.
 */
function orderBy(sortBy: SortKey, sortOrder: "asc" | "desc", plus: SQL = sql``): SQL[] {
  const direction = sortOrder === "desc" ? sql`desc` : sql`asc`;
  // full_name is never null and is its own tie-break: one term, which its index serves as is.
  if (sortBy === "full_name") return [sql`${plus}${catalogTables.fullName} ${direction}`];
  const column = sortColumn(sortBy);
  const key = [sql`${plus}${column} ${direction}`, sql`${plus}${catalogTables.fullName} asc`];
  return NULLABLE_SORT_KEYS.has(sortBy) ? [sql`${plus}(${column} is null) asc`, ...key] : key;
}

/**
 * The filter's conditions, the connection's first. With `walkedBy`, for reading a whole order: a
 * size bound is then checked on the entries of the sort's index while it is walked in order
 * (the size and last-change indexes hold the size), instead of letting SQLite read the rows in a
 * size range and sort them, which at 100,000 tables took 200 ms rather than 15 (unary `+` keeps a
 * column off its own indexes).
 */
function conditionsOf(connectionId: string, f: CatalogTablesFilter, walkedBy?: SortKey): SQL[] {
  const lowerEq = (column: AnyColumn, value: string) => sql`lower(${column}) = lower(${value})`;
  const size =
    walkedBy === "size_bytes" || walkedBy === "updated_at"
      ? sql`+${catalogTables.sizeBytes}`
      : sql`${catalogTables.sizeBytes}`;
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
    f.min_size_bytes !== undefined ? sql`${size} >= ${f.min_size_bytes}` : undefined,
    f.max_size_bytes !== undefined ? sql`${size} <= ${f.max_size_bytes}` : undefined,
    f.has_partitions !== undefined ? eq(catalogTables.hasPartitions, f.has_partitions === "true") : undefined,
  ].filter((c): c is SQL => c !== undefined);
}
