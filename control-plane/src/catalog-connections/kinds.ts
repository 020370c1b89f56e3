/**
 * The job kinds of catalog connections (`@lakesmith/shared/catalogs`): `catalog_test` lists the
 * catalogs a connection sees, `catalog_sync` walks its tables. Both are routed by endpoint: only an
 * agent whose `--allow-endpoints` covers the connection's endpoints may take them (`credentials.ts`,
 * `endpointsOf`), and neither touches a storage location. Both carry the connection's credentials,
 * declared `secrets`: no job view shows them, and the job's end removes them from its row.
 *
 * A connection's syncs never overlap (scope `connection:<id>/`); a sync's tables come in parts
 * while it runs, and its end writes the deletions and the connection's sync status in the same
 * batch (`record.ts`).
 */
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  CatalogSyncPayloadSchema,
  CatalogTestPayloadSchema,
} from "@lakesmith/shared/catalogs";
import { connectionScope, defineJobKind } from "../jobs/kinds.ts";
import { ALL_SECRET_FIELDS, endpointsOf } from "./credentials.ts";
import { recordSync, recordSyncPart } from "./record.ts";

/** Every secret field of every type, under the payload's `connection`: a field a type lacks is simply not there. */
const CONNECTION_SECRETS = ALL_SECRET_FIELDS.map((field) => `connection.${field}`);

export const catalogTestKind = defineJobKind({
  kind: CATALOG_TEST_KIND,
  label: "catalog connection test",
  payload: CatalogTestPayloadSchema,
  needs: (payload) => ({ locations: [], endpoints: endpointsOf(payload.connection) }),
  secrets: CONNECTION_SECRETS,
  // A user waits for the answer: one more try after a lost agent, not three.
  retry: { maxAttempts: 2 },
});

export const catalogSyncKind = defineJobKind({
  kind: CATALOG_SYNC_KIND,
  label: "catalog sync",
  payload: CatalogSyncPayloadSchema,
  needs: (payload) => ({ locations: [], endpoints: endpointsOf(payload.connection) }),
  exclusive: {
    group: CATALOG_SYNC_KIND,
    grain: "connection",
    scopes: (payload) => [connectionScope(payload.connection_id)],
  },
  part: recordSyncPart,
  finish: recordSync,
  secrets: CONNECTION_SECRETS,
  retry: { maxAttempts: 3 },
});
