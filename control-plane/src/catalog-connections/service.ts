/**
 * Catalog connections (document 1, "Catalog connections"): create, read, list, update, delete.
 * The jobs that test one or sync its tables are `jobs.ts`, the scheduler's step `scheduled.ts`.
 *
 * - Credentials are stored as `credentials.ts` says: the secret fields encrypted under the
 *   connection's id, the others plain. Only a job's payload holds them decrypted, until it ends.
 * - A connection's type never changes; an update merges what it sends into what is stored and
 *   checks the result as a whole, so a connection is always valid for its type.
 * - Deleting one deletes its synced tables in the same batch, flags the tables onboarded through it
 *   as a dropped catalog table flags them (their schedules stopped, nothing deleted), then cancels
 *   its active syncs.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { CATALOG_SYNC_KIND, type CatalogCredentials, type CatalogType } from "@lakesmith/shared/catalogs";
import { and, asc, count, eq, getTableColumns, inArray, isNull, type SQL, sql } from "drizzle-orm";
import { isUniqueViolation } from "../db/errors.ts";
import type { Db } from "../db/index.ts";
import {
  type CatalogConnection,
  catalogConnections,
  catalogTables,
  jobs,
  lakeTables,
  schedules,
} from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/problem.ts";
import type { CancelService } from "../jobs/cancel.ts";
import { ACTIVE_STATUSES } from "../jobs/state.ts";
import type { Keyring } from "../secrets/keyring.ts";
import {
  CREDENTIAL_FIELDS,
  type CredentialFields,
  credentialsFrom,
  openSecrets,
  sealSecrets,
  splitCredentials,
} from "./credentials.ts";
import type { ConnectionCreate, ConnectionUpdate } from "./schemas.ts";
import type { ConnectionRow } from "./view.ts";

/** Tries of an update whose credentials another update changed meanwhile. */
const UPDATE_ATTEMPTS = 5;

export class CatalogConnectionService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keyring: Keyring,
    private readonly cancel: CancelService,
  ) {}

  /** Creates a connection; 409 when the name is taken, 422 naming a wrong credential field. */
  async create(body: ConnectionCreate, actor: string | null): Promise<ConnectionRow> {
    const credentials = credentialsFrom(body.type, credentialFieldsOf(body));
    const { settings, secrets } = splitCredentials(credentials);
    const id = newId("con");
    const now = this.clock.now();
    await this.write(
      this.db.insert(catalogConnections).values({
        id,
        name: body.name,
        type: body.type,
        settings,
        secrets: await sealSecrets(this.keyring, id, secrets),
        secretFields: Object.keys(secrets),
        isActive: body.is_active,
        syncIntervalHours: body.sync_interval_hours,
        createdBy: actor,
        createdAt: now,
        updatedAt: now,
      }),
      body.name,
    );
    return this.get(id);
  }

  /** The connection row, or undefined. */
  async find(id: string): Promise<CatalogConnection | undefined> {
    const [row] = await this.db.select().from(catalogConnections).where(eq(catalogConnections.id, id));
    return row;
  }

  /** The connection with its count of live tables; 404 when it does not exist. */
  async get(id: string): Promise<ConnectionRow> {
    const [row] = await this.rows(eq(catalogConnections.id, id));
    if (!row) throw notFound("Catalog connection", id);
    return row;
  }

  /** Connections by name. */
  async list(isActive: boolean | undefined, offset: number, limit: number): Promise<Page<ConnectionRow>> {
    const where = isActive === undefined ? undefined : eq(catalogConnections.isActive, isActive);
    const [items, [total]] = await Promise.all([
      this.rows(where).orderBy(asc(catalogConnections.name)).limit(limit).offset(offset),
      this.db.select({ n: count() }).from(catalogConnections).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /**
   * Partial update: fields left out keep their value, null clears an optional credential field.
   * The merged credentials must be valid for the connection's type, which never changes (422).
   */
  /**
   * Merges `patch` into the connection. Credentials are merged with what is stored and written
   * back only if the stored secrets are still the ones read (each write seals them anew), so two
   * concurrent updates of different credential fields both land: the loser merges again.
   */
  async update(id: string, patch: ConnectionUpdate): Promise<ConnectionRow> {
    for (let attempt = 1; ; attempt++) {
      if (await this.tryUpdate(id, patch)) return this.get(id);
      if (attempt >= UPDATE_ATTEMPTS)
        throw conflict(
          `Catalog connection '${id}' kept changing while it was updated; send the update again.`,
        );
    }
  }

  /** One attempt of `update`: false when the credentials changed since they were read. */
  private async tryUpdate(id: string, patch: ConnectionUpdate): Promise<boolean> {
    const row = await this.find(id);
    if (!row) throw notFound("Catalog connection", id);
    if (patch.type !== undefined && patch.type !== row.type)
      throw invalidField(
        "type",
        `a connection's type never changes (this one is ${row.type}); create a new connection for a ${patch.type} catalog`,
      );
    const sent = patch as CredentialFields;
    const touched = CREDENTIAL_FIELDS.filter((f) => sent[f] !== undefined);
    let credentialColumns = {};
    if (touched.length > 0) {
      const merged: CredentialFields = { ...row.settings, ...(await openSecrets(this.keyring, row)) };
      for (const field of touched) merged[field] = sent[field] ?? null;
      const { settings, secrets } = splitCredentials(credentialsFrom(row.type as CatalogType, merged));
      credentialColumns = {
        settings,
        secrets: await sealSecrets(this.keyring, id, secrets),
        secretFields: Object.keys(secrets),
      };
    }
    const updated = await this.write(
      this.db
        .update(catalogConnections)
        .set({
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.is_active !== undefined ? { isActive: patch.is_active } : {}),
          ...(patch.sync_interval_hours !== undefined
            ? { syncIntervalHours: patch.sync_interval_hours }
            : {}),
          ...credentialColumns,
          updatedAt: this.clock.now(),
        })
        .where(
          and(
            eq(catalogConnections.id, id),
            touched.length > 0 ? eq(catalogConnections.secrets, row.secrets) : undefined,
          ),
        )
        .returning({ id: catalogConnections.id }),
      patch.name ?? row.name,
    );
    return updated.length > 0;
  }

  /**
   * Deletes the connection and every table synced from it in one batch, then cancels its active
   * syncs (whose ends then write nothing: `record.ts` checks the connection still exists).
   */
  async delete(id: string): Promise<void> {
    const now = this.clock.now();
    // Tables onboarded through the connection stay (nothing is deleted), flagged as for a dropped
    // catalog table, their schedules stopped: no job can load them any more.
    const linked = and(eq(lakeTables.catalogConnectionId, id), isNull(lakeTables.catalogTableDeletedAt));
    const linkedIds = this.db.select({ id: lakeTables.id }).from(lakeTables).where(linked);
    const [, , , deleted] = await this.db.batch([
      this.db
        .update(schedules)
        .set({ enabled: false, updatedAt: now })
        .where(and(inArray(schedules.tableId, linkedIds), eq(schedules.enabled, true))),
      this.db.update(lakeTables).set({ catalogTableDeletedAt: now }).where(linked),
      this.db.delete(catalogTables).where(eq(catalogTables.connectionId, id)),
      this.db
        .delete(catalogConnections)
        .where(eq(catalogConnections.id, id))
        .returning({ id: catalogConnections.id }),
    ]);
    if (deleted.length === 0) throw notFound("Catalog connection", id);
    const active = await this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(
          eq(jobs.kind, CATALOG_SYNC_KIND),
          inArray(jobs.status, ACTIVE_STATUSES),
          sql`json_extract(${jobs.payload}, '$.connection_id') = ${id}`,
        ),
      );
    for (const job of active)
      await cancelQuietly(this.cancel, job.id, `catalog connection '${id}' was deleted`);
  }

  /** The connection's credentials, decrypted: for a job's payload only. */
  async credentialsOf(row: CatalogConnection): Promise<CatalogCredentials> {
    return credentialsFrom(row.type as CatalogType, {
      ...row.settings,
      ...(await openSecrets(this.keyring, row)),
    });
  }

  private rows(where: SQL | undefined) {
    const tablesCount = sql<number>`(select count(*) from ${catalogTables} t
      where t.connection_id = ${catalogConnections.id} and t.deleted_at is null)`.mapWith(Number);
    return this.db
      .select({ ...getTableColumns(catalogConnections), tablesCount })
      .from(catalogConnections)
      .where(where)
      .$dynamic();
  }

  /** Writes a connection; a taken name is a 409 naming it. */
  private async write<T>(statement: Promise<T>, name: string): Promise<T> {
    try {
      return await statement;
    } catch (err) {
      if (isUniqueViolation(err, "catalog_connections.name"))
        throw new ApiError(409, `A catalog connection named '${name}' already exists.`, [
          { path: "name", message: "already exists" },
        ]);
      throw err;
    }
  }
}

/** The credential fields of a request body. */
export function credentialFieldsOf(body: object): CredentialFields {
  return Object.fromEntries(
    CREDENTIAL_FIELDS.filter((f) => f in body).map((f) => [f, (body as CredentialFields)[f]]),
  );
}

/** Cancels a job; false when it had ended (or gone) meanwhile. */
export async function cancelQuietly(
  cancel: CancelService,
  jobId: string,
  reason: string,
  options: { recordReason?: boolean } = {},
): Promise<boolean> {
  try {
    await cancel.cancel(jobId, reason, options);
    return true;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 409 || err.status === 404)) return false;
    throw err;
  }
}
