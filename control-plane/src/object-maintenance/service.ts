/**
 * Object maintenance (document 1): locations, their managed prefixes, and each prefix's policy
 * versions.
 *
 * - A location's URI is stored canonically (`shared/locations`), without a trailing `/`. Methods
 *   and formats the spec announces but that are not built answer 422 naming the field ("not yet
 *   supported"): direct listing, ORC and CSV inventories, Parquet input.
 * - use_as_registered: no discovery; the location is Active at once, with its URI as its one
 *   managed prefix (unmanaged until enabled or given a policy), in the same batch. A prefix with
 *   that URI kept from a deleted location is taken back; one of a live location is a 409.
 * - inventory_report: Pending until its first discovery (`discovery/`), which is queued at once
 *   with `run_discovery_immediately`. Only S3 Inventory reports are read: a location on Google
 *   Cloud Storage or Azure (whose inventories are laid out otherwise) is a 422 naming the method.
 * - Archive (PATCH status Archived) pauses the location's active prefixes (`state_reason` says
 *   why); un-archiving (PATCH status Active) restores the location's status and resumes them.
 *   Deleting a location keeps its prefixes, with `location_id` null. Archiving or deleting a
 *   location cancels its active discovery (and deleting drops its attempts).
 * - Prefix states: enable moves unmanaged, paused (location not archived) and error to active
 *   (201; 200 when active already); a prefix whose source is missing, or whose location is
 *   archived, is a 422. A policy PUT appends version N+1 and deactivates N in one batch, and
 *   activates an unmanaged prefix; the version is computed inside the batch, so two PUTs at once
 *   are serialised, never both version N+1.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { formatLocation, LocationError, parseLocation } from "@lakesmith/shared/locations";
import { and, asc, count, desc, eq, isNull, sql } from "drizzle-orm";
import { isUniqueViolation } from "../db/errors.ts";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import {
  type Location,
  locations,
  type Prefix,
  type PrefixPolicy,
  prefixes,
  prefixPolicies,
} from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/problem.ts";
import { nextSlot } from "./conversion/slots.ts";
import type { DiscoveryService } from "./discovery/service.ts";
import { LOCATION_SCHEMES, type LocationCreate, type LocationUpdate, type PolicyUpsert } from "./schemas.ts";

const ARCHIVED_REASON = "its location is archived";

export interface PrefixFilter {
  locationId?: string | undefined;
  managementState?: Prefix["managementState"] | undefined;
  sourceState?: Prefix["sourceState"] | undefined;
}

export class ObjectMaintenanceService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly discovery: DiscoveryService,
  ) {}

  // -------------------------------------------------------------------------------------------
  // locations

  async createLocation(
    body: LocationCreate,
    actor: string | null,
  ): Promise<Location & { prefixCount: number }> {
    const uri = canonicalUri(body.uri, "uri");
    if (body.discovery_method === "direct_listing")
      throw invalidField(
        "discovery_method",
        "direct_listing is not yet supported; use inventory_report or use_as_registered",
      );
    if (body.input_format === "parquet")
      throw invalidField("input_format", "parquet input is not yet supported; json is");
    const inventory = body.discovery_method === "inventory_report";
    if (inventory && body.inventory_uri === undefined)
      throw invalidField("inventory_uri", "required with discovery_method inventory_report");
    if (!inventory && body.inventory_uri !== undefined)
      throw invalidField("inventory_uri", "only with discovery_method inventory_report");
    if (inventory && (uri.startsWith("gs://") || uri.startsWith("azure://")))
      throw invalidField(
        "discovery_method",
        "inventory_report reads S3 Inventory reports; Google Cloud Storage and Azure inventories are not yet supported (use use_as_registered)",
      );
    if (body.inventory_format === "orc" || body.inventory_format === "csv")
      throw invalidField(
        "inventory_format",
        `${body.inventory_format} inventories are not yet supported; parquet is`,
      );
    const now = this.clock.now();
    const location: Location = {
      id: newId("loc"),
      name: body.name,
      description: body.description ?? null,
      uri,
      discoveryMethod: body.discovery_method,
      inventoryUri: inventory ? canonicalUri(body.inventory_uri as string, "inventory_uri") : null,
      inventoryFormat: inventory ? "parquet" : null,
      discoveryCadence: body.discovery_cadence ?? "daily",
      skipAgeDays: body.skip_age_days ?? 2,
      runDiscoveryImmediately: inventory ? (body.run_discovery_immediately ?? true) : false,
      inputFormat: "json",
      status: inventory ? "Pending" : "Active",
      statusBeforeArchive: null,
      lastDiscoveredAt: null,
      createdBy: actor,
      createdAt: now,
      updatedAt: now,
    };
    if (!inventory) {
      const [taken] = await this.db
        .select({ locationId: prefixes.locationId })
        .from(prefixes)
        .where(eq(prefixes.uri, uri));
      if (taken?.locationId)
        throw conflict(
          `${uri} is a prefix of location '${taken.locationId}' already; a prefix belongs to one location`,
        );
    }
    const insert = this.db.insert(locations).values(location);
    try {
      if (inventory) {
        await insert;
        if (location.runDiscoveryImmediately)
          await this.discovery.queue(location, { trigger: "creation", actor });
      } else
        await this.db.batch([
          insert,
          this.db
            .insert(prefixes)
            .values({
              id: newId("pfx"),
              locationId: location.id,
              uri,
              managementState: "unmanaged",
              sourceState: "present",
              discoveredAt: now,
              createdAt: now,
              updatedAt: now,
            })
            // A prefix kept from a deleted location is taken back as it was.
            .onConflictDoUpdate({
              target: prefixes.uri,
              set: { locationId: location.id, sourceState: "present", missingSince: null, updatedAt: now },
              setWhere: isNull(prefixes.locationId),
            }),
        ]);
    } catch (err) {
      if (isUniqueViolation(err, "locations.name")) throw conflict(`A location named '${body.name}' exists.`);
      throw err;
    }
    return this.location(location.id);
  }

  async listLocations(
    status: Location["status"] | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Location & { prefixCount: number }>> {
    const where = status ? eq(locations.status, status) : undefined;
    const [rows, [total]] = await Promise.all([
      this.db
        .select({ location: locations, prefixCount: this.prefixCount() })
        .from(locations)
        .where(where)
        .orderBy(asc(locations.name))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(locations).where(where),
    ]);
    return {
      items: rows.map((r) => ({ ...r.location, prefixCount: r.prefixCount })),
      total: total?.n ?? 0,
      offset,
      limit,
    };
  }

  async location(id: string): Promise<Location & { prefixCount: number }> {
    const [row] = await this.db
      .select({ location: locations, prefixCount: this.prefixCount() })
      .from(locations)
      .where(eq(locations.id, id));
    if (!row) throw notFound("Location", id);
    return { ...row.location, prefixCount: row.prefixCount };
  }

  async updateLocation(id: string, patch: LocationUpdate): Promise<Location & { prefixCount: number }> {
    const current = await this.location(id);
    const now = this.clock.now();
    const set: Partial<Location> = { updatedAt: now };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.discovery_cadence !== undefined) set.discoveryCadence = patch.discovery_cadence;
    if (patch.skip_age_days !== undefined) set.skipAgeDays = patch.skip_age_days;
    const prefixUpdates = [];
    if (patch.status !== undefined && patch.status !== current.status) {
      if (patch.status === "Archived") {
        set.status = "Archived";
        // Archiving cancels a running discovery: un-archiving restores what the location was without it.
        set.statusBeforeArchive =
          current.status === "Discovering"
            ? current.lastDiscoveredAt
              ? "Active"
              : "Pending"
            : current.status;
        prefixUpdates.push(
          this.db
            .update(prefixes)
            .set({ managementState: "paused", stateReason: ARCHIVED_REASON, updatedAt: now })
            .where(and(eq(prefixes.locationId, id), eq(prefixes.managementState, "active"))),
        );
      } else if (patch.status === "Active" && current.status === "Archived") {
        set.status = current.statusBeforeArchive ?? "Active";
        set.statusBeforeArchive = null;
        prefixUpdates.push(
          this.db
            .update(prefixes)
            .set({ managementState: "active", stateReason: null, updatedAt: now })
            .where(
              and(
                eq(prefixes.locationId, id),
                eq(prefixes.managementState, "paused"),
                eq(prefixes.stateReason, ARCHIVED_REASON),
              ),
            ),
        );
      } else
        throw invalidField(
          "status",
          `${current.status} can't become ${patch.status} by request: a location is archived (Archived) or un-archived (Active); the other statuses are the system's`,
        );
    }
    if (set.status === "Archived") await this.discovery.cancelActive(id, "its location was archived");
    try {
      await this.db.batch([this.db.update(locations).set(set).where(eq(locations.id, id)), ...prefixUpdates]);
    } catch (err) {
      if (isUniqueViolation(err, "locations.name"))
        throw conflict(`A location named '${patch.name}' exists.`);
      throw err;
    }
    return this.location(id);
  }

  /** Deletes the location; its prefixes are kept with `location_id` null, its discovery cancelled. */
  async deleteLocation(id: string): Promise<void> {
    await this.location(id);
    await this.discovery.cancelActive(id, "its location was deleted");
    const now = this.clock.now();
    await this.db.batch([
      this.db.update(prefixes).set({ locationId: null, updatedAt: now }).where(eq(prefixes.locationId, id)),
      this.db.delete(locations).where(eq(locations.id, id)),
      ...this.discovery.deleteStatements(id),
    ]);
  }

  // -------------------------------------------------------------------------------------------
  // prefixes

  async listPrefixes(filter: PrefixFilter, offset: number, limit: number): Promise<Page<Prefix>> {
    const where = and(
      filter.locationId !== undefined ? eq(prefixes.locationId, filter.locationId) : undefined,
      filter.managementState ? eq(prefixes.managementState, filter.managementState) : undefined,
      filter.sourceState ? eq(prefixes.sourceState, filter.sourceState) : undefined,
    );
    const [items, [total]] = await Promise.all([
      this.db.select().from(prefixes).where(where).orderBy(asc(prefixes.uri)).limit(limit).offset(offset),
      this.db.select({ n: count() }).from(prefixes).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  async prefix(id: string): Promise<Prefix> {
    const [row] = await this.db.select().from(prefixes).where(eq(prefixes.id, id));
    if (!row) throw notFound("Prefix", id);
    return row;
  }

  /** The prefix with its location's summary (null once deleted) and its active policy. */
  async prefixDetail(id: string) {
    const prefix = await this.prefix(id);
    const [location] = prefix.locationId
      ? await this.db.select().from(locations).where(eq(locations.id, prefix.locationId))
      : [];
    return { prefix, location: location ?? null, policy: await this.activePolicy(id) };
  }

  /**
   * Enables a prefix of a location: `created` when it became active, false when it was already.
   * 404 for a missing location or prefix (or a prefix of another location); 422 when its source is
   * missing or its location archived.
   */
  async enable(locationId: string, prefixId: string): Promise<{ prefix: Prefix; created: boolean }> {
    const location = await this.location(locationId);
    const prefix = await this.prefix(prefixId);
    if (prefix.locationId !== locationId) throw notFound("Prefix", `${prefixId}' of location '${locationId}`);
    if (prefix.managementState === "active") return { prefix, created: false };
    if (location.status === "Archived")
      throw invalidField(
        "management_state",
        `location '${location.name}' is archived; un-archive it to resume its prefixes`,
      );
    if (prefix.sourceState === "missing")
      throw invalidField(
        "source_state",
        `${prefix.uri} is missing since the latest discovery; nothing to manage`,
      );
    const [updated] = await this.db
      .update(prefixes)
      .set({ managementState: "active", stateReason: null, updatedAt: this.clock.now() })
      .where(and(eq(prefixes.id, prefixId), eq(prefixes.managementState, prefix.managementState)))
      .returning();
    if (!updated) return { prefix: await this.prefix(prefixId), created: false };
    return { prefix: updated, created: true };
  }

  // -------------------------------------------------------------------------------------------
  // policies

  async activePolicy(prefixId: string): Promise<PrefixPolicy | null> {
    const [row] = await this.db
      .select()
      .from(prefixPolicies)
      .where(and(eq(prefixPolicies.prefixId, prefixId), eq(prefixPolicies.active, true)));
    return row ?? null;
  }

  async policy(prefixId: string): Promise<PrefixPolicy> {
    await this.prefix(prefixId);
    const policy = await this.activePolicy(prefixId);
    if (!policy) throw new ApiError(404, `Prefix '${prefixId}' has no policy (PUT one).`);
    return policy;
  }

  /** Appends a version and makes it the active one; activates an unmanaged prefix. */
  async putPolicy(prefixId: string, body: PolicyUpsert, actor: string | null): Promise<PrefixPolicy> {
    const prefix = await this.prefix(prefixId);
    const policy = structuredClone(body);
    if (policy.convert) {
      const target = canonicalUri(policy.convert.target_prefix, "convert.target_prefix");
      const source = parseLocation(prefix.uri);
      const to = parseLocation(target);
      if (to.scheme !== source.scheme || to.root !== source.root)
        throw invalidField("convert.target_prefix", `must be on the same store as ${prefix.uri}`);
      if (`${target}/`.startsWith(`${prefix.uri}/`) || `${prefix.uri}/`.startsWith(`${target}/`))
        throw invalidField(
          "convert.target_prefix",
          `must be outside ${prefix.uri} (and not contain it): outputs would be read as inputs`,
        );
      policy.convert.target_prefix = target;
    }
    const now = this.clock.now();
    const id = newId("pol");
    await this.db.batch([
      this.db
        .update(prefixPolicies)
        .set({ active: false })
        .where(and(eq(prefixPolicies.prefixId, prefixId), eq(prefixPolicies.active, true))),
      insertSelect(
        this.db,
        prefixPolicies,
        {
          id: sql`${id}`,
          prefixId: sql`${prefixId}`,
          version: sql`coalesce(max(${prefixPolicies.version}), 0) + 1`,
          active: sql`1`,
          policy: sql`${JSON.stringify(policy)}`,
          createdBy: sql`${actor}`,
          createdAt: sql`${now.getTime()}`,
          nextRunAt: sql`${policy.convert ? nextSlot(policy.convert, now).getTime() : null}`,
        },
        sql`from ${prefixPolicies} where ${prefixPolicies.prefixId} = ${prefixId}`,
      ),
      this.db
        .update(prefixes)
        .set({ managementState: "active", stateReason: null, updatedAt: now })
        .where(and(eq(prefixes.id, prefixId), eq(prefixes.managementState, "unmanaged"))),
    ]);
    return (await this.activePolicy(prefixId)) as PrefixPolicy;
  }

  /** Deletes every version; 404 when the prefix has none. The prefix keeps its state. */
  async deletePolicy(prefixId: string): Promise<void> {
    await this.prefix(prefixId);
    const deleted = await this.db
      .delete(prefixPolicies)
      .where(eq(prefixPolicies.prefixId, prefixId))
      .returning({ id: prefixPolicies.id });
    if (deleted.length === 0) throw new ApiError(404, `Prefix '${prefixId}' has no policy.`);
  }

  async policyVersions(prefixId: string, offset: number, limit: number): Promise<Page<PrefixPolicy>> {
    await this.prefix(prefixId);
    const where = eq(prefixPolicies.prefixId, prefixId);
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(prefixPolicies)
        .where(where)
        .orderBy(desc(prefixPolicies.version))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(prefixPolicies).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  private prefixCount() {
    return sql<number>`(select count(*) from ${prefixes} p where p.location_id = "locations"."id")`.mapWith(
      Number,
    );
  }
}

/** A location URI in its canonical spelling (no trailing `/`); 422 naming `field` otherwise. */
function canonicalUri(uri: string, field: string): string {
  let location: ReturnType<typeof parseLocation>;
  try {
    location = parseLocation(uri);
  } catch (err) {
    if (err instanceof LocationError) throw invalidField(field, `'${uri}' ${err.message}`);
    throw err;
  }
  if (!(LOCATION_SCHEMES as readonly string[]).includes(location.scheme))
    throw invalidField(field, `'${location.scheme}://' is not a location scheme: s3, gs, azure or file`);
  if (location.scheme !== "file" && location.root === "") throw invalidField(field, "names no bucket");
  return formatLocation(location).replace(/\/+$/, "");
}
