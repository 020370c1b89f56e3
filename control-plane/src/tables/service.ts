/**
 * Registered tables (document 1, "Table"). Creating one queues its onboarding job in the same
 * batch; every change of `inventory_report_uri` appends to the inventory history in the same batch
 * as the change. Deleting a table deletes its schedules and cancels its jobs that have not started;
 * its inventory history and job history stay.
 *
 * Lists cost what the page costs plus a walk over the index entries they skip, bounded by
 * bookmarks (`paging.ts`, `bookmarks.ts`): the page's rows come from the (status, name) or name
 * index, their schedules from the (table_id, job_type) index, the whole page is one JSON text made
 * by SQLite from each row's stored JSON (`view.ts`), and the total comes from `table_status_counts`
 * (kept by triggers) unless the list is filtered by name, which matches at most one row.
 */

import { type Clock, newId } from "@lakesmith/shared";
import { LocationError, locationKey, tryLocationKey } from "@lakesmith/shared/locations";
import { and, asc, count, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import { isUniqueViolation } from "../db/errors.ts";
import type { Db } from "../db/index.ts";
import { inventoryHistory, type LakeTable, lakeTables, schedules } from "../db/schema.ts";
import { preparedRows, preparedSelect, type StatementCache } from "../db/statement-cache.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, invalidField, notFound } from "../http/problem.ts";
import type { JobService } from "../jobs/service.ts";
import type { OnboardingService } from "../onboarding/service.ts";
import { type Bookmark, Bookmarks } from "./bookmarks.ts";
import { generationOf, nameAt, pageRowids, type TableFilter, totalOf } from "./paging.ts";
import type { TableCreate, TableUpdate } from "./schemas.ts";
import { tableRows } from "./view.ts";

/** A prepared statement of the table list (see `TableService.statement`). */
interface ListStatement {
  all(values: Record<string, unknown>): Promise<Record<string, unknown>[]>;
}

/**
 * The statements of a table list: its total, a page (walked from either end, or read from a
 * bookmark), and the walk that finds a bookmark from either end.
 */
type ListPart = "total" | "front" | "back" | "seek" | "mark-front" | "mark-back";

export class TableService {
  private readonly statements = new Map<string, ListStatement>();
  private readonly bookmarks = new Bookmarks();
  private readonly byId;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly onboarding: OnboardingService,
    private readonly catalogRefs: CatalogTableRefs,
    private readonly statementCache?: StatementCache,
  ) {
    this.byId = preparedSelect(
      db,
      db
        .select()
        .from(lakeTables)
        .where(eq(lakeTables.id, sql.placeholder("id"))),
    );
  }

  /**
   * A page of tables by name, as the JSON text of the page's `items` (see `view.ts`), and the total
   * that matches the filters. A deep page of an unfiltered or status-filtered list starts from a
   * bookmark when one is current (`bookmarks.ts`), else from the nearer end of the list.
   */
  async page(
    filter: TableFilter,
    offset: number,
    limit: number,
  ): Promise<{ itemsJson: string; total: number; offset: number; limit: number }> {
    const values = { status: filter.status, name: filter.name, offset, limit };
    const [head] = await this.statement(filter, "total").all(values);
    const total = Number(head?.n ?? 0);
    const done = (items: unknown) => ({ itemsJson: String(items ?? "[]"), total, offset, limit });
    const list = filter.name === undefined ? (filter.status ?? "*") : undefined;
    if (list && offset < total) {
      const generation = Number(head?.generation);
      const bookmark = await this.bookmark(filter, list, generation, offset, total);
      if (bookmark) {
        const [page] = await this.statement(filter, "seek").all({
          ...values,
          from: bookmark.name,
          offset: offset - bookmark.position,
        });
        if (Number(page?.generation) === generation) return done(page?.items);
        // The list changed since the total was read: this page may be cut from a moved position.
        this.bookmarks.forget(list);
      }
    }
    const [page] = await this.statement(filter, total > 2 * offset ? "front" : "back").all(values);
    return done(page?.items);
  }

  /**
   * The bookmark a page at `offset` starts from, found by one walk from the nearer end of the
   * list when it is not known in `generation`; none for the first `BOOKMARK_STRIDE` rows, or when
   * the list changed while it was looked for.
   */
  private async bookmark(
    filter: TableFilter,
    list: string,
    generation: number,
    offset: number,
    total: number,
  ): Promise<Bookmark | undefined> {
    const position = Bookmarks.positionFor(offset);
    if (position === 0) return undefined;
    const known = this.bookmarks.get(list, generation, position);
    if (known) return known;
    const fromEnd = total - 1 - position < position;
    const skip = fromEnd ? total - 1 - position : position;
    const [row] = await this.statement(filter, fromEnd ? "mark-back" : "mark-front").all({
      status: filter.status,
      skip,
    });
    if (typeof row?.name !== "string" || Number(row.generation) !== generation) return undefined;
    const bookmark = { position, name: row.name };
    this.bookmarks.set(list, generation, bookmark);
    return bookmark;
  }

  /**
   * The list's statements for one shape of filter, built once: building the page's SQL cost as
   * much as a fifth of the request. Values come as placeholders (`status`, `name`, `offset`,
   * `limit`; `from` for a page read from a bookmark, `skip` for finding one).
   */
  private statement(filter: TableFilter, part: ListPart): ListStatement {
    const key = `${filter.status ? "status" : ""}/${filter.name !== undefined ? "name" : ""}/${part}`;
    let statement = this.statements.get(key);
    if (statement) return statement;
    const conditions = [
      filter.status ? eq(lakeTables.onboardingStatus, sql.placeholder("status")) : undefined,
      filter.name !== undefined ? eq(lakeTables.name, sql.placeholder("name")) : undefined,
    ].filter((c): c is SQL => c !== undefined);
    const where = conditions.length ? and(...conditions) : undefined;
    const total = totalOf(filter, where, sql.placeholder("status"));
    const generation = sql<number>`${generationOf(filter, sql.placeholder("status"))}`;
    const one = sql`(select 1)`;
    const cache = this.statementCache;
    if (part === "total") {
      const query = this.db.select({ n: sql<number | null>`${total}`, generation }).from(one);
      statement = preparedRows(query, ["n", "generation"], cache);
    } else if (part === "mark-front" || part === "mark-back") {
      const name = nameAt(where, sql.placeholder("skip"), part === "mark-back");
      const query = this.db.select({ name: sql<string | null>`${name}`, generation }).from(one);
      statement = preparedRows(query, ["name", "generation"], cache);
    } else {
      const offset = sql.placeholder("offset");
      const limit = sql.placeholder("limit");
      const window = part === "back" ? { total } : part === "seek" ? { from: sql.placeholder("from") } : {};
      const rows = tableRows(this.db, sql`${lakeTables}.rowid in ${pageRowids(where, offset, limit, window)}`)
        .orderBy(asc(lakeTables.name))
        .as("page");
      // Concatenated, not json_group_array(json(item)): each item is JSON text already, and
      // parsing it again cost more than building it.
      const items = sql<string>`'[' || coalesce(group_concat(${rows.item}, ','), '') || ']'`;
      // A page read from a bookmark also reads the list's generation, to check the bookmark held.
      statement =
        part === "seek"
          ? preparedRows(this.db.select({ items, generation }).from(rows), ["items", "generation"], cache)
          : preparedRows(this.db.select({ items }).from(rows), ["items"], cache);
    }
    this.statements.set(key, statement);
    return statement;
  }

  /** The table as the JSON text of its `TableSchema`, schedules embedded; 404 when it is missing. */
  async json(id: string): Promise<string> {
    const [row] = await tableRows(this.db, eq(lakeTables.id, id));
    if (!row) throw notFound("Table", id);
    return row.item;
  }

  async find(id: string): Promise<LakeTable | undefined> {
    return this.byId.get({ id });
  }

  /**
   * Registers a table and queues its onboarding; 409 when the name is taken. A table onboarded
   * through a catalog connection takes the synced table's location and format (`location`).
   */
  async create(input: TableCreate, actor: string | null): Promise<LakeTable> {
    const { uri, format, link } = await this.location(input);
    const now = this.clock.now();
    const id = newId("tbl");
    const row = {
      id,
      name: input.name,
      uri,
      locationKey: tableLocationKey(uri, link ? "catalog_table" : "uri"),
      format,
      catalogConnectionId: link?.catalog_connection_id ?? null,
      catalogFullName: link?.catalog_table ?? null,
      priority: input.priority,
      targetFileSizeMb: input.target_file_size_mb,
      parquetV2: input.parquet_v2,
      inventoryReportUri: input.inventory_report_uri ?? null,
      createdBy: actor,
      createdAt: now,
      updatedAt: now,
    };
    const job = await this.onboarding.job(row, { trigger: "table_created", createdBy: actor });
    const history = row.inventoryReportUri
      ? [this.historyInsert(row, null, row.inventoryReportUri, actor, now)]
      : [];
    let created: LakeTable[];
    try {
      [created] = await this.db.batch([
        this.db
          .insert(lakeTables)
          .values({ ...row, onboardingStatus: "pending", onboardingJobId: job.id })
          .returning(),
        job.insert,
        ...history,
      ]);
    } catch (err) {
      if (isUniqueViolation(err, "tables.name"))
        throw new ApiError(
          409,
          `A table named '${input.name}' already exists; find its id with GET /api/v1/tables?name=${encodeURIComponent(input.name)}.`,
          [{ path: "name", message: "already exists" }],
        );
      throw err;
    }
    this.jobs.notifyWork();
    return created[0] as LakeTable;
  }

  /**
   * The new table's uri and format: as given, or the linked synced table's (422 naming the field
   * when a link half is missing, the link is refused, or a given uri or format differs from it).
   */
  private async location(input: TableCreate) {
    const { catalog_connection_id: connectionId, catalog_table: fullName } = input;
    if (connectionId === undefined && fullName === undefined) {
      if (input.uri === undefined)
        throw invalidField("uri", "required (or give catalog_connection_id and catalog_table)");
      return { uri: input.uri, format: input.format ?? "delta", link: undefined };
    }
    if (connectionId === undefined)
      throw invalidField("catalog_connection_id", "required with catalog_table");
    if (fullName === undefined) throw invalidField("catalog_table", "required with catalog_connection_id");
    const link = { catalog_connection_id: connectionId, catalog_table: fullName };
    const { format, uri: location } = await this.catalogRefs.linkOf(link);
    if (input.uri !== undefined && input.uri !== location)
      throw invalidField(
        "uri",
        `differs from the location of '${fullName}' (${location}); leave uri out to take the catalog's`,
      );
    if (input.format !== undefined && input.format !== format)
      throw invalidField("format", `'${fullName}' is a ${format} table; leave format out or send ${format}`);
    return { uri: location, format, link };
  }

  /** Updates priority, target file size and the inventory report URI (recorded when it changes). */
  async update(id: string, patch: TableUpdate, actor: string | null): Promise<LakeTable> {
    const current = await this.find(id);
    if (!current) throw notFound("Table", id);
    const now = this.clock.now();
    const uriChanges =
      patch.inventory_report_uri !== undefined && patch.inventory_report_uri !== current.inventoryReportUri;
    const update = this.db
      .update(lakeTables)
      .set({
        ...(patch.priority ? { priority: patch.priority } : {}),
        ...(patch.target_file_size_mb !== undefined ? { targetFileSizeMb: patch.target_file_size_mb } : {}),
        ...(patch.parquet_v2 !== undefined ? { parquetV2: patch.parquet_v2 } : {}),
        ...(uriChanges ? { inventoryReportUri: patch.inventory_report_uri } : {}),
        updatedAt: now,
      })
      .where(eq(lakeTables.id, id))
      .returning();
    const [updated] = uriChanges
      ? (
          await this.db.batch([
            update,
            this.historyInsert(
              current,
              current.inventoryReportUri,
              patch.inventory_report_uri ?? null,
              actor,
              now,
            ),
          ])
        )[0]
      : await update;
    if (!updated) throw notFound("Table", id);
    return updated;
  }

  /**
   * Gives tables registered before location keys existed theirs (migration 0007 adds the column
   * empty: the canonical form is computed here, not in SQL). Idempotent; a start with none left
   * is one probe of a partial index that holds only rows without a key.
   */
  async fillLocationKeys(): Promise<void> {
    for (;;) {
      const rows = await this.db
        .select({ id: lakeTables.id, uri: lakeTables.uri })
        .from(lakeTables)
        .where(isNull(lakeTables.locationKey))
        .limit(500);
      if (rows.length === 0) return;
      const updates = rows.map((row) =>
        this.db
          .update(lakeTables)
          // A URI no agent could be allowed (wave 1 accepted any scheme) keeps a key nothing allows.
          .set({ locationKey: tryLocationKey(row.uri) ?? `unreadable:${row.id}/` })
          .where(eq(lakeTables.id, row.id)),
      );
      await this.db.batch(updates as [(typeof updates)[number], ...typeof updates]);
    }
  }

  /** Deletes the table and its schedules, and cancels its jobs that have not started. */
  async delete(id: string): Promise<void> {
    const [, deleted] = await this.db.batch([
      this.db.delete(schedules).where(eq(schedules.tableId, id)),
      this.db.delete(lakeTables).where(eq(lakeTables.id, id)).returning({ id: lakeTables.id }),
    ]);
    if (deleted.length === 0) throw notFound("Table", id);
    for (const status of ["queued", "offered"] as const) {
      const waiting = await this.jobs.list({ tableId: id, status }, 0, 1000);
      for (const job of waiting.items) await this.jobs.cancel(job.id);
    }
  }

  /** Inventory report URI changes, newest first; still readable after the table is deleted. */
  async inventoryHistory(
    id: string,
    offset: number,
    limit: number,
  ): Promise<Page<typeof inventoryHistory.$inferSelect>> {
    const where = eq(inventoryHistory.tableId, id);
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(inventoryHistory)
        .where(where)
        .orderBy(desc(inventoryHistory.changedAt), desc(sql`rowid`))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(inventoryHistory).where(where),
    ]);
    const n = total?.n ?? 0;
    if (n === 0 && !(await this.find(id)))
      throw new ApiError(404, `Table '${id}' does not exist and has no inventory history.`);
    return { items, total: n, offset, limit };
  }

  private historyInsert(
    table: { id: string; name: string },
    previousUri: string | null,
    uri: string | null,
    actor: string | null,
    at: Date,
  ) {
    return this.db.insert(inventoryHistory).values({
      id: newId("inv"),
      tableId: table.id,
      tableName: table.name,
      previousUri,
      inventoryReportUri: uri,
      changedBy: actor,
      changedAt: at,
    });
  }
}

/** The location key of a new table's URI; a URI that can't be read with certainty is a 422 on `field`. */
function tableLocationKey(uri: string, field: string): string {
  try {
    return locationKey(uri);
  } catch (err) {
    if (err instanceof LocationError) throw invalidField(field, `'${uri}' ${err.message}`);
    throw err;
  }
}
