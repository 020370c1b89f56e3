/**
 * Iceberg tables a catalog tracks (a job's `catalog` reference), behind one interface: load the
 * table's current metadata as the catalog names it (in the shape a table found by its folder has,
 * so the rest of the format reads both alike), and commit a prepared change through the catalog,
 * which decides which writer wins.
 *
 * - An Iceberg REST catalog (Polaris, ...): `loadTable` and `commitTable` (`iceberg/rest/`).
 * - A Hive Metastore (Iceberg's HiveCatalog): `metadata_location` swapped under the metastore's
 *   lock (`iceberg-metastore.ts`).
 */
import type { CatalogRef, IcebergRestCatalogRef } from "@lakesmith/shared/jobs";
import type { ReplaceCommit } from "../iceberg/commit.ts";
import { type IcebergTable as IcebergMetadata, keyOfPath, locationMismatch } from "../iceberg/index.ts";
import {
  type CatalogTableRef,
  commitReplaceThroughCatalog,
  RestCatalogClient,
} from "../iceberg/rest/index.ts";
import type { ObjectStore } from "../store/index.ts";
import { metastoreCatalog } from "./iceberg-metastore.ts";
import type { FormatContext } from "./types.ts";

/** What a commit through a catalog came to: applied, or refused because another writer won. */
export type IcebergCatalogOutcome = { committed: true } | { committed: false; message: string };

export interface IcebergCatalog {
  load(store: ObjectStore): Promise<IcebergMetadata>;
  commit(store: ObjectStore, table: IcebergMetadata, change: ReplaceCommit): Promise<IcebergCatalogOutcome>;
}

/** The catalog a job's reference names. */
export function icebergCatalog(ref: CatalogRef): IcebergCatalog {
  if (ref.type === "hive_metastore") return metastoreCatalog(ref);
  const catalog = catalogTable(ref);
  return {
    load: (store) => loadFromCatalog(store, catalog),
    async commit(store, table, change) {
      const outcome = await commitReplaceThroughCatalog(store, catalog, table, change);
      return outcome.committed ? { committed: true } : { committed: false, message: outcome.message };
    },
  };
}

/** The catalog client and table name a job's catalog reference names. */
export function catalogTable(ref: IcebergRestCatalogRef): CatalogTableRef {
  const auth = ref.token
    ? { token: ref.token }
    : ref.client_id && ref.client_secret
      ? {
          clientId: ref.client_id,
          clientSecret: ref.client_secret,
          ...(ref.token_url ? { tokenUrl: ref.token_url } : {}),
          ...(ref.scope ? { scope: ref.scope } : {}),
        }
      : undefined;
  const client = new RestCatalogClient({
    uri: ref.uri,
    ...(ref.warehouse ? { warehouse: ref.warehouse } : {}),
    ...(auth ? { auth } : {}),
  });
  return { client, namespace: ref.namespace, name: ref.table };
}

/** The table's metadata as its catalog serves it, read like a file-found table's. */
export async function loadFromCatalog(
  store: FormatContext["store"],
  catalog: CatalogTableRef,
): Promise<IcebergMetadata> {
  const loaded = await catalog.client.loadTable(catalog.namespace, catalog.name);
  const metadataKey = loaded.metadataLocation
    ? (keyOfPath(loaded.metadataLocation, loaded.metadata.location, store.uri) ?? loaded.metadataLocation)
    : "";
  return {
    storeUri: store.uri,
    metadataKey,
    metadata: loaded.metadata,
    locationMismatch: locationMismatch(loaded.metadata.location, store.uri),
  };
}
