/**
 * An Iceberg REST catalog (Polaris, or any catalog that speaks the spec) as a `CatalogClient`, on
 * `RestCatalogClient`.
 *
 * - One catalog: the connection's warehouse, else the `warehouse` the catalog's config sets, else
 *   `default`. Its schemas are the namespaces, levels joined by `.`.
 * - Namespaces are walked breadth first (`parent` level by level; each namespace once, whatever
 *   the catalog repeats); each one's tables are listed (every page), then loaded 8 at a time.
 * - Tables are loaded with `snapshots=refs`: the facts need the current snapshot, not the history,
 *   which in a table committed to for years is most of its metadata.
 * - Facts come from the loaded metadata: size is the current snapshot's `total-files-size` (null
 *   without one), partitioned when the default spec has a field that is not `void`, `updated_at` is
 *   `last-updated-ms`. `detail` keeps the current snapshot, schema and spec, not the history.
 * - Incremental mode reads every table too (`changedAmong` is not asked): `last-updated-ms` is only
 *   in the loaded metadata, and the plane accepts incremental syncs of workspace connections only. The
 *   table's `config` (FileIO settings, vended credentials) is never kept.
 * - A table or namespace that is gone (404) by the time it is read is left out; a table whose
 *   metadata can't be read is reported without facts, the reason in `detail.error`.
 */
import type { PolarisCredentialsSchema, SyncedTable } from "@lakesmith/shared/catalogs";
import type { Clock } from "@lakesmith/shared/time";
import type { z } from "zod";
import { type LoadedTable, RestCatalogClient, RestCatalogError } from "../iceberg/rest/index.ts";
import { forEachBounded } from "./bounded.ts";
import type { CatalogClient, WalkedTable, WalkOptions } from "./types.ts";

type PolarisCredentials = z.infer<typeof PolarisCredentialsSchema>;

/** The scope Polaris grants a principal's roles under; the Iceberg spec's `catalog` is refused there. */
export const POLARIS_DEFAULT_SCOPE = "PRINCIPAL_ROLE:ALL";
const LOAD_CONCURRENCY = 24;

export interface PolarisCatalogOptions {
  fetch?: typeof fetch;
  clock?: Clock;
  timeoutMs?: number;
}

export class PolarisCatalog implements CatalogClient {
  private readonly client: RestCatalogClient;
  private name: string | undefined;

  constructor(
    private readonly connection: PolarisCredentials,
    options: PolarisCatalogOptions = {},
  ) {
    this.client = new RestCatalogClient({
      uri: connection.catalog_url,
      ...(connection.warehouse === undefined ? {} : { warehouse: connection.warehouse }),
      auth: {
        clientId: connection.client_id,
        clientSecret: connection.client_secret,
        ...(connection.token_url === undefined ? {} : { tokenUrl: connection.token_url }),
        scope: connection.scope ?? POLARIS_DEFAULT_SCOPE,
      },
      ...options,
    });
  }

  async listCatalogs(): Promise<string[]> {
    return [await this.catalogName()];
  }

  async walkTables(
    options: WalkOptions,
    onTable: (table: WalkedTable) => void | Promise<void>,
  ): Promise<void> {
    const catalog = await this.catalogName();
    if (options.catalog !== undefined && options.catalog !== catalog) return;
    options.onCatalog?.(catalog);
    const seen = new Set<string>();
    const queue: string[][] = [[]];
    for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
      options.signal?.throwIfAborted();
      for (const child of (await unlessGone(this.client.listNamespaces(parent))) ?? []) {
        const key = child.join("\u001f");
        if (child.length === 0 || seen.has(key)) continue;
        seen.add(key);
        queue.push(child);
      }
      if (parent.length > 0) await this.walkNamespace(catalog, parent, options, onTable);
    }
  }

  private async walkNamespace(
    catalog: string,
    namespace: string[],
    options: WalkOptions,
    onTable: (table: WalkedTable) => void | Promise<void>,
  ): Promise<void> {
    const schema = namespace.join(".");
    options.onSchema?.({ catalog, name: schema });
    const identifiers = (await unlessGone(this.client.listTables(namespace))) ?? [];
    await forEachBounded(identifiers, LOAD_CONCURRENCY, async ({ name }) => {
      options.signal?.throwIfAborted();
      const names = { full_name: `${catalog}.${schema}.${name}`, catalog, schema, name };
      let table: SyncedTable;
      try {
        const loaded = await unlessGone(this.client.loadTable(namespace, name, { snapshots: "refs" }));
        if (loaded === undefined) return;
        table = { ...names, ...icebergFacts(loaded) };
      } catch (err) {
        if (!(err instanceof RestCatalogError && err.reason === "malformed")) throw err;
        table = { ...names, ...NO_FACTS, detail: { error: err.message } };
      }
      await onTable({ changed: true, table });
    });
  }

  private async catalogName(): Promise<string> {
    if (this.name === undefined) {
      const config = await this.client.config();
      this.name = this.connection.warehouse ?? config.properties.warehouse ?? "default";
    }
    return this.name;
  }
}

const NO_FACTS = {
  format: "iceberg",
  table_type: "ICEBERG",
  location: null,
  size_bytes: null,
  has_partitions: null,
  updated_at: null,
} as const;

type Facts = Omit<SyncedTable, "full_name" | "catalog" | "schema" | "name">;

/** A loaded table's facts (see the header). */
export function icebergFacts(loaded: LoadedTable): Facts {
  const { metadata } = loaded;
  const raw = metadata.raw;
  const snapshot = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
  const spec = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId);
  const rawSchema =
    entry(raw.schemas, "schema-id", metadata.currentSchemaId) ?? (raw.schemas ? undefined : raw.schema);
  const rawSpec =
    entry(raw["partition-specs"], "spec-id", metadata.defaultSpecId) ??
    (raw["partition-spec"] ? { "spec-id": 0, fields: raw["partition-spec"] } : undefined);
  return {
    format: "iceberg",
    table_type: "ICEBERG",
    location: metadata.location,
    size_bytes: totalFilesSize(snapshot?.summary),
    has_partitions: spec ? spec.fields.some((f) => f.transform.kind !== "void") : null,
    updated_at: metadata.lastUpdatedMs,
    detail: {
      metadata_location: loaded.metadataLocation,
      format_version: metadata.formatVersion,
      table_uuid: metadata.tableUuid,
      properties: metadata.properties,
      current_snapshot: snapshot
        ? {
            snapshot_id: String(snapshot.snapshotId),
            sequence_number: snapshot.sequenceNumber,
            timestamp_ms: snapshot.timestampMs,
            summary: snapshot.summary,
          }
        : null,
      schema: plain(rawSchema ?? null),
      partition_spec: plain(rawSpec ?? null),
    },
  };
}

/** A snapshot summary's `total-files-size`, or null where it is absent or not a byte count. */
export function totalFilesSize(summary: Record<string, string> | undefined): number | null {
  const total = summary?.["total-files-size"];
  return total !== undefined && /^\d+$/.test(total) ? Number(total) : null;
}

function entry(list: unknown, key: string, id: number): unknown {
  return Array.isArray(list)
    ? list.find((item) => typeof item === "object" && item !== null && Number(item[key]) === id)
    : undefined;
}

/** JSON as a job result can carry it: 64-bit ids (`bigint`) as decimal strings. */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** The answer, or undefined when the catalog says the thing is gone (404). */
async function unlessGone<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof RestCatalogError && err.status === 404) return undefined;
    throw err;
  }
}
