/**
 * A Unity Catalog REST client (Databricks, and the open-source server: the API in
 * `shared/fixtures/catalog-specs/unity-catalog-oss-api.yaml`), for listing only: catalogs, the
 * schemas of a catalog, the tables of a schema.
 *
 * - Routes live under `<workspace_url>/api/2.1/unity-catalog` (a workspace URL given with that
 *   path already is taken as it is).
 * - Lists page with `max_results` and `page_token` until no `next_page_token` comes back; empty
 *   pages are normal, a token seen twice is an error (the listing would never end).
 * - Every request carries the bearer token; one refused with 401 is retried once with a new token
 *   where a new one can be had (OAuth), never more.
 * - Errors are `RestCatalogError`s whose messages never hold a token or secret (`errors.ts`).
 */
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { z } from "zod";
import { isTokenRefusal, type TokenSource } from "../../iceberg/rest/auth.ts";
import {
  type Answer,
  type Exchange,
  type FetchFn,
  type HttpOptions,
  malformed,
  send,
} from "../../iceberg/rest/http.ts";
import { type UnityAuth, unityTokenSource } from "./auth.ts";
import { unityStatusError } from "./errors.ts";

export interface UnityClientOptions {
  /** `https://dbc-1234.cloud.databricks.com`, or the open-source server's `http://host:8080`. */
  workspaceUrl: string;
  auth: UnityAuth;
  fetch?: FetchFn;
  /** Per request, headers and body together. Default 30 s. */
  timeoutMs?: number;
  clock?: Clock;
}

const API_PATH = "/api/2.1/unity-catalog";
/** The largest pages the API description allows: 1,000 catalogs or schemas, 50 tables. */
const MAX_RESULTS = { listCatalogs: 1000, listSchemas: 1000, listTables: 50 } as const;

const Column = z.looseObject({ name: z.string().nullish(), partition_index: z.number().int().nullish() });
export const UnityTableInfo = z.looseObject({
  name: z.string(),
  catalog_name: z.string().nullish(),
  schema_name: z.string().nullish(),
  table_type: z.string().nullish(),
  data_source_format: z.string().nullish(),
  storage_location: z.string().nullish(),
  columns: z.array(Column).nullish(),
  updated_at: z.number().nullish(),
});
export type UnityTableInfo = z.infer<typeof UnityTableInfo>;

const Named = z.looseObject({ name: z.string() });
const Token = z.string().nullish();
const Lists = {
  listCatalogs: z.object({ catalogs: z.array(Named).nullish(), next_page_token: Token }),
  listSchemas: z.object({ schemas: z.array(Named).nullish(), next_page_token: Token }),
  listTables: z.object({ tables: z.array(UnityTableInfo).nullish(), next_page_token: Token }),
};

/**
 * @example
 * const unity = new UnityClient({ workspaceUrl, auth: { clientId, clientSecret } });
 * for await (const page of unity.tables("main", "sales")) for (const t of page) console.log(t.name);
 */
export class UnityClient {
  readonly base: string;
  private readonly http: HttpOptions;
  private readonly auth: TokenSource;

  constructor(options: UnityClientOptions) {
    const workspace = new URL(options.workspaceUrl);
    if (workspace.username || workspace.password)
      throw new Error("UnityClient: put credentials in `auth`, not in the workspace URL");
    const root = options.workspaceUrl.replace(/\/+$/, "");
    const origin = root.endsWith(API_PATH) ? root.slice(0, -API_PATH.length) : root;
    this.base = `${origin}${API_PATH}`;
    this.http = { fetch: options.fetch, timeoutMs: options.timeoutMs ?? 30_000 };
    this.auth = unityTokenSource(options.auth, origin, this.http, options.clock ?? systemClock);
  }

  /** The catalogs, a page at a time. */
  async *catalogs(): AsyncGenerator<{ name: string }[]> {
    for await (const page of this.pages("listCatalogs", new URL(`${this.base}/catalogs`)))
      yield page.catalogs ?? [];
  }

  /** The schemas of `catalog`, a page at a time. */
  async *schemas(catalog: string): AsyncGenerator<{ name: string }[]> {
    const url = new URL(`${this.base}/schemas`);
    url.searchParams.set("catalog_name", catalog);
    for await (const page of this.pages("listSchemas", url)) yield page.schemas ?? [];
  }

  /** The tables of `catalog.schema`, a page (at most 50) at a time. */
  async *tables(catalog: string, schema: string): AsyncGenerator<UnityTableInfo[]> {
    const url = new URL(`${this.base}/tables`);
    url.searchParams.set("catalog_name", catalog);
    url.searchParams.set("schema_name", schema);
    for await (const page of this.pages("listTables", url)) yield page.tables ?? [];
  }

  private async *pages<O extends keyof typeof Lists>(
    operation: O,
    url: URL,
  ): AsyncGenerator<z.infer<(typeof Lists)[O]>> {
    const seen = new Set<string>();
    url.searchParams.set("max_results", String(MAX_RESULTS[operation]));
    for (;;) {
      const exchange: Exchange = { operation, method: "GET", url: url.href };
      const answer = await this.call(exchange);
      if (answer.status !== 200) throw this.error(exchange, answer);
      const page = parse(exchange, answer, Lists[operation]) as z.infer<(typeof Lists)[O]>;
      yield page;
      const next = page.next_page_token;
      if (next === undefined || next === null || next === "") return;
      if (seen.has(next))
        throw malformed(exchange, `${operation} page: token ${JSON.stringify(next)} came twice`);
      seen.add(next);
      url.searchParams.set("page_token", next);
    }
  }

  /** Sends with the current token; a refused token is replaced and the request sent once more. */
  private async call(exchange: Exchange): Promise<Answer> {
    const token = await this.auth.token();
    const answer = await send(this.http, { ...exchange, token });
    if (!isTokenRefusal(answer.status) || !this.auth.refused(token)) return answer;
    return send(this.http, { ...exchange, token: await this.auth.token() });
  }

  private error(exchange: Exchange, answer: Answer) {
    const hint =
      answer.status === 401
        ? "the workspace refused the connection's credentials"
        : answer.status === 403
          ? "the connection's principal lacks a privilege this needs (USE CATALOG, USE SCHEMA, or BROWSE)"
          : undefined;
    return unityStatusError(exchange, answer, this.auth.secrets(), hint);
  }
}

function parse<T>(exchange: Exchange, answer: Answer, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch (err) {
    throw malformed(exchange, `${exchange.operation} page (not JSON)`, err);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw malformed(exchange, `${exchange.operation} page: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
