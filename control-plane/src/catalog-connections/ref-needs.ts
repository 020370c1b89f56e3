/**
 * What a job that carries a catalog reference (`catalog` in a table job's payload, built by
 * `table-ref.ts`) declares: its secret fields, and the endpoints its agent must be allowed.
 * Kept apart from the builder so that job kind declarations import no service.
 */
import { catalogEndpoints } from "@lakesmith/shared/catalogs";
import type { IcebergRestCatalogRef } from "@lakesmith/shared/jobs";

/** The payload fields of a catalog reference that hold credentials. */
export const CATALOG_REF_SECRETS = ["catalog.client_secret", "catalog.token"] as const;

/** The endpoints a job carrying `catalog` talks to: the catalog's, and its token URL's. */
export function catalogRefEndpoints(catalog: IcebergRestCatalogRef | undefined): string[] {
  if (!catalog) return [];
  return catalogEndpoints({
    type: "polaris",
    catalog_url: catalog.uri,
    client_id: catalog.client_id ?? "",
    client_secret: "",
    ...(catalog.token_url ? { token_url: catalog.token_url } : {}),
  });
}
