/**
 * The order of a connection's synced-table list, kept in memory: for one (connection, what its
 * last sync left, filter, sort) the full names of every matching table, in list order. A page is
 * then a slice of it and the total its length, so any offset costs the same as the first page
 * (offset paging over an index walks every skipped entry, and an exact count reads every
 * matching one: at 100,000 tables each was most of a request).
 *
 * - Validity: a key names the connection's latest sync and its end (`versionOf`). Only syncs
 *   write synced tables, and each sync moves them, so a key is never read again once stale; while
 *   a sync runs (its parts land as they come) there is no version and the list reads SQL.
 * - Bounds: at most `maxNames` names across every cached order (least recently used go first);
 *   an order longer than that is never cached. Orders asked for at once are built once.
 */
import type { CatalogConnection } from "../db/schema.ts";

/** What makes a connection's synced tables what they are, or undefined while a sync writes them. */
export function versionOf(
  connection: Pick<CatalogConnection, "syncStatus" | "lastSyncJobId" | "lastSyncedAt">,
): string | undefined {
  if (connection.syncStatus === "running") return undefined;
  return `${connection.lastSyncJobId ?? "-"}|${connection.syncStatus}|${connection.lastSyncedAt?.getTime() ?? "-"}`;
}

/** About 50 bytes a name: some 25 MB at the default. */
const MAX_NAMES = 500_000;

export class ListOrders {
  private readonly orders = new Map<string, Promise<readonly string[]>>();
  private readonly sizes = new Map<string, number>();
  private held = 0;

  constructor(private readonly maxNames = MAX_NAMES) {}

  /** The order under `key`, built by `build` unless cached. */
  async get(key: string, build: () => Promise<readonly string[]>): Promise<readonly string[]> {
    const cached = this.orders.get(key);
    if (cached) {
      // Most recently used last.
      this.orders.delete(key);
      this.orders.set(key, cached);
      return cached;
    }
    const building = build();
    this.orders.set(key, building);
    try {
      const names = await building;
      if (this.orders.get(key) === building) this.keep(key, names.length);
      return names;
    } catch (err) {
      if (this.orders.get(key) === building) this.orders.delete(key);
      throw err;
    }
  }

  private keep(key: string, size: number): void {
    if (size > this.maxNames) {
      this.orders.delete(key);
      return;
    }
    this.sizes.set(key, size);
    this.held += size;
    for (const oldest of this.orders.keys()) {
      if (this.held <= this.maxNames) break;
      if (oldest === key || !this.sizes.has(oldest)) continue;
      this.held -= this.sizes.get(oldest) ?? 0;
      this.sizes.delete(oldest);
      this.orders.delete(oldest);
    }
  }
}
