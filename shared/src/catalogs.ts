/**
 * Catalog connections (document 1, "Catalog connections"): what the control plane sends an agent
 * to test a connection or sync its tables, and what the agent answers. The control plane never
 * talks to a catalog: catalogs live inside the customer network, like the data.
 *
 * - Credentials travel only inside a job's payload (`connection`); the control plane stores them
 *   encrypted and purges them from the job row when the job ends.
 * - A synced table is named `<catalog>.<schema>.<table>` (`full_name`). For an Iceberg REST
 *   (Polaris) catalog, the catalog is the connection's warehouse and the schema its namespace,
 *   levels joined by `.`.
 * - Sizes are bytes of the table's live data as its metadata states them, or null when the agent
 *   could not tell (the table is then kept: a size threshold never drops what it can't measure).
 *
 * @example
 * const payload = CatalogSyncPayloadSchema.parse(offer.payload);
 * if (payload.connection.type === "polaris") console.log(payload.connection.catalog_url);
 */
import { z } from "zod";

export const CATALOG_TEST_KIND = "catalog_test";
export const CATALOG_SYNC_KIND = "catalog_sync";

/** Document 1's three types: a workspace catalog (Unity), a Hive Metastore, a Polaris REST catalog. */
export const CATALOG_TYPES = ["workspace", "hive_metastore", "polaris"] as const;
export type CatalogType = (typeof CATALOG_TYPES)[number];

export const SYNC_MODES = ["full", "incremental"] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

const url = z.string().url();

/** Databricks Unity Catalog or the open-source Unity Catalog server. */
export const WorkspaceCredentialsSchema = z.object({
  type: z.literal("workspace"),
  workspace_url: url,
  /** OAuth machine-to-machine client (Databricks); or a static `token` (the open-source server). */
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional(),
  token: z.string().min(1).optional(),
});

export const HiveMetastoreCredentialsSchema = z.object({
  type: z.literal("hive_metastore"),
  /** `thrift://host:port`. */
  metastore_uri: z.string().regex(/^thrift:\/\/[^/:]+(:\d+)?\/?$/, "a thrift://host:port URI"),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  /** The metastore's Thrift transport (`hive.metastore.thrift.framed.transport.enabled`); default buffered. */
  transport: z.enum(["buffered", "framed"]).optional(),
});

export const PolarisCredentialsSchema = z.object({
  type: z.literal("polaris"),
  /** The catalog's base URL, the part before `/v1/...`. */
  catalog_url: url,
  /** The warehouse (Polaris: the catalog name) `/v1/config` is asked for. */
  warehouse: z.string().min(1).optional(),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  /** Default `<catalog_url>/v1/oauth/tokens`. */
  token_url: url.optional(),
  scope: z.string().min(1).optional(),
});

/** A connection's type and credentials, as a job carries them. */
export const CatalogCredentialsSchema = z.discriminatedUnion("type", [
  WorkspaceCredentialsSchema,
  HiveMetastoreCredentialsSchema,
  PolarisCredentialsSchema,
]);
export type CatalogCredentials = z.infer<typeof CatalogCredentialsSchema>;

/** Each type's secret fields: encrypted at rest, never returned, never logged. */
export const SECRET_FIELDS: Record<CatalogType, readonly string[]> = {
  workspace: ["client_secret", "token"],
  hive_metastore: ["password"],
  polaris: ["client_secret"],
};

/**
 * The endpoints a connection's jobs talk to, which an agent's allowed endpoints must cover: the
 * catalog's, and a Polaris token URL's where one is set (the client secret is sent there).
 */
export function catalogEndpoints(connection: CatalogCredentials): string[] {
  if (connection.type === "workspace") return [connection.workspace_url];
  if (connection.type === "hive_metastore") return [connection.metastore_uri];
  return connection.token_url ? [connection.catalog_url, connection.token_url] : [connection.catalog_url];
}

// ---------------------------------------------------------------------------------------------
// test

export const CatalogTestPayloadSchema = z.object({ connection: CatalogCredentialsSchema });
export type CatalogTestPayload = z.infer<typeof CatalogTestPayloadSchema>;

export const CatalogTestResultSchema = z.object({
  /** False when the catalog refused or could not be reached; `message` says why, in its words. */
  ok: z.boolean(),
  catalogs: z.array(z.string()),
  message: z.string().nullable(),
  duration_ms: z.number().nonnegative(),
});
export type CatalogTestResult = z.infer<typeof CatalogTestResultSchema>;

// ---------------------------------------------------------------------------------------------
// sync

export const CatalogSyncPayloadSchema = z.object({
  connection_id: z.string().min(1),
  connection: CatalogCredentialsSchema,
  /** Only this catalog; absent: every catalog. */
  catalog: z.string().min(1).optional(),
  mode: z.enum(SYNC_MODES).default("full"),
  /** Tables whose known size is below this are not reported (the minimum eligible size setting). */
  min_size_bytes: z.number().int().nonnegative(),
});
export type CatalogSyncPayload = z.infer<typeof CatalogSyncPayloadSchema>;

export const SyncedTableSchema = z.object({
  full_name: z.string().min(1),
  catalog: z.string(),
  schema: z.string(),
  name: z.string(),
  /** `delta`, `iceberg`, `hive`, `parquet`, ... as the catalog or the table's metadata tells. */
  format: z.string().nullable(),
  /** The catalog's kind of table: `MANAGED`, `EXTERNAL`, `VIEW`, `ICEBERG`, ... */
  table_type: z.string().nullable(),
  location: z.string().nullable(),
  size_bytes: z.number().int().nonnegative().nullable(),
  has_partitions: z.boolean().nullable(),
  /** When the catalog last changed the table (ms); null when it does not say. */
  updated_at: z.number().nullable(),
  /** The catalog's own record of the table (and the metadata read for its size). */
  detail: z.record(z.string(), z.unknown()),
});
export type SyncedTable = z.infer<typeof SyncedTableSchema>;

/** A table as a listing names it, before anything else is read. */
export const ListedTableSchema = z.object({
  full_name: z.string().min(1),
  updated_at: z.number().nullable(),
});
export type ListedTable = z.infer<typeof ListedTableSchema>;

/** At most this many tables or listed tables in one part; and at most `SYNC_PART_BYTES` of JSON. */
export const SYNC_PART_TABLES = 1000;
export const SYNC_PART_LISTED = 2000;
/** Well under a WebSocket message's limit on Workers (1 MiB) and a D1 value's (2 MB). */
export const SYNC_PART_BYTES = 512 * 1024;

/**
 * A sync's tables travel in parts (the protocol's `part` messages) while the walk goes on, never
 * in the result, so neither side holds a whole catalog:
 * - `tables`: read (full mode: every table at or above the size threshold; incremental: the new
 *   and changed ones); the plane upserts them at once, as seen by this sync.
 * - `listed` (incremental mode): a page of the catalog's listing with each table's `updated_at`;
 *   the plane confirms, as seen by this sync, the live tables whose `updated_at` it already has,
 *   and answers the others in `read` (`CatalogSyncPartReplySchema`): only those are read.
 * At the job's successful end the plane marks deleted the live tables this sync did not see.
 */
export const CatalogSyncPartSchema = z.object({
  tables: z.array(SyncedTableSchema).max(SYNC_PART_TABLES).default([]),
  listed: z.array(ListedTableSchema).max(SYNC_PART_LISTED).default([]),
});
export type CatalogSyncPart = z.infer<typeof CatalogSyncPartSchema>;

export const CatalogSyncPartReplySchema = z.object({
  /** The listed tables to read: new, changed, marked deleted, or of unknown `updated_at`. */
  read: z.array(z.string()),
});
export type CatalogSyncPartReply = z.infer<typeof CatalogSyncPartReplySchema>;

/** What a sync answers at its end: counts only (its tables went in parts). */
export const CatalogSyncResultSchema = z.object({
  mode: z.enum(SYNC_MODES),
  catalogs: z.array(z.string()),
  schemas_count: z.number().int().nonnegative(),
  /** Tables sent in parts: every table at or above the threshold, or (incremental) the read ones. */
  tables_count: z.number().int().nonnegative(),
  /** Incremental mode: listed tables the plane already had as they are (kept, not read). */
  unchanged_count: z.number().int().nonnegative(),
  /** Tables left out because their size is below `min_size_bytes`. */
  below_min_size: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
});
export type CatalogSyncResult = z.infer<typeof CatalogSyncResultSchema>;
