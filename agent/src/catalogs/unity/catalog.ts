/**
 * Unity Catalog (Databricks, or the open-source server) as a `CatalogClient`, on `UnityClient`.
 *
 * - Catalogs, then each catalog's schemas, then each schema's tables, a page at a time; 16 schemas
 *   are walked side by side (a page of tables is 50, so a large catalog is many small requests):
 *   at most one page of schemas and 16 pages of tables are held, whatever the catalog's size.
 *   `information_schema` (views over the catalog's own metadata, in every catalog) is skipped.
 * - Facts come from Unity's table record: format is `data_source_format` lower-cased, partitioned
 *   when a column has a `partition_index`. The record has no size: it is read from the table's own
 *   metadata by `sizeOf` (a Delta log, an Iceberg snapshot summary), 4 tables at a time across the
 *   whole walk, where it
 *   is allowed; otherwise, or when the read fails, the size is null and `detail.size_note` says why.
 * - With `changedAmong`, each page's tables and `updated_at` are asked about first; only the tables
 *   it names are read, the others reported unchanged.
 * - A catalog or schema that is gone (404) by the time it is listed is left out.
 */
import type { SyncedTable } from "@lakesmith/shared/catalogs";
import { RestCatalogError } from "../../iceberg/rest/errors.ts";
import { forEachBounded, Limiter } from "../bounded.ts";
import type { CatalogClient, SizeOf, WalkedTable, WalkOptions } from "../types.ts";
import type { UnityClient, UnityTableInfo } from "./client.ts";

/** How many tables have their size read at once (each read may open a DuckDB engine). */
export const SIZE_CONCURRENCY = 4;
/** How many schemas are walked side by side. */
const SCHEMA_CONCURRENCY = 16;
const SKIPPED_SCHEMAS = new Set(["information_schema"]);
/** Formats whose size the agent can read from the table's own metadata. */
const SIZED_FORMATS = new Set(["delta", "iceberg"]);
const VIEW_TYPES = new Set(["VIEW", "MATERIALIZED_VIEW", "METRIC_VIEW"]);

export class UnityCatalog implements CatalogClient {
  constructor(
    private readonly client: UnityClient,
    private readonly sizeOf: SizeOf,
  ) {}

  async listCatalogs(): Promise<string[]> {
    const names: string[] = [];
    for await (const page of this.client.catalogs()) names.push(...page.map((c) => c.name));
    return names;
  }

  async walkTables(
    options: WalkOptions,
    onTable: (table: WalkedTable) => void | Promise<void>,
  ): Promise<void> {
    const catalogs = (await this.listCatalogs()).filter(
      (name) => options.catalog === undefined || name === options.catalog,
    );
    const sizes = new Limiter(SIZE_CONCURRENCY);
    for (const catalog of catalogs)
      await unlessGone(async () => {
        options.onCatalog?.(catalog);
        for await (const page of this.client.schemas(catalog)) {
          const schemas = page.map((s) => s.name).filter((name) => !SKIPPED_SCHEMAS.has(name));
          await forEachBounded(schemas, SCHEMA_CONCURRENCY, async (schema) => {
            options.onSchema?.({ catalog, name: schema });
            await unlessGone(() => this.walkSchema(catalog, schema, sizes, options, onTable));
          });
        }
      });
  }

  private async walkSchema(
    catalog: string,
    schema: string,
    sizes: Limiter,
    options: WalkOptions,
    onTable: (table: WalkedTable) => void | Promise<void>,
  ): Promise<void> {
    for await (const page of this.client.tables(catalog, schema)) {
      options.signal?.throwIfAborted();
      const listed = page.map((info) => ({
        info,
        full_name: `${catalog}.${schema}.${info.name}`,
        updated_at: info.updated_at ?? null,
      }));
      const read = options.changedAmong
        ? await options.changedAmong(listed.map(({ info: _, ...l }) => l))
        : undefined;
      await Promise.all(
        listed.map(async ({ info, full_name, updated_at }) => {
          if (read && !read.has(full_name)) return onTable({ changed: false, full_name, updated_at });
          const table = await sizes.run(() => {
            options.signal?.throwIfAborted();
            return this.facts(catalog, schema, info);
          });
          return onTable({ changed: true, table });
        }),
      );
    }
  }

  private async facts(catalog: string, schema: string, info: UnityTableInfo): Promise<SyncedTable> {
    const { columns, view_dependencies: _dependencies, view_definition: _definition, ...record } = info;
    const partitionColumns = (columns ?? [])
      .filter((c) => c.partition_index !== undefined && c.partition_index !== null)
      .sort((a, b) => Number(a.partition_index) - Number(b.partition_index))
      .map((c) => c.name ?? null);
    const format = info.data_source_format?.toLowerCase() ?? null;
    const size = await this.size(info, format);
    return {
      full_name: `${catalog}.${schema}.${info.name}`,
      catalog,
      schema,
      name: info.name,
      format,
      table_type: info.table_type ?? null,
      location: info.storage_location ?? null,
      size_bytes: size.size_bytes,
      has_partitions: columns ? partitionColumns.length > 0 : null,
      updated_at: info.updated_at ?? null,
      detail: {
        ...record,
        column_count: columns?.length ?? null,
        partition_columns: partitionColumns,
        ...size.detail,
      },
    };
  }

  /** The table's size from its own metadata, or null and the reason (see the header). */
  private async size(
    info: UnityTableInfo,
    format: string | null,
  ): Promise<{ size_bytes: number | null; detail: Record<string, unknown> }> {
    const none = (note: string) => ({ size_bytes: null, detail: { size_note: note } });
    const location = info.storage_location;
    if (VIEW_TYPES.has(info.table_type ?? "")) return none("a view has no data of its own to measure");
    if (!location) return none("Unity's record has no storage location to read a size from");
    if (format === null || !SIZED_FORMATS.has(format))
      return none(
        `Unity's record has no size, and the agent reads sizes from Delta logs and Iceberg metadata only (this table is ${format ?? "of no stated format"})`,
      );
    try {
      const size = await this.sizeOf(location, format);
      if (size.size_bytes === null) return none(size.note);
      return { size_bytes: size.size_bytes, detail: { size_source: size.source, ...size.facts } };
    } catch (err) {
      return none(`could not read the size from ${location}: ${(err as Error).message}`);
    }
  }
}

/** Runs `walk`; a 404 (the catalog or schema was dropped meanwhile) ends it quietly. */
async function unlessGone(walk: () => Promise<void>): Promise<void> {
  try {
    await walk();
  } catch (err) {
    if (!(err instanceof RestCatalogError && err.status === 404)) throw err;
  }
}
