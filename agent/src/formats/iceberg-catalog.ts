/**
 * Iceberg tables a REST catalog tracks (a job's `catalog` reference): the client the reference
 * names, and the table's metadata as the catalog serves it, in the shape a table found by its
 * folder has, so the rest of the format reads both alike.
 */
import type { IcebergRestCatalogRef } from "@lakesmith/shared/jobs";
import { type IcebergTable as IcebergMetadata, keyOfPath, locationMismatch } from "../iceberg/index.ts";
import { type CatalogTableRef, RestCatalogClient } from "../iceberg/rest/index.ts";
import type { FormatContext } from "./types.ts";

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
