/**
 * What a job that carries a catalog reference (`catalog` in a table job's payload, built by
 * `table-ref.ts`) declares: its secret fields, and the endpoints its agent must be allowed.
 * Kept apart from the builder so that job kind declarations import no service.
 */
import { catalogEndpoints } from "@lakesmith/shared/catalogs";
import type { CatalogRef } from "@lakesmith/shared/jobs";

/** The payload fields of a catalog reference that hold credentials. */
export const CATALOG_REF_SECRETS = ["catalog.client_secret", "catalog.token", "catalog.password"] as const;

/** The endpoints a job carrying `catalog` talks to: the catalog's (or metastore's), and a token URL's. */
export function catalogRefEndpoints(catalog: CatalogRef | undefined): string[] {
  if (!catalog) return [];
  if (catalog.type === "hive_metastore")
    return catalogEndpoints({ type: "hive_metastore", metastore_uri: catalog.uri });
  return catalogEndpoints({
    type: "polaris",
    catalog_url: catalog.uri,
    client_id: catalog.client_id ?? "",
    client_secret: "",
    ...(catalog.token_url ? { token_url: catalog.token_url } : {}),
  });
}
