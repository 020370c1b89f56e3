/**
 * A Hive Metastore as a `CatalogClient`, on `HiveMetastoreClient` (one connection per test or walk).
 *
 * - One catalog, `hive` (Hive's own default catalog name); its schemas are the metastore's
 *   databases. Tables are listed per database by name, then read 100 at a time
 *   (`get_table_objects_by_name`): at most one database's names and one batch are held.
 * - `format` is the data's file format: `parquet`, `orc`, `avro`, `text`, ... from the storage
 *   descriptor (a Spark data source table's `spark.sql.sources.provider` first), `iceberg` for a
 *   table with `table_type=ICEBERG`. A Hive table the agent can crunch is `parquet` and not
 *   transactional (`detail.transactional`). `table_type` is the metastore's (`EXTERNAL_TABLE`...).
 * - Size: the table's `totalSize` statistic; for a partitioned table the sum of its partitions'
 *   (read 100 at a time); else the files under the location, listed where the allow
 *   list covers it (`sizeOf(location, "files")`), 4 tables at a time; else null, with the reason
 *   in `detail.size_note`. An Iceberg table's size is its snapshot's, as for Polaris.
 * - `detail` keeps the table's parameters but Spark's copy of the schema
 *   (`spark.sql.sources.schema*`, tens of kB of JSON for a wide table, the same as `columns`).
 * - `updated_at` is `transient_lastDdlTime` (seconds) in ms. Incremental mode reads every table
 *   (the plane accepts incremental syncs of workspace connections only).
 * - A table dropped between listing and reading is left out, as the metastore leaves it out; so
 *   are the rest of a database dropped during its walk.
 */
import type { HiveMetastoreCredentialsSchema, SyncedTable } from "@lakesmith/shared/catalogs";
import type { z } from "zod";
import { forEachBounded } from "../bounded.ts";
import type { CatalogClient, SizeOf, WalkedTable, WalkOptions } from "../types.ts";
import { type HiveConnectOptions, HiveMetastoreClient, type HiveTable } from "./client.ts";
import { HiveMetastoreError } from "./errors.ts";

type HiveMetastoreCredentials = z.infer<typeof HiveMetastoreCredentialsSchema>;

/** The one catalog a metastore connection shows. */
export const HIVE_CATALOG = "hive";
/** Tables read per call. */
export const HIVE_BATCH = 100;
const SIZE_CONCURRENCY = 4;
const VIEW_TYPES = new Set(["VIRTUAL_VIEW", "MATERIALIZED_VIEW"]);

/** Storage descriptor class names (input format or serde) to file format, first match wins. */
const FORMATS: [RegExp, string][] = [
  [/parquet/i, "parquet"],
  [/\.orc\./i, "orc"],
  [/avro/i, "avro"],
  [/RCFile|ColumnarSerDe/, "rcfile"],
  [/SequenceFile/, "sequencefile"],
  [/TextInputFormat|LazySimpleSerDe|OpenCSVSerde|JsonSerDe|RegexSerDe/, "text"],
];

export class HiveCatalog implements CatalogClient {
  constructor(
    private readonly connection: HiveMetastoreCredentials,
    private readonly sizeOf: SizeOf,
    private readonly options: { timeoutMs?: number } = {},
  ) {}

  async listCatalogs(): Promise<string[]> {
    return this.withClient(async (client) => {
      await client.getAllDatabases();
      return [HIVE_CATALOG];
    });
  }

  walkTables(options: WalkOptions, onTable: (table: WalkedTable) => void | Promise<void>): Promise<void> {
    if (options.catalog !== undefined && options.catalog !== HIVE_CATALOG) return Promise.resolve();
    return this.withClient(async (client) => {
      options.onCatalog?.(HIVE_CATALOG);
      for (const db of await client.getAllDatabases()) {
        options.signal?.throwIfAborted();
        options.onSchema?.({ catalog: HIVE_CATALOG, name: db });
        const names = await client.getAllTables(db);
        for (let at = 0; at < names.length; at += HIVE_BATCH) {
          options.signal?.throwIfAborted();
          const tables = await unlessDatabaseGone(
            client.getTableObjectsByName(db, names.slice(at, at + HIVE_BATCH)),
          );
          if (tables === null) break;
          await forEachBounded(tables, SIZE_CONCURRENCY, async (table) => {
            options.signal?.throwIfAborted();
            await onTable({ changed: true, table: await this.facts(client, table) });
          });
        }
      }
    });
  }

  private async facts(client: HiveMetastoreClient, table: HiveTable): Promise<SyncedTable> {
    const params = table.parameters ?? {};
    const format = formatOf(table);
    const ddl = Number(params.transient_lastDdlTime);
    const size = await this.size(client, table, format);
    return {
      full_name: `${HIVE_CATALOG}.${table.dbName}.${table.tableName}`,
      catalog: HIVE_CATALOG,
      schema: table.dbName,
      name: table.tableName,
      format,
      table_type: table.tableType || null,
      location: table.sd?.location || null,
      size_bytes: size.size_bytes,
      has_partitions: (table.partitionKeys ?? []).length > 0,
      updated_at: Number.isFinite(ddl) && ddl > 0 ? ddl * 1000 : null,
      detail: {
        database: table.dbName,
        table: table.tableName,
        owner: table.owner ?? null,
        table_type: table.tableType ?? null,
        columns: (table.sd?.cols ?? []).map((c) => ({ name: c.name, type: c.type })),
        partition_keys: (table.partitionKeys ?? []).map((c) => ({ name: c.name, type: c.type })),
        input_format: table.sd?.inputFormat ?? null,
        output_format: table.sd?.outputFormat ?? null,
        serde: table.sd?.serdeInfo?.serializationLib ?? null,
        transactional: params.transactional?.toLowerCase() === "true",
        parameters: keptParameters(params),
        ...size.detail,
        // The metastore's pointer is the table's state, whatever the size read found.
        ...(params.metadata_location ? { metadata_location: params.metadata_location } : {}),
      },
    };
  }

  /** The table's size and where it came from, or null and why (see the header). */
  private async size(
    client: HiveMetastoreClient,
    table: HiveTable,
    format: string | null,
  ): Promise<{ size_bytes: number | null; detail: Record<string, unknown> }> {
    const none = (note: string) => ({ size_bytes: null, detail: { size_note: note } });
    if (VIEW_TYPES.has(table.tableType)) return none("a view has no data of its own to measure");
    const location = table.sd?.location;
    if (format === "iceberg") {
      const metadata = table.parameters?.metadata_location;
      if (!metadata) return none("the Iceberg table has no metadata_location");
      return this.read(location || metadata.replace(/\/metadata\/[^/]*$/, ""), "iceberg");
    }
    const total = statistic(table.parameters);
    if (total !== null) return { size_bytes: total, detail: { size_source: "table_statistics" } };
    if ((table.partitionKeys ?? []).length > 0) {
      const summed = await partitionsTotal(client, table);
      if (summed.size !== null)
        return {
          size_bytes: summed.size,
          detail: { size_source: "partition_statistics", partition_count: summed.partitions },
        };
    }
    if (!location) return none("the metastore states no location and no totalSize for this table");
    return this.read(location, "files");
  }

  private async read(
    location: string,
    how: string,
  ): Promise<{ size_bytes: number | null; detail: Record<string, unknown> }> {
    try {
      const size = await this.sizeOf(location, how);
      if (size.size_bytes === null) return { size_bytes: null, detail: { size_note: size.note } };
      return { size_bytes: size.size_bytes, detail: { size_source: size.source, ...size.facts } };
    } catch (err) {
      return {
        size_bytes: null,
        detail: { size_note: `could not read the size from ${location}: ${(err as Error).message}` },
      };
    }
  }

  private async withClient<T>(fn: (client: HiveMetastoreClient) => Promise<T>): Promise<T> {
    const options: HiveConnectOptions = {
      uri: this.connection.metastore_uri,
      ...(this.connection.username === undefined ? {} : { username: this.connection.username }),
      ...(this.connection.password === undefined ? {} : { password: this.connection.password }),
      ...(this.connection.transport === undefined ? {} : { transport: this.connection.transport }),
      ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
    };
    const client = await HiveMetastoreClient.connect(options);
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }
}

/** The table's file format, or its input format class when no rule knows it (see the header). */
export function formatOf(table: HiveTable): string | null {
  const params = table.parameters ?? {};
  if (params.table_type?.toUpperCase() === "ICEBERG") return "iceberg";
  const provider = params["spark.sql.sources.provider"];
  if (provider && provider.toLowerCase() !== "hive") return provider.toLowerCase();
  if (VIEW_TYPES.has(table.tableType)) return null;
  const classes = [table.sd?.inputFormat, table.sd?.serdeInfo?.serializationLib].filter(Boolean).join(" ");
  for (const [pattern, name] of FORMATS) if (pattern.test(classes)) return name;
  return table.sd?.inputFormat || null;
}

/** `totalSize` of a parameter map, or null when absent or not a count of bytes. */
function statistic(params: Record<string, string> | undefined): number | null {
  const raw = params?.totalSize;
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  return Number(raw);
}

/** The sum of the partitions' `totalSize`, or null when any partition has none. */
async function partitionsTotal(
  client: HiveMetastoreClient,
  table: HiveTable,
): Promise<{ size: number | null; partitions: number }> {
  let size = 0;
  let partitions = 0;
  for await (const batch of client.partitionBatches(table.dbName, table.tableName)) {
    for (const partition of batch) {
      const total = statistic(partition.parameters);
      if (total === null) return { size: null, partitions };
      size += total;
      partitions++;
    }
  }
  return { size, partitions };
}

/** What `read` answers, or null when the metastore no longer knows the database. */
async function unlessDatabaseGone<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof HiveMetastoreError && err.type === "UnknownDBException") return null;
    throw err;
  }
}

/** The table's parameters without Spark's copy of its schema (see the header). */
function keptParameters(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).filter(([key]) => !key.startsWith("spark.sql.sources.schema")),
  );
}
