/**
 * An Iceberg REST catalog client (the spec in `shared/fixtures/catalog-specs/`), on undici (`http.ts`).
 *
 * - `config()` runs first, once, before any catalog route: its merged `prefix` and
 *   `namespace-separator` shape every later path (`/v1/{prefix}/namespaces/{namespace}/...`).
 * - Every request carries the bearer token; one refused with 401/419 is retried once with a new
 *   token where a new one can be had (client credentials), never more.
 * - Lists page with `pageToken` until the catalog sends no `next-page-token`; empty pages are
 *   normal, a page token seen twice is an error (the listing would never end).
 * - Bodies are read with `parseJson` and commits written with `stringifyJson`, so 64-bit snapshot
 *   ids stay exact both ways.
 * - Messages name the operation and the URL and never a token or secret (`errors.ts`).
 */
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { z } from "zod";
import { parseJson, stringifyJson } from "../json.ts";
import { parseTableMetadata, type TableMetadata } from "../metadata.ts";
import { isTokenRefusal, type RestCatalogAuth, type TokenSource, tokenSource } from "./auth.ts";
import { type CommitResult, commitStateUnknown, type TableCommit } from "./commit.ts";
import { RestCatalogError } from "./errors.ts";
import {
  type Answer,
  type Exchange,
  type FetchFn,
  type HttpOptions,
  malformed,
  send,
  statusError,
} from "./http.ts";
import {
  catalogBase,
  DEFAULT_NAMESPACE_SEPARATOR,
  namespaceParam,
  namespaceSegment,
  tableSegment,
} from "./paths.ts";

export interface RestCatalogClientOptions {
  /** The catalog's base URL, without `/v1`: `https://polaris.example.com/api/catalog`. */
  uri: string;
  /** Sent to `/v1/config` as `warehouse`; which warehouse (and so which prefix) to use. */
  warehouse?: string;
  auth?: RestCatalogAuth;
  /** Sends through this `fetch` instead of undici (tests that alter answers). */
  fetch?: FetchFn;
  /** Per request, headers and body together. Default 30 s. */
  timeoutMs?: number;
  clock?: Clock;
}

/** The catalog's configuration: `defaults`, then the client's own (`warehouse`), then `overrides`. */
export interface CatalogConfig {
  properties: Record<string, string>;
  /** The path prefix every catalog route uses, where the catalog set one. */
  prefix: string | undefined;
  /** The routes the catalog says it serves, where it said. */
  endpoints: string[] | undefined;
}

export interface TableIdentifier {
  namespace: string[];
  name: string;
}

export interface LoadedTable {
  /** Null while a table is staged in a transaction and has no metadata file yet. */
  metadataLocation: string | null;
  /** The metadata, 64-bit ids exact; `metadata.raw` is the JSON as the catalog sent it. */
  metadata: TableMetadata;
  /** Table-specific configuration (FileIO, credentials) that overrides the catalog's. */
  config: Record<string, string>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

const StringMap = z.record(z.string(), z.string());
// The spec requires both maps; a catalog that leaves one out still means "nothing to set".
const ConfigBody = z.object({
  defaults: StringMap.default({}),
  overrides: StringMap.default({}),
  endpoints: z.array(z.string()).optional(),
});
const PageToken = z.string().nullish();
const NamespacesBody = z.object({
  namespaces: z.array(z.array(z.string())).default([]),
  "next-page-token": PageToken,
});
const TablesBody = z.object({
  identifiers: z.array(z.object({ namespace: z.array(z.string()), name: z.string() })).default([]),
  "next-page-token": PageToken,
});
// Only checked to be an object here: `parseTableMetadata` validates it field by field (a
// `z.record` would copy every key of a large metadata document first).
const Metadata = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "expected an object",
);
const LoadTableBody = z.object({
  "metadata-location": z.string().nullish(),
  metadata: Metadata,
  config: StringMap.optional(),
});
const CommitBody = z.object({ "metadata-location": z.string(), metadata: Metadata });

interface Paths {
  base: string;
  separator: string;
}

/**
 * A client of one Iceberg REST catalog.
 *
 * @example
 * const catalog = new RestCatalogClient({ uri, auth: { clientId, clientSecret } });
 * const { metadata } = await catalog.loadTable(["sales"], "orders");
 * const result = await catalog.commitTable(["sales"], "orders", { requirements, updates });
 * if (!result.ok && result.kind === "unknown") {
 *   // reload, and look for the snapshot before anything else
 * }
 */
export class RestCatalogClient {
  readonly uri: string;
  private readonly http: HttpOptions;
  private readonly auth: TokenSource;
  private paths: Paths | undefined;
  private configuring: Promise<CatalogConfig> | undefined;

  constructor(private readonly options: RestCatalogClientOptions) {
    const uri = new URL(options.uri);
    if (uri.username || uri.password)
      throw new Error("RestCatalogClient: put credentials in `auth`, not in the catalog URI");
    this.uri = options.uri.replace(/\/+$/, "");
    this.http = { fetch: options.fetch, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    this.auth = tokenSource(options.auth, this.uri, this.http, options.clock ?? systemClock);
  }

  /** Reads `/v1/config`; the prefix and separator it sets are used by every later call. */
  async config(): Promise<CatalogConfig> {
    const url = new URL(`${this.uri}/v1/config`);
    if (this.options.warehouse !== undefined) url.searchParams.set("warehouse", this.options.warehouse);
    const exchange: Exchange = { operation: "getConfig", method: "GET", url: url.href };
    const body = this.parse(exchange, await this.expect200(exchange), ConfigBody, "CatalogConfig");
    const properties: Record<string, string> = {
      ...body.defaults,
      ...(this.options.warehouse === undefined ? {} : { warehouse: this.options.warehouse }),
      ...body.overrides,
    };
    const separator = properties["namespace-separator"];
    this.paths = {
      base: catalogBase(this.uri, properties.prefix),
      separator: separator ? decodeURIComponent(separator) : DEFAULT_NAMESPACE_SEPARATOR,
    };
    return { properties, prefix: properties.prefix, endpoints: body.endpoints };
  }

  /** The namespaces directly under `parent` (top-level ones without it), every page of them. */
  async listNamespaces(parent: readonly string[] = []): Promise<string[][]> {
    const { base, separator } = await this.resolvePaths();
    const url = new URL(`${base}/namespaces`);
    if (parent.length > 0) url.searchParams.set("parent", namespaceParam(parent, separator));
    const pages = this.pages("listNamespaces", url, NamespacesBody, "ListNamespacesResponse");
    const namespaces: string[][] = [];
    for await (const page of pages) namespaces.push(...page.namespaces);
    return namespaces;
  }

  /** The tables in `namespace`, every page of them. */
  async listTables(namespace: readonly string[]): Promise<TableIdentifier[]> {
    const { base, separator } = await this.resolvePaths();
    const url = new URL(`${base}/namespaces/${namespaceSegment(namespace, separator, "listTables")}/tables`);
    const tables: TableIdentifier[] = [];
    for await (const page of this.pages("listTables", url, TablesBody, "ListTablesResponse"))
      tables.push(...page.identifiers);
    return tables;
  }

  /**
   * The table's current metadata, as the catalog has it. `snapshots: "refs"` asks for only the
   * snapshots a branch or tag names (the spec's query parameter; a catalog may send all anyway):
   * enough to read the table, not to rewrite its metadata.
   */
  async loadTable(
    namespace: readonly string[],
    table: string,
    options: { snapshots?: "all" | "refs" } = {},
  ): Promise<LoadedTable> {
    const url = await this.tableUrl(namespace, table, "loadTable");
    const exchange: Exchange = {
      operation: "loadTable",
      method: "GET",
      url: options.snapshots ? `${url}?snapshots=${options.snapshots}` : url,
    };
    const body = this.parse(exchange, await this.expect200(exchange), LoadTableBody, "LoadTableResult");
    return {
      metadataLocation: body["metadata-location"] ?? null,
      metadata: this.metadata(exchange, body.metadata),
      config: body.config ?? {},
    };
  }

  /**
   * Commits `requirements` and `updates` to the table. Conflicts and unknown outcomes are returned
   * (see `commit.ts` for what each asks of the caller); other refusals (400, 403, 404) are thrown.
   */
  async commitTable(namespace: readonly string[], table: string, commit: TableCommit): Promise<CommitResult> {
    const exchange: Exchange = {
      operation: "updateTable",
      method: "POST",
      url: await this.tableUrl(namespace, table, "updateTable"),
      contentType: "application/json",
      body: stringifyJson({ requirements: commit.requirements, updates: commit.updates }),
    };
    let answer: Answer;
    try {
      answer = await this.call(exchange);
    } catch (err) {
      const lost = err instanceof RestCatalogError && (err.reason === "timeout" || err.reason === "network");
      // A token request that failed means the commit was never sent: that is thrown, not unknown.
      if (!lost || err.operation !== "updateTable") throw err;
      return { ok: false, kind: "unknown", message: `${err.message}; ${RELOAD}` };
    }
    if (answer.status === 409)
      return { ok: false, kind: "conflict", message: this.error(exchange, answer, RETRY).message };
    if (commitStateUnknown(answer.status))
      return { ok: false, kind: "unknown", message: this.error(exchange, answer, RELOAD).message };
    if (answer.status !== 200) throw this.error(exchange, answer);
    try {
      const body = this.parse(exchange, answer, CommitBody, "CommitTableResponse");
      return {
        ok: true,
        metadataLocation: body["metadata-location"],
        metadata: this.metadata(exchange, body.metadata),
      };
    } catch (err) {
      // 200 says it was applied, but the caller can't see the new state: the same as unknown.
      return { ok: false, kind: "unknown", message: `${(err as Error).message}; ${RELOAD}` };
    }
  }

  /** The paths from `config()`, reading it first if no call has yet. */
  private async resolvePaths(): Promise<Paths> {
    if (this.paths) return this.paths;
    this.configuring ??= this.config().finally(() => {
      this.configuring = undefined;
    });
    await this.configuring;
    if (!this.paths) throw new Error("RestCatalogClient: config() returned without setting the paths");
    return this.paths;
  }

  private async tableUrl(namespace: readonly string[], table: string, operation: string): Promise<string> {
    const { base, separator } = await this.resolvePaths();
    return `${base}/namespaces/${namespaceSegment(namespace, separator, operation)}/tables/${tableSegment(table, operation)}`;
  }

  /** Every page of a list route: the first with an empty `pageToken`, as the spec asks to opt in. */
  private async *pages<T extends { "next-page-token"?: string | null | undefined }>(
    operation: string,
    url: URL,
    schema: z.ZodType<T>,
    what: string,
  ): AsyncGenerator<T> {
    const seen = new Set<string>();
    let token = "";
    for (;;) {
      url.searchParams.set("pageToken", token);
      const exchange: Exchange = { operation, method: "GET", url: url.href };
      const page = this.parse(exchange, await this.expect200(exchange), schema, what);
      yield page;
      const next = page["next-page-token"];
      if (next === undefined || next === null) return;
      if (seen.has(next)) throw malformed(exchange, `${what}: page token ${JSON.stringify(next)} came twice`);
      seen.add(next);
      token = next;
    }
  }

  /** Sends with the current token; a refused token is replaced and the request sent once more. */
  private async call(exchange: Exchange): Promise<Answer> {
    const token = await this.auth.token();
    const answer = await send(this.http, { ...exchange, token });
    if (!isTokenRefusal(answer.status) || !this.auth.refused(token)) return answer;
    return send(this.http, { ...exchange, token: await this.auth.token() });
  }

  private async expect200(exchange: Exchange): Promise<Answer> {
    const answer = await this.call(exchange);
    if (answer.status !== 200) throw this.error(exchange, answer);
    return answer;
  }

  private parse<T>(exchange: Exchange, answer: Answer, schema: z.ZodType<T>, what: string): T {
    let json: unknown;
    try {
      json = parseJson(answer.text);
    } catch (err) {
      throw malformed(exchange, `${what} (not JSON)`, err);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw malformed(exchange, `${what}: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }

  private metadata(exchange: Exchange, json: Record<string, unknown>): TableMetadata {
    try {
      return parseTableMetadata(json, exchange.url);
    } catch (err) {
      throw malformed(exchange, `TableMetadata: ${(err as Error).message}`, err);
    }
  }

  private error(exchange: Exchange, answer: Answer, hint?: string): RestCatalogError {
    const next =
      hint ??
      (isTokenRefusal(answer.status)
        ? "the catalog refused the credentials in `auth`"
        : answer.status === 403
          ? "the credentials in `auth` lack a privilege this needs"
          : undefined);
    return statusError(exchange, answer, this.auth.secrets(), next);
  }
}

const RETRY = "a requirement failed and nothing was applied: reload the table, plan again and retry";
const RELOAD =
  "the commit may have been applied: reload the table and look for its snapshot before retrying or cleaning up";
