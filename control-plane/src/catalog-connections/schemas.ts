/**
 * Wire shapes of catalog connections and their synced tables (document 1, "Catalog connection and
 * synced catalog table"): the requests (ConnectionTest, ConnectionCreate, ConnectionUpdate), the
 * connection as the API shows it (secrets never: `has_<field>` says whether one is stored), the
 * test's answer, a sync job, and the browse answers.
 */
import { z } from "@hono/zod-openapi";
import { CATALOG_TYPES, SYNC_MODES } from "@lakesmith/shared/catalogs";
import { JOB_STATUSES, SYNC_STATUSES } from "../db/schema.ts";
import { pageQuery } from "../http/pagination.ts";

export const CONNECTION_PAGE_MAX = 1000;
export const CATALOG_TABLE_PAGE_MAX = 1000;
export const SYNC_INTERVAL_MAX_HOURS = 8760;

const TYPE_DESCRIPTION =
  "workspace: a workspace catalog (Databricks Unity Catalog, or the open-source Unity Catalog server); hive_metastore: a Hive Metastore over Thrift (one catalog, `hive`, Hive's own default catalog name; its databases are the schemas); polaris: an Iceberg REST catalog such as Apache Polaris. It never changes once created.";

const text = (max: number) => z.string().min(1).max(max);

/** Each credential field, with the types it belongs to. */
const CREDENTIAL_DOCS = {
  workspace_url: [
    text(2048),
    "workspace (required): the workspace URL (`https://<workspace>.cloud.databricks.com`) or the open-source server's base URL.",
  ],
  metastore_uri: [text(2048), "hive_metastore (required): `thrift://host:port` (port 9083 by default)."],
  catalog_url: [text(2048), "polaris (required): the catalog's base URL, the part before `/v1/...`."],
  warehouse: [
    text(255),
    "polaris: the warehouse (Polaris: the catalog name) the catalog's `/v1/config` is asked for.",
  ],
  client_id: [
    text(255),
    "workspace: OAuth machine-to-machine client id, with client_secret; polaris (required): the OAuth client id.",
  ],
  client_secret: [text(4096), "Secret. workspace: with client_id; polaris (required). Never returned."],
  token: [
    text(4096),
    "Secret. workspace: a static bearer token instead of client_id and client_secret (the open-source server). Never returned.",
  ],
  username: [text(255), "hive_metastore: optional user name."],
  password: [text(4096), "Secret. hive_metastore: optional password. Never returned."],
  transport: [
    text(16),
    "hive_metastore: the metastore's Thrift transport, `buffered` (default) or `framed` (its `hive.metastore.thrift.framed.transport.enabled`).",
  ],
  token_url: [text(2048), "polaris: the OAuth token endpoint; default `<catalog_url>/v1/oauth/tokens`."],
  scope: [text(1024), "polaris: the OAuth scope asked for."],
} as const;

type CredentialKey = keyof typeof CREDENTIAL_DOCS;

function credentialShape<T extends z.ZodType>(wrap: (field: z.ZodString) => T): Record<CredentialKey, T> {
  return Object.fromEntries(
    Object.entries(CREDENTIAL_DOCS).map(([key, [schema, description]]) => [
      key,
      wrap(schema).openapi({ description }),
    ]),
  ) as Record<CredentialKey, T>;
}

const TypeSchema = z.enum(CATALOG_TYPES).openapi({ description: TYPE_DESCRIPTION });

const CREDENTIALS_NOTE =
  "The credential fields are flat beside `type`; each belongs to the types its description names, and a field of another type is a 422 naming it. " +
  "A workspace takes client_id with client_secret, or a token, or neither (an open-source server without authentication). " +
  "Every URL must be one an agent's `--allow-endpoints` can name (`scheme://host[:port]`, no user info); jobs of the connection go only to an agent allowed its endpoints (the catalog's, and a Polaris token_url's).";

export const ConnectionTestSchema = z
  .strictObject({ type: TypeSchema, ...credentialShape((f) => f.optional()) })
  .openapi("ConnectionTest", { description: CREDENTIALS_NOTE });
export type ConnectionTest = z.infer<typeof ConnectionTestSchema>;

const NameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^\S(.*\S)?$/, "no leading or trailing spaces")
  .openapi({ description: "Unique among connections; a duplicate gives 409.", example: "unity-prod" });

const IntervalSchema = z
  .number()
  .int()
  .min(1)
  .max(SYNC_INTERVAL_MAX_HOURS)
  .openapi({
    description: `Hours between scheduled full syncs (1 to ${SYNC_INTERVAL_MAX_HOURS}, default 24): the scheduler queues one once the latest sync (manual or scheduled) was queued this long ago, or the connection was created this long ago when it never synced.`,
  });

const IsActiveSchema = z.boolean().openapi({
  description: "false: no scheduled syncs, and POST .../sync is a 409; the synced tables stay readable.",
});

export const ConnectionCreateSchema = z
  .strictObject({
    name: NameSchema,
    type: TypeSchema,
    ...credentialShape((f) => f.optional()),
    is_active: IsActiveSchema.default(true),
    sync_interval_hours: IntervalSchema.default(24),
  })
  .openapi("ConnectionCreate", { description: CREDENTIALS_NOTE });
export type ConnectionCreate = z.infer<typeof ConnectionCreateSchema>;

export const ConnectionUpdateSchema = z
  .strictObject({
    name: NameSchema.optional(),
    type: TypeSchema.optional().openapi({
      description: "Accepted only when it is the connection's own type: a type never changes (422).",
    }),
    ...credentialShape((f) => f.nullable().optional()),
    is_active: IsActiveSchema.optional(),
    sync_interval_hours: IntervalSchema.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: "nothing to update: give at least one field" })
  .openapi("ConnectionUpdate", {
    description:
      "Any subset of the fields; fields left out keep their value, null clears an optional one. A secret sent replaces the stored one (re-encrypted); a secret left out is kept. " +
      "The result must still be valid credentials for the connection's type (422 naming the field otherwise).",
  });
export type ConnectionUpdate = z.infer<typeof ConnectionUpdateSchema>;

const nullableText = (description: string) => z.string().nullable().optional().openapi({ description });
const secretFlag = (field: string) =>
  z
    .boolean()
    .optional()
    .openapi({ description: `Whether a ${field} is stored (its value is never returned).` });

export const ConnectionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(CATALOG_TYPES),
    workspace_url: nullableText("workspace."),
    metastore_uri: nullableText("hive_metastore."),
    catalog_url: nullableText("polaris."),
    warehouse: nullableText("polaris."),
    client_id: nullableText("workspace, polaris."),
    username: nullableText("hive_metastore."),
    transport: nullableText("hive_metastore: buffered or framed; null is buffered."),
    token_url: nullableText("polaris."),
    scope: nullableText("polaris."),
    has_client_secret: secretFlag("client_secret (workspace, polaris)"),
    has_token: secretFlag("token (workspace)"),
    has_password: secretFlag("password (hive_metastore)"),
    endpoints: z.array(z.string()).openapi({
      description:
        "What an agent's `--allow-endpoints` must cover for this connection's jobs (`scheme://host:port`).",
    }),
    is_active: z.boolean(),
    sync_interval_hours: z.number().int(),
    sync_status: z.enum(SYNC_STATUSES).openapi({
      description:
        "idle: never synced. running: a sync is queued, offered or running (also while a sync lost by its agent waits for another attempt). " +
        "completed or failed: how the latest sync ended (a cancelled sync is failed); `last_sync_error` says why it failed.",
    }),
    last_synced_at: z.string().nullable().openapi({ description: "When the latest successful sync ended." }),
    last_sync_error: z.string().nullable(),
    last_sync_job_id: z
      .string()
      .nullable()
      .openapi({ description: "The latest sync (GET /api/v1/jobs/{job_id})." }),
    next_sync_at: z.string().nullable().openapi({
      description:
        "When the scheduler queues the next full sync (it ticks every 15 s on Node, every minute on Workers); null while inactive.",
    }),
    tables_count: z.number().int().openapi({ description: "Synced tables not marked deleted." }),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  })
  .openapi("CatalogConnection");
export type ConnectionWire = z.infer<typeof ConnectionSchema>;

export const ConnectionListQuery = pageQuery(100, CONNECTION_PAGE_MAX).extend({
  is_active: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "Only active (true) or inactive (false) connections." }),
});

export const ConnectionIdParam = z.object({
  connection_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "connection_id", in: "path" }, example: "con_4k9x2m7q0c1v8b3n5z6t" }),
});

export const DeleteQuery = z.object({
  confirm: z
    .literal("true", {
      error: "must be true: deleting a connection deletes its synced tables too, and can't be undone",
    })
    .openapi({
      param: { name: "confirm", in: "query" },
      description: "Must be `true` (irreversible); anything else, or none, is a 422 naming `confirm`.",
    }),
});

export const TestJobIdParam = z.object({
  job_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "job_id", in: "path" }, example: "job_4k9x2m7q0c1v8b3n5z6t" }),
});

export const ConnectionTestAnswerSchema = z
  .object({
    job_id: z.string().openapi({ description: "The `catalog_test` job that asked the agent." }),
    status: z.enum(JOB_STATUSES).openapi({ description: "The job's status." }),
    ok: z.boolean().nullable().openapi({
      description:
        "true: the catalog accepted the credentials and listed `catalogs`. false: it refused them, could not be reached, or the job failed; `message` says why. null: no answer yet.",
    }),
    catalogs: z.array(z.string()),
    message: z.string().nullable(),
    duration_ms: z.number().nullable(),
    endpoints: z.array(z.string()).openapi({ description: "The endpoints the agent had to be allowed." }),
  })
  .openapi("ConnectionTestAnswer");
export type ConnectionTestAnswer = z.infer<typeof ConnectionTestAnswerSchema>;

export const SyncQuery = z.object({
  catalog: z.string().min(1).max(255).optional().openapi({
    description:
      "Only this catalog: its tables are synced, and only its tables can be marked deleted. Absent: every catalog.",
  }),
  mode: z
    .enum(SYNC_MODES)
    .default("full")
    .openapi({
      description:
        "full (default): walk every table and mark deleted those no longer reported. incremental (workspace connections only, else 422 on `mode`): " +
        "the agent sends the catalog's listing with each table's `updated_at` a page at a time, the control plane answers which it does not hold as they are, and only those are read again; " +
        "tables the listing no longer names are marked deleted. Either way tables are written as the agent sends them, and only a sync that succeeds marks any deleted: " +
        "a failed or cancelled sync keeps what it wrote and drops nothing.",
    }),
});

export const SyncSummarySchema = z
  .object({
    mode: z.enum(SYNC_MODES),
    catalogs: z.array(z.string()),
    schemas_count: z.number().int(),
    tables_count: z.number().int().openapi({ description: "Tables reported (incremental: changed or new)." }),
    unchanged_count: z.number().int().openapi({
      description: "Incremental: listed tables already held with the same updated_at, not read again.",
    }),
    tables_marked_deleted: z.number().int(),
    below_min_size: z.number().int().openapi({ description: "Tables left out for their size." }),
    duration_ms: z.number(),
  })
  .openapi("CatalogSyncSummary");

export const SyncJobSchema = z
  .object({
    id: z.string(),
    connection_id: z.string(),
    status: z.enum(JOB_STATUSES),
    trigger: z.string().openapi({ description: "manual, or schedule for the scheduler's syncs." }),
    mode: z.enum(SYNC_MODES),
    catalog: z.string().nullable(),
    min_size_bytes: z.number().int().openapi({
      description:
        "Tables whose known size is below this are not synced: the min_eligible_table_size_gb setting (GB of 2^30 bytes) when the sync was queued. A table whose size the agent can't tell is synced.",
    }),
    summary: SyncSummarySchema.nullable().openapi({ description: "Once the sync succeeded." }),
    error: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("CatalogSyncJob");
export type SyncJobWire = z.infer<typeof SyncJobSchema>;

// ---------------------------------------------------------------------------------------------
// browse

export const CatalogSummarySchema = z
  .object({ name: z.string(), schemas_count: z.number().int(), tables_count: z.number().int() })
  .openapi("SyncedCatalog");

export const SchemaSummarySchema = z
  .object({ catalog: z.string(), name: z.string(), tables_count: z.number().int() })
  .openapi("SyncedSchema");

export const CatalogNameParam = ConnectionIdParam.extend({
  catalog_name: z
    .string()
    .min(1)
    .max(255)
    .openapi({ param: { name: "catalog_name", in: "path" }, example: "main" }),
});

export const FullNameParam = ConnectionIdParam.extend({
  full_name: z
    .string()
    .min(1)
    .max(1024)
    .openapi({ param: { name: "full_name", in: "path" }, example: "main.sales.orders" }),
});

export const SORT_KEYS = ["full_name", "name", "size_bytes", "updated_at", "synced_at"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

const booleanQuery = (description: string) => z.enum(["true", "false"]).optional().openapi({ description });
const bytesQuery = (description: string) =>
  z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description });

export const CatalogTablesQuery = pageQuery(100, CATALOG_TABLE_PAGE_MAX).extend({
  catalog: text(255).optional().openapi({ description: "Exact catalog name." }),
  schema: text(255).optional().openapi({ description: "Exact schema name." }),
  prefix: text(255).optional().openapi({
    description:
      "Tables whose name (the last part of full_name) starts with this; ASCII letters match either case.",
  }),
  search: text(255).optional().openapi({
    description: "Tables whose full_name contains this; ASCII letters match either case.",
  }),
  format: text(64).optional().openapi({
    description: "delta, iceberg, parquet, orc, avro, text, ... (see CatalogTable.format); either case.",
  }),
  table_type: text(64).optional().openapi({
    description:
      "MANAGED, EXTERNAL, VIEW, ... (Hive Metastore: MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW, ...); either case.",
  }),
  min_size_bytes: bytesQuery("size_bytes at least this; tables of unknown size are left out."),
  max_size_bytes: bytesQuery("size_bytes at most this; tables of unknown size are left out."),
  has_partitions: booleanQuery(
    "Only partitioned (true) or unpartitioned (false) tables; unknown ones are left out.",
  ),
  include_deleted: booleanQuery(
    "true: also tables marked deleted (their `deleted_at` is set). Default false.",
  ),
  sort_by: z.enum(SORT_KEYS).default("full_name").openapi({
    description:
      "full_name (default), name, size_bytes, updated_at (the catalog's last change) or synced_at; ties by full_name. Unknown values sort last either way.",
  }),
  sort_order: z.enum(["asc", "desc"]).default("asc"),
});
export type CatalogTablesFilter = z.infer<typeof CatalogTablesQuery>;

export const CatalogTableSchema = z
  .object({
    full_name: z.string().openapi({ description: "`<catalog>.<schema>.<table>`." }),
    catalog: z.string(),
    schema: z.string(),
    name: z.string(),
    format: z.string().nullable().openapi({
      description:
        "The table format as the catalog or the table's metadata tells: delta, iceberg, ... For a Hive Metastore table, its files' format from the storage descriptor (parquet, orc, avro, text, rcfile, sequencefile; a Spark data source table's provider), or iceberg for a table registered with table_type=ICEBERG. A Hive table Lakesmith can crunch is parquet and not transactional (the detail's `transactional`).",
    }),
    table_type: z.string().nullable().openapi({
      description:
        "The catalog's own kind of table: MANAGED, EXTERNAL, VIEW (Unity); MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW (Hive Metastore); ...",
    }),
    location: z.string().nullable(),
    size_bytes: z.number().int().nullable().openapi({
      description:
        "Null when the agent could not tell. Hive Metastore: the totalSize statistic, else the partitions' sum, else the files listed under the location where the agent may read it.",
    }),
    has_partitions: z.boolean().nullable(),
    updated_at: z.string().nullable().openapi({ description: "When the catalog last changed the table." }),
    synced_at: z.string().openapi({ description: "When a sync last reported the table." }),
    deleted_at: z.string().nullable().openapi({
      description: "When a sync found the table gone (or below the minimum size); null while live.",
    }),
  })
  .openapi("CatalogTable");

export const CatalogTableDetailSchema = CatalogTableSchema.extend({
  connection_id: z.string(),
  detail: z.record(z.string(), z.unknown()).openapi({
    description:
      "The catalog's own record of the table, as the agent read it (and the metadata read for its size).",
  }),
}).openapi("CatalogTableDetail");
