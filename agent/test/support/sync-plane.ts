/**
 * The control plane's side of a catalog sync's parts, in memory, for agent suites: every part is
 * checked against the contract and the size bound, its tables kept in order, and a listing
 * answered as the plane does (`read`: what it does not hold with the same `updated_at`).
 */
import {
  type CatalogSyncPart,
  CatalogSyncPartSchema,
  type CatalogSyncResult,
  type ListedTable,
  type SyncedTable,
} from "@lakesmith/shared/catalogs";

/** A WebSocket message's limit on Workers, which a part's frame must stay under. */
const FRAME_LIMIT = 1024 * 1024;

export class SyncPlaneStub {
  readonly tables: SyncedTable[] = [];
  readonly listed: ListedTable[] = [];
  readonly parts: CatalogSyncPart[] = [];
  /** Full names the plane answered `read` for. */
  readonly read: string[] = [];

  /** `known`: what the plane holds live, full name to `updated_at`. */
  constructor(private readonly known: ReadonlyMap<string, number | null> = new Map()) {}

  readonly part = async (raw: Record<string, unknown>): Promise<Record<string, unknown> | undefined> => {
    if (JSON.stringify(raw).length >= FRAME_LIMIT) throw new Error("a part over 1 MiB");
    const part = CatalogSyncPartSchema.parse(raw);
    this.parts.push(part);
    this.tables.push(...part.tables);
    this.listed.push(...part.listed);
    if (part.listed.length === 0) return undefined;
    const read = part.listed
      .filter((l) => l.updated_at === null || this.known.get(l.full_name) !== l.updated_at)
      .map((l) => l.full_name);
    this.read.push(...read);
    return { read };
  };

  /** The listed tables the plane did not ask for, in listing order. */
  get unchanged(): string[] {
    const read = new Set(this.read);
    return this.listed.map((l) => l.full_name).filter((name) => !read.has(name));
  }

  /** The result with what the parts carried, as the suites read a sync. */
  view(result: CatalogSyncResult) {
    return { ...result, tables: this.tables, unchanged: this.unchanged };
  }
}
