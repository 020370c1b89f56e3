/**
 * What every catalog client gives the sync: its catalogs, and a walk over its tables that hands
 * each one over as soon as its facts are read (format, type, location, size, partitioning), so a
 * catalog of any size is synced in bounded memory.
 *
 * - A walk reports every catalog and schema it enters (`onCatalog`, `onSchema`) and every table it
 *   finds, once.
 * - With `changedAmong` (incremental mode), a client that lists tables with their `updated_at`
 *   asks it about each page of its listing and reads only the tables it names; the others are
 *   reported `unchanged`, their facts beyond the listing not read (for Unity: no Delta log read).
 *   A client whose listing has no `updated_at` (Iceberg REST) reads every table.
 * - A table that vanishes between listing and loading is left out, as if it had been dropped.
 */
import type { ListedTable, SyncedTable } from "@lakesmith/shared/catalogs";

export type WalkedTable =
  | { changed: true; table: SyncedTable }
  | { changed: false; full_name: string; updated_at: number | null };

export interface WalkOptions {
  /** Only this catalog; absent: every catalog. */
  catalog?: string;
  /** Incremental mode: which of these listed tables to read (the others are unchanged). */
  changedAmong?(listed: readonly ListedTable[]): Promise<ReadonlySet<string>>;
  onCatalog?(catalog: string): void;
  onSchema?(schema: { catalog: string; name: string }): void;
  /** Checked between requests: the walk stops with the signal's reason. */
  signal?: AbortSignal;
}

export interface CatalogClient {
  /** The catalog names the connection sees; throws `RestCatalogError` when refused or unreachable. */
  listCatalogs(): Promise<string[]>;
  /** Walks the tables, calling `onTable` for each; resolves when the walk is complete. */
  walkTables(options: WalkOptions, onTable: (table: WalkedTable) => void | Promise<void>): Promise<void>;
}

/** What a size read found: bytes and where they came from, or why there are none. */
export type TableSize =
  | { size_bytes: number; source: string; facts: Record<string, unknown> }
  | { size_bytes: null; note: string };

/** Reads a table's size from its own metadata at `location` (`delta` or `iceberg`). */
export type SizeOf = (location: string, format: string) => Promise<TableSize>;
