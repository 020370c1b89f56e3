/**
 * A catalog sync: walk a connection's tables and send them to the control plane in parts
 * (`parts.ts`) as the walk goes, answering only counts (`CatalogSyncResult`) at the end; so a
 * catalog of any size is synced in bounded memory on both sides.
 *
 * - Full mode: every table whose size is at least `min_size_bytes`; a table of unknown (null) size
 *   is kept, since a threshold never drops what it can't measure. The others are only counted.
 * - Incremental mode: the walk sends each page of its listing with the tables' `updated_at`; the
 *   plane confirms those it has as they are and names the others, which alone are read and
 *   filtered as in full mode. A table the catalog no longer lists is simply never seen.
 * - Progress once per schema the walk enters.
 */
import type { CatalogSyncPayload, CatalogSyncResult } from "@lakesmith/shared/catalogs";
import { type SendPart, SyncParts } from "./parts.ts";
import type { CatalogClient } from "./types.ts";

export interface SyncOptions {
  signal?: AbortSignal;
  progress?(progress: Record<string, unknown>): void;
  /** Sends a part to the control plane and resolves with its reply. */
  part: SendPart;
}

export async function syncCatalog(
  client: CatalogClient,
  payload: Pick<CatalogSyncPayload, "catalog" | "mode" | "min_size_bytes">,
  options: SyncOptions,
): Promise<CatalogSyncResult> {
  const started = Date.now();
  const parts = new SyncParts(options.part);
  const catalogs = new Set<string>();
  let schemas = 0;
  let unchanged = 0;
  let belowMinSize = 0;
  await client.walkTables(
    {
      ...(payload.catalog === undefined ? {} : { catalog: payload.catalog }),
      ...(payload.mode === "incremental" ? { changedAmong: (listed) => parts.changedAmong(listed) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onCatalog: (catalog) => {
        catalogs.add(catalog);
      },
      onSchema: () => {
        schemas++;
        options.progress?.({ schemas, tables: parts.sent, unchanged });
      },
    },
    async (walked) => {
      if (!walked.changed) unchanged++;
      else if (walked.table.size_bytes !== null && walked.table.size_bytes < payload.min_size_bytes)
        belowMinSize++;
      else await parts.table(walked.table);
    },
  );
  await parts.finish();
  return {
    mode: payload.mode,
    catalogs: [...catalogs],
    schemas_count: schemas,
    tables_count: parts.sent,
    unchanged_count: unchanged,
    below_min_size: belowMinSize,
    duration_ms: Date.now() - started,
  };
}
