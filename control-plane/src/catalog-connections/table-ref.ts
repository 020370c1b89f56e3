/**
 * Tables onboarded through a catalog connection (`tables.catalog_connection_id`,
 * `catalog_full_name`): which synced table a new one links to, and the one place a linked
 * table's job payload gets its `catalog` (the Iceberg REST reference the agent loads and commits
 * the table through).
 *
 * - Polaris connections link Iceberg tables (format `iceberg`, committed through the REST
 *   catalog). Hive Metastore connections link Hive tables (format `hive`: the agent reads the
 *   partitions from the metastore and commits by moving them) and Iceberg tables registered in the
 *   metastore (format `iceberg`, committed by swapping `metadata_location`). Whether a Hive table can
 *   be rewritten (Parquet, not transactional, ...) the agent's onboarding says, with the reason.
 *   Workspace (Unity) connections link EXTERNAL Delta tables (format `delta`: the log is the
 *   table, so its jobs carry no catalog reference); managed tables are refused with the reason
 *   (their storage is reached only with credentials Unity vends). The table's `uri` is the
 *   synced location.
 * - A reference carries the connection's decrypted client secret: the kinds that carry one
 *   declare `CATALOG_REF_SECRETS` (`ref-needs.ts`), so no job view shows it and the job's end purges it.
 * - A linked table whose connection or synced table is gone (or marked deleted) gets no job: 409.
 */
import type { CatalogRef } from "@lakesmith/shared/jobs";
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type CatalogConnection, type CatalogTable, catalogTables, type LakeTable } from "../db/schema.ts";
import { conflict, invalidField } from "../http/problem.ts";
import type { CatalogConnectionService } from "./service.ts";

/** What a new table links to, as `POST /api/v1/tables` names it. */
export interface CatalogLinkRequest {
  catalog_connection_id: string;
  catalog_table: string;
}

export class CatalogTableRefs {
  constructor(
    private readonly db: Db,
    private readonly connections: CatalogConnectionService,
  ) {}

  /**
   * The synced table a new table links to, with its location; 422 naming the field when the
   * connection or the synced table does not exist (or is marked deleted), or the synced table is
   * not one the connection's type can link (`linkedFormat`). `format` is the Lakesmith table's.
   */
  async linkOf(
    request: CatalogLinkRequest,
  ): Promise<{ connection: CatalogConnection; synced: CatalogTable; format: LinkedFormat; uri: string }> {
    const connection = await this.connections.find(request.catalog_connection_id);
    if (!connection)
      throw invalidField(
        "catalog_connection_id",
        `no catalog connection '${request.catalog_connection_id}' (list them with GET /api/v1/catalog-connections)`,
      );
    const synced = await this.synced(connection.id, request.catalog_table);
    if (!synced || synced.deletedAt)
      throw invalidField(
        "catalog_table",
        `connection '${connection.name}' has no ${synced ? "live " : ""}synced table '${request.catalog_table}' ` +
          `(sync it with POST /api/v1/catalog-connections/${connection.id}/sync, then list GET /api/v1/catalog-connections/${connection.id}/tables)`,
      );
    const format = linkedFormat(connection.type, synced);
    if (!synced.location)
      throw invalidField("catalog_table", `the catalog states no location for '${synced.fullName}'`);
    return { connection, synced, format, uri: storageUri(synced.location) };
  }

  /**
   * The `catalog` of a job payload on `table`: undefined for a table registered by its URI; 409
   * when its connection or synced table is gone or marked deleted.
   *
   * @example const catalog = await refs.of(table); const payload = { ...base, ...(catalog ? { catalog } : {}) };
   */
  async of(
    table: Pick<LakeTable, "name" | "catalogConnectionId" | "catalogFullName">,
  ): Promise<CatalogRef | undefined> {
    if (!table.catalogConnectionId || !table.catalogFullName) return undefined;
    const connection = await this.connections.find(table.catalogConnectionId);
    const synced = connection ? await this.synced(connection.id, table.catalogFullName) : undefined;
    if (!connection || !synced || synced.deletedAt)
      throw conflict(
        `Table '${table.name}' is managed by catalog table '${table.catalogFullName}', which ` +
          (connection
            ? "the latest catalog sync no longer reported"
            : "belongs to a deleted catalog connection") +
          "; no job can load it. Sync the connection again, or delete the table.",
      );
    // A Unity table's Delta log is the table: its jobs commit to the log, as for a table registered by URI.
    if (connection.type === "workspace") return undefined;
    const credentials = await this.connections.credentialsOf(connection);
    if (credentials.type === "hive_metastore")
      return {
        type: "hive_metastore",
        uri: credentials.metastore_uri,
        database: synced.schema,
        table: synced.name,
        ...(credentials.username ? { username: credentials.username } : {}),
        ...(credentials.password ? { password: credentials.password } : {}),
        ...(credentials.transport ? { transport: credentials.transport } : {}),
      };
    if (credentials.type !== "polaris") throw new Error(`connection ${connection.id} can't link tables`);
    return {
      type: "iceberg_rest",
      uri: credentials.catalog_url,
      ...(credentials.warehouse ? { warehouse: credentials.warehouse } : {}),
      namespace: synced.schema.split("."),
      table: synced.name,
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      ...(credentials.token_url ? { token_url: credentials.token_url } : {}),
      ...(credentials.scope ? { scope: credentials.scope } : {}),
    };
  }

  private async synced(connectionId: string, fullName: string): Promise<CatalogTable | undefined> {
    const [row] = await this.db
      .select()
      .from(catalogTables)
      .where(and(eq(catalogTables.connectionId, connectionId), eq(catalogTables.fullName, fullName)));
    return row;
  }
}

type LinkedFormat = "iceberg" | "hive" | "delta";

/**
 * The Lakesmith format of a synced table a connection of `type` links, or a 422 naming
 * `catalog_table` with the reason it can't be linked.
 */
function linkedFormat(type: CatalogConnection["type"], synced: CatalogTable): LinkedFormat {
  const stored = synced.format?.toLowerCase() ?? null;
  const refuse = (why: string) => invalidField("catalog_table", `'${synced.fullName}' ${why}`);
  if (type === "polaris") {
    if (stored !== "iceberg")
      throw refuse(
        `is a ${stored ?? "unknown-format"} table; tables of a Polaris connection are onboarded as Iceberg tables only`,
      );
    return "iceberg";
  }
  if (type === "hive_metastore") {
    if (stored === "iceberg") return "iceberg";
    if (stored !== "parquet")
      throw refuse(
        `is stored as ${stored ?? "an unknown format"}; Hive tables are onboarded when they are Parquet (or Iceberg)`,
      );
    return "hive";
  }
  // Workspace (Unity Catalog): external Delta tables, whose storage the agent reaches directly.
  if (stored !== "delta")
    throw refuse(
      `is a ${stored ?? "unknown-format"} table; tables of a workspace connection are onboarded when they are Delta tables`,
    );
  if ((synced.tableType ?? "").toUpperCase() !== "EXTERNAL")
    throw refuse(
      `is a ${synced.tableType ?? "unknown-type"} table: its storage is Unity's own, reached only with credentials Unity vends, which agents do not use; only EXTERNAL tables, whose storage the agent is allowed directly, are onboarded`,
    );
  return "delta";
}

/**
 * A catalog's location as a table's `uri`: Hadoop's `s3a://` and `s3n://` are `s3://` (what agents
 * read and allow lists name; the agent keeps the catalog's own spelling when it writes one back).
 */
export function storageUri(location: string): string {
  return location.replace(/^s3[an]:\/\//i, "s3://");
}
