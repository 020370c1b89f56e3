/**
 * A catalog sync: walk a connection's tables and answer `CatalogSyncResult`.
 *
 * - Full mode: every table whose size is at least `min_size_bytes`; a table of unknown (null) size
 *   is kept, since a threshold never drops what it can't measure. The others are only counted.
 * - Incremental mode: tables whose `updated_at` differs from `known` (and new ones) are read and
 *   filtered as in full mode; unchanged ones are named in `unchanged`, whatever their size; a table
 *   the catalog no longer lists is simply absent.
 * - Schemas are reported as the walk enters them; progress once per schema.
 */
import type { CatalogSyncPayload, CatalogSyncResult, SyncedTable } from "@lakesmith/shared/catalogs";
import type { CatalogClient } from "./types.ts";

export interface SyncOptions {
  signal?: AbortSignal;
  progress?(progress: Record<string, unknown>): void;
}

export async function syncCatalog(
  client: CatalogClient,
  payload: Pick<CatalogSyncPayload, "catalog" | "mode" | "min_size_bytes" | "known">,
  options: SyncOptions = {},
): Promise<CatalogSyncResult> {
  const started = Date.now();
  const known =
    payload.mode === "incremental"
      ? new Map((payload.known ?? []).map((k) => [k.full_name, k.updated_at] as const))
      : undefined;
  const catalogs = new Set<string>();
  const schemas: CatalogSyncResult["schemas"] = [];
  const tables: SyncedTable[] = [];
  const unchanged: string[] = [];
  let belowMinSize = 0;
  await client.walkTables(
    {
      ...(payload.catalog === undefined ? {} : { catalog: payload.catalog }),
      ...(known ? { known } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onCatalog: (catalog) => {
        catalogs.add(catalog);
      },
      onSchema: (schema) => {
        schemas.push(schema);
        options.progress?.({ schemas: schemas.length, tables: tables.length + unchanged.length });
      },
    },
    (walked) => {
      if (!walked.changed) unchanged.push(walked.full_name);
      else if (walked.table.size_bytes !== null && walked.table.size_bytes < payload.min_size_bytes)
        belowMinSize++;
      else tables.push(walked.table);
    },
  );
  return {
    mode: payload.mode,
    catalogs: [...catalogs],
    schemas,
    tables,
    unchanged,
    below_min_size: belowMinSize,
    duration_ms: Date.now() - started,
  };
}
