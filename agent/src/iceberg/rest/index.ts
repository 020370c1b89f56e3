/**
 * The agent's Iceberg REST catalog client (Polaris, Nessie, Gravitino, Unity's Iceberg endpoint...):
 * read the catalog's config, list namespaces and tables, load a table's metadata and commit to it
 * with requirements, so the catalog, not a file rename, decides which writer wins.
 *
 * @example
 * const catalog = new RestCatalogClient({
 *   uri: "https://polaris.example.com/api/catalog",
 *   warehouse: "lake",
 *   auth: { clientId, clientSecret },
 * });
 * const { metadata } = await catalog.loadTable(["sales"], "orders");
 * const result = await catalog.commitTable(["sales"], "orders", {
 *   requirements: [{ type: "assert-ref-snapshot-id", ref: "main", "snapshot-id": metadata.currentSnapshotId }],
 *   updates: [{ action: "add-snapshot", snapshot }, { action: "set-snapshot-ref", "ref-name": "main", type: "branch", "snapshot-id": snapshot["snapshot-id"] }],
 * });
 * // result.ok, or { kind: "conflict" } (reload, retry) or { kind: "unknown" } (reload, look for the snapshot)
 */
export type { ClientCredentialsAuth, RestCatalogAuth, TokenAuth } from "./auth.ts";
export {
  type CatalogConfig,
  type LoadedTable,
  RestCatalogClient,
  type RestCatalogClientOptions,
  type TableIdentifier,
} from "./client.ts";
export type { CommitResult, SnapshotJson, TableCommit, TableRequirement, TableUpdate } from "./commit.ts";
export { RestCatalogError, type RestCatalogErrorReason } from "./errors.ts";
export { type CatalogCommitOutcome, type CatalogTableRef, commitReplaceThroughCatalog } from "./replace.ts";
