/**
 * The agent's catalog clients: what a `catalog_test` or `catalog_sync` job reads a customer's
 * catalog with. One interface (`CatalogClient`: list catalogs, walk tables with their facts), one
 * implementation per connection type: `polaris` (Iceberg REST), `workspace` (Unity Catalog) and
 * `hive_metastore` (Thrift, `hive/`).
 *
 * @example
 * const catalog = openCatalog(payload.connection, { sizeOf: sizeReader({ allow, store, scratchDir, memoryLimitMb }) });
 * const result = await syncCatalog(catalog, payload, { signal });
 */
import type { CatalogCredentials } from "@lakesmith/shared/catalogs";
import type { Clock } from "@lakesmith/shared/time";
import { HiveCatalog } from "./hive/catalog.ts";
import { PolarisCatalog } from "./polaris.ts";
import type { CatalogClient, SizeOf } from "./types.ts";
import { UnityCatalog } from "./unity/catalog.ts";
import { UnityClient } from "./unity/client.ts";

export { HIVE_CATALOG, HiveCatalog } from "./hive/catalog.ts";
export { HiveMetastoreError } from "./hive/errors.ts";
export { POLARIS_DEFAULT_SCOPE, PolarisCatalog } from "./polaris.ts";
export { type SizeReaderOptions, sizeReader } from "./size.ts";
export { type SyncOptions, syncCatalog } from "./sync.ts";
export type { CatalogClient, SizeOf, TableSize, WalkedTable, WalkOptions } from "./types.ts";
export { SIZE_CONCURRENCY, UnityCatalog } from "./unity/catalog.ts";
export { UnityClient } from "./unity/client.ts";

/** A connection whose type has no client in this agent version. */
export class UnsupportedCatalogError extends Error {
  override readonly name = "UnsupportedCatalogError";
}

/** A connection whose credentials can't be used as given (a workspace with neither kind). */
export class CatalogCredentialsError extends Error {
  override readonly name = "CatalogCredentialsError";
}

export interface OpenCatalogOptions {
  /** Reads the size of tables whose catalog record has none (Unity, Hive without statistics). */
  sizeOf: SizeOf;
  fetch?: typeof fetch;
  clock?: Clock;
  timeoutMs?: number;
}

/** The client for `connection`; throws `UnsupportedCatalogError` or `CatalogCredentialsError`. */
export function openCatalog(connection: CatalogCredentials, options: OpenCatalogOptions): CatalogClient {
  const { sizeOf, ...http } = options;
  switch (connection.type) {
    case "polaris":
      return new PolarisCatalog(connection, http);
    case "workspace": {
      const { token, client_id: clientId, client_secret: clientSecret } = connection;
      const auth =
        clientId !== undefined && clientSecret !== undefined
          ? { clientId, clientSecret }
          : token !== undefined
            ? { token }
            : undefined;
      if (auth === undefined)
        throw new CatalogCredentialsError(
          "a workspace connection needs a token, or a service principal's client_id and client_secret",
        );
      return new UnityCatalog(
        new UnityClient({ workspaceUrl: connection.workspace_url, auth, ...http }),
        sizeOf,
      );
    }
    case "hive_metastore":
      return new HiveCatalog(
        connection,
        sizeOf,
        http.timeoutMs === undefined ? {} : { timeoutMs: http.timeoutMs },
      );
  }
}
