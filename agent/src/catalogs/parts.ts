/**
 * The parts a catalog sync sends while it walks (`CatalogSyncPart`): tables read, and listings
 * the plane compares with what it has. One part is in flight at a time (the protocol's rule),
 * while the walk fills the next; so at most about two parts of tables are held, whatever the
 * catalog's size.
 *
 * - `table` buffers a table; once a part's worth is buffered it is sent, and the caller waits only
 *   when another full part is still waiting behind the one in flight (backpressure on the walk).
 * - `changedAmong` asks which listed tables to read. Listings that arrive while a part is in
 *   flight go out together in the next part, so concurrent schema walks share round trips.
 * - `finish` sends what is left and resolves once every part is answered. The first failure
 *   (the job stopped, the plane refused) fails every later call.
 */
import {
  type CatalogSyncPart,
  CatalogSyncPartReplySchema,
  type ListedTable,
  SYNC_PART_BYTES,
  SYNC_PART_LISTED,
  SYNC_PART_TABLES,
  type SyncedTable,
} from "@lakesmith/shared/catalogs";

/** Sends one part and resolves with the plane's reply (`JobContext.part`). */
export type SendPart = (part: CatalogSyncPart) => Promise<Record<string, unknown> | undefined>;

interface Listing {
  listed: readonly ListedTable[];
  resolve(read: ReadonlySet<string>): void;
  reject(error: unknown): void;
}

export class SyncParts {
  private tables: { table: SyncedTable; bytes: number }[] = [];
  private bytes = 0;
  private listings: Listing[] = [];
  private pumping: Promise<void> | undefined;
  private finishing = false;
  private failure: { error: unknown } | undefined;
  private drained: (() => void)[] = [];
  /** Tables sent so far. */
  sent = 0;

  constructor(private readonly send: SendPart) {}

  /** Buffers a table to send; waits while two parts' worth are waiting. */
  async table(table: SyncedTable): Promise<void> {
    this.check();
    const bytes = JSON.stringify(table).length;
    this.tables.push({ table, bytes });
    this.bytes += bytes;
    if (!this.full()) return;
    this.pump();
    while (this.bytes >= 2 * SYNC_PART_BYTES || this.tables.length >= 2 * SYNC_PART_TABLES) {
      await new Promise<void>((resolve) => this.drained.push(resolve));
      this.check();
    }
  }

  /** The listed tables the plane wants read (see the header). */
  changedAmong(listed: readonly ListedTable[]): Promise<ReadonlySet<string>> {
    this.check();
    if (listed.length === 0) return Promise.resolve(new Set());
    const answer = new Promise<ReadonlySet<string>>((resolve, reject) =>
      this.listings.push({ listed, resolve, reject }),
    );
    this.pump();
    return answer;
  }

  /** Sends what is left; resolves once every part is answered. */
  async finish(): Promise<void> {
    this.finishing = true;
    this.pump();
    while (this.pumping) await this.pumping;
    this.check();
  }

  private full(): boolean {
    return this.bytes >= SYNC_PART_BYTES || this.tables.length >= SYNC_PART_TABLES;
  }

  private check(): void {
    if (this.failure) throw this.failure.error;
  }

  private pump(): void {
    if (this.pumping || this.failure) return;
    this.pumping = this.run().finally(() => {
      this.pumping = undefined;
    });
  }

  private async run(): Promise<void> {
    let listings: Listing[] = [];
    try {
      for (;;) {
        const sendTables = this.full() || (this.finishing && this.tables.length > 0);
        if (!sendTables && this.listings.length === 0) return;
        const tables = this.takeTables();
        listings = this.takeListings();
        const listed = listings.flatMap((l) => l.listed);
        const reply = await this.send({ tables, listed });
        this.sent += tables.length;
        for (const resolve of this.drained.splice(0)) resolve();
        if (listings.length === 0) continue;
        const parsed = CatalogSyncPartReplySchema.safeParse(reply);
        if (!parsed.success)
          throw new Error("the control plane's answer to a listing names no tables to read");
        const read = new Set(parsed.data.read);
        for (const listing of listings) listing.resolve(read);
        listings = [];
      }
    } catch (error) {
      this.failure ??= { error };
      for (const listing of [...listings, ...this.listings.splice(0)]) listing.reject(error);
      for (const resolve of this.drained.splice(0)) resolve();
    }
  }

  /** Up to a part's worth of the buffered tables, oldest first. */
  private takeTables(): SyncedTable[] {
    let bytes = 0;
    let n = 0;
    while (n < this.tables.length && n < SYNC_PART_TABLES) {
      const next = this.tables[n]?.bytes ?? 0;
      if (n > 0 && bytes + next > SYNC_PART_BYTES) break;
      bytes += next;
      n++;
    }
    this.bytes -= bytes;
    return this.tables.splice(0, n).map((t) => t.table);
  }

  /** Whole listings up to a part's worth (a listing is a page, never longer than a part). */
  private takeListings(): Listing[] {
    let entries = 0;
    let n = 0;
    while (n < this.listings.length) {
      const next = this.listings[n]?.listed.length ?? 0;
      if (n > 0 && entries + next > SYNC_PART_LISTED) break;
      entries += next;
      n++;
    }
    return this.listings.splice(0, n);
  }
}
