/**
 * A loopback Unity Catalog server for tests, held to the published contract: every answer of the
 * Unity REST API it sends is validated against the open-source Unity Catalog OpenAPI description
 * (`shared/fixtures/catalog-specs/`, OpenAPI 3.0), and so is every list request's query. An answer
 * that does not validate goes out as a 500 instead and is recorded in `validationErrors`, which
 * tests assert to be empty; a request to a route the server does not serve is recorded too.
 *
 * - Routes under `/api/2.1/unity-catalog`: list catalogs, list schemas, list tables (all paged
 *   with `max_results` and `page_token`, optionally with an empty page after every page), get table.
 *   All need a bearer token: the static `token`, or one the token endpoint issued that has not
 *   expired by `clock`; anything else gets 401 with Unity's error body.
 * - `/oidc/v1/token`: Databricks' OAuth M2M endpoint (client credentials, the client as HTTP Basic
 *   credentials, scope `all-apis`). It is not in the open-source description: nothing is validated there.
 * - The description documents no error answers for these operations; errors are held to the body
 *   both Unity servers send (`{ error_code, message }`) instead.
 *
 * The validator follows `rest-catalog.ts` (which exports none): dereferenced by swagger-parser (the
 * document has no cycles), compiled by Ajv in its draft-07 mode, as OpenAPI 3.0 schemas are.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { parse as parseYaml } from "yaml";
import { DELTA_FIXTURES } from "./fixtures.ts";

/** The published open-source Unity Catalog OpenAPI description (OpenAPI 3.0). */
export const UNITY_SPEC = join(DELTA_FIXTURES, "../catalog-specs/unity-catalog-oss-api.yaml");

export const API_PATH = "/api/2.1/unity-catalog";

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// The contract: answers and list queries validated against the OpenAPI document.
// ---------------------------------------------------------------------------------------------

/** The error body Unity servers send (the open-source server adds `details` and `stack_trace`). */
const UNITY_ERROR_SCHEMA = {
  type: "object",
  required: ["error_code", "message"],
  properties: {
    error_code: { type: "string", minLength: 1 },
    message: { type: "string" },
    details: { type: "array" },
    stack_trace: { type: ["string", "null"] },
  },
};

class Contract {
  private readonly ajv: Ajv;
  private readonly operations = new Map<string, Json>();
  private readonly compiled = new Map<object, ValidateFunction>();

  private constructor(doc: Json) {
    // OpenAPI 3.0 schemas are a draft-07 dialect with extra keywords (`nullable`, `example`), which
    // strict: false lets through; int32 and int64 are OpenAPI's formats, checked here for real.
    this.ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(this.ajv);
    this.ajv.addFormat("int32", { type: "number", validate: (n: number) => isIntIn(n, 2 ** 31) });
    this.ajv.addFormat("int64", { type: "number", validate: (n: number) => isIntIn(n, 2 ** 63) });
    for (const item of Object.values(doc.paths as Record<string, Json>)) {
      const shared = (item.parameters as Json[] | undefined) ?? [];
      for (const operation of Object.values(item))
        if (isObject(operation) && typeof operation.operationId === "string")
          this.operations.set(operation.operationId, {
            ...operation,
            parameters: [...shared, ...((operation.parameters as Json[] | undefined) ?? [])],
          });
    }
  }

  static async load(): Promise<Contract> {
    const raw = parseYaml(await readFile(UNITY_SPEC, "utf8")) as Json;
    if (!String(raw.openapi).startsWith("3.0")) throw new Error(`expected OpenAPI 3.0, got ${raw.openapi}`);
    type Document = Parameters<typeof SwaggerParser.dereference>[0];
    const doc = await SwaggerParser.dereference(structuredClone(raw) as unknown as Document);
    return new Contract(doc as unknown as Json);
  }

  /** Why `status` with `body` is not an answer `operationId` may give, or undefined. */
  checkResponse(operationId: string, status: number, body: unknown): string | undefined {
    const responses = this.operation(operationId).responses as Record<string, Json>;
    const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (response === undefined) {
      if (status < 400) return `${status} is not a documented answer of ${operationId}`;
      return this.check(UNITY_ERROR_SCHEMA, body);
    }
    const content = response.content as Record<string, Json> | undefined;
    if (!content) return body === undefined ? undefined : `${status} of ${operationId} has no body`;
    const json = content["application/json"];
    if (!json) return `${status} of ${operationId} is not JSON`;
    return this.check(json.schema as object, body);
  }

  /** Why the query of a request for `operationId` breaks the document's parameters, or undefined. */
  checkQuery(operationId: string, url: URL): string | undefined {
    const problems: string[] = [];
    for (const parameter of this.operation(operationId).parameters as Json[]) {
      if (parameter.in !== "query") continue;
      const name = String(parameter.name);
      const value = url.searchParams.get(name);
      if (value === null) {
        if (parameter.required) problems.push(`query parameter ${name} is required`);
        continue;
      }
      const schema = parameter.schema as Json;
      const typed = schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
      const problem = this.check(schema, typed, name);
      if (problem) problems.push(`query ${name}=${value}: ${problem}`);
    }
    return problems.length ? problems.join("; ") : undefined;
  }

  private operation(operationId: string): Json {
    const found = this.operations.get(operationId);
    if (!found) throw new Error(`the spec has no operation ${operationId}`);
    return found;
  }

  private check(schema: object, value: unknown, dataVar = "body"): string | undefined {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    if (validate(value)) return undefined;
    return this.ajv.errorsText(validate.errors, { separator: "; ", dataVar });
  }
}

let contract: Promise<Contract> | undefined;

function isIntIn(n: number, bound: number): boolean {
  return Number.isInteger(n) && n >= -bound && n < bound;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// The server's state: catalogs, schemas, tables (Unity's own records).
// ---------------------------------------------------------------------------------------------

/** A table as a test registers it: Unity's `TableInfo`, of which the names are required. */
export type TableInit = Json & { catalog_name: string; schema_name: string; name: string };

export class UnityState {
  readonly catalogs = new Map<string, Json>();
  readonly schemas = new Map<string, Json>();
  readonly tables = new Map<string, Json>();
  /** The tables of each schema (`catalog.schema`), so a page of one does not filter them all. */
  private readonly bySchema = new Map<string, Map<string, Json>>();

  constructor(private readonly clock: Clock) {}

  addCatalog(name: string): Json {
    let catalog = this.catalogs.get(name);
    if (!catalog) {
      const now = this.clock.now().getTime();
      catalog = { name, id: randomUUID(), owner: "admin", created_at: now, updated_at: now };
      this.catalogs.set(name, catalog);
    }
    return catalog;
  }

  addSchema(catalog: string, name: string): Json {
    this.addCatalog(catalog);
    const fullName = `${catalog}.${name}`;
    let schema = this.schemas.get(fullName);
    if (!schema) {
      const now = this.clock.now().getTime();
      schema = {
        name,
        catalog_name: catalog,
        full_name: fullName,
        schema_id: randomUUID(),
        owner: "admin",
        created_at: now,
        updated_at: now,
      };
      this.schemas.set(fullName, schema);
    }
    return schema;
  }

  /** Registers or replaces a table; `updated_at` is now by the clock unless the record sets it. */
  putTable(init: TableInit): Json {
    this.addSchema(init.catalog_name, init.schema_name);
    const fullName = `${init.catalog_name}.${init.schema_name}.${init.name}`;
    const now = this.clock.now().getTime();
    const before = this.tables.get(fullName);
    const table: Json = {
      table_id: before?.table_id ?? randomUUID(),
      created_at: before?.created_at ?? now,
      owner: "admin",
      ...init,
      updated_at: init.updated_at ?? now,
    };
    this.tables.set(fullName, table);
    const schemaKey = `${init.catalog_name}.${init.schema_name}`;
    let inSchema = this.bySchema.get(schemaKey);
    if (!inSchema) {
      inSchema = new Map();
      this.bySchema.set(schemaKey, inSchema);
    }
    inSchema.set(fullName, table);
    return table;
  }

  dropTable(fullName: string): void {
    const table = this.tables.get(fullName);
    this.tables.delete(fullName);
    if (table) this.bySchema.get(`${table.catalog_name}.${table.schema_name}`)?.delete(fullName);
  }

  schemasOf(catalog: string): Json[] {
    return [...this.schemas.values()].filter((s) => s.catalog_name === catalog);
  }

  tablesOf(catalog: string, schema: string): Json[] {
    return [...(this.bySchema.get(`${catalog}.${schema}`)?.values() ?? [])];
  }
}

// ---------------------------------------------------------------------------------------------
// The server: routes, auth, paging, and the validated reply.
// ---------------------------------------------------------------------------------------------

export interface UnityServerOptions {
  /** A static bearer token the server accepts. */
  token?: string;
  /** OAuth M2M service principals: client id to secret. */
  clients?: Record<string, string>;
  /** `expires_in` of issued tokens, in seconds; they expire by `clock`. Default 3600. */
  tokenLifetimeS?: number;
  /** The server's page length (`max_results` may ask for less). Default 100. */
  pageSize?: number;
  /** Answer an empty page (with a next token where more follow) after every page. */
  emptyPages?: boolean;
  /**
   * Validate every answer against the OpenAPI description. Default true; benchmarks only turn it
   * off (`npm run bench:catalogs`), where validating 2,000 pages of tables would be what is measured.
   */
  validateResponses?: boolean;
  clock?: Clock;
}

export type UnityOperation = "getToken" | "listCatalogs" | "listSchemas" | "listTables" | "getTable";

export interface UnityCall {
  operation: UnityOperation | undefined;
  method: string;
  path: string;
  query: string;
  /** The bearer token presented, if any. */
  token: string | undefined;
  status: number;
}

export interface UnityCatalogServer {
  /** The workspace URL, for a `workspace` connection's `workspace_url`. */
  url: string;
  state: UnityState;
  calls: UnityCall[];
  /** Answers that broke the contract (sent as 500 instead), and requests that did. */
  validationErrors: string[];
  /** Forgets every issued token, so the next request with one gets 401. */
  revokeTokens(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body?: unknown;
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port.
 *
 * @example
 * const unity = await startUnityCatalog({ clients: { sp: "s3cret" }, pageSize: 2, emptyPages: true });
 * unity.state.putTable({ catalog_name: "main", schema_name: "sales", name: "orders", table_type: "MANAGED" });
 */
export async function startUnityCatalog(options: UnityServerOptions = {}): Promise<UnityCatalogServer> {
  contract ??= Contract.load();
  const spec = await contract;
  const clock = options.clock ?? systemClock;
  const state = new UnityState(clock);
  const calls: UnityCall[] = [];
  const validationErrors: string[] = [];
  const issued = new Map<string, number>();

  const authorized = (token: string | undefined): boolean => {
    if (token === undefined) return false;
    if (options.token !== undefined && token === options.token) return true;
    const expiresAt = issued.get(token);
    return expiresAt !== undefined && clock.now().getTime() < expiresAt;
  };

  const send = (res: ServerResponse, call: UnityCall, reply: Reply) => {
    let { status } = reply;
    let body = reply.body;
    if (call.operation !== "getToken") {
      const problem = !call.operation
        ? `${call.method} ${call.path} is not a route this server serves`
        : options.validateResponses === false
          ? undefined
          : spec.checkResponse(call.operation, status, body);
      if (problem) {
        validationErrors.push(
          `${call.operation ?? "?"} ${call.method} ${call.path} -> ${status}: ${problem}`,
        );
        status = call.operation ? 500 : 404;
        body = unityError("INTERNAL", problem);
      }
    }
    call.status = status;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body ?? {}));
  };

  const paged = (url: URL, items: Json[]): { items: Json[]; next: string | undefined } | Reply => {
    const maxResults = Number(url.searchParams.get("max_results") ?? 0);
    if (maxResults < 0) return error(400, "INVALID_ARGUMENT", "max_results must be at least 0");
    const size = Math.min(maxResults || Infinity, options.pageSize ?? 100);
    const token = url.searchParams.get("page_token") ?? "";
    const match = /^([en])(\d+)$/.exec(token);
    if (token !== "" && !match) return error(400, "INVALID_ARGUMENT", `Invalid page token: ${token}`);
    const offset = match ? Number(match[2]) : 0;
    if (match?.[1] === "e") return { items: [], next: offset < items.length ? `n${offset}` : undefined };
    const end = offset + size;
    const more = end < items.length;
    return {
      items: items.slice(offset, end),
      next: options.emptyPages ? `e${Math.min(end, items.length)}` : more ? `n${end}` : undefined,
    };
  };

  const list = (url: URL, key: string, items: Json[]): Reply => {
    const page = paged(url, items);
    if ("status" in page) return page;
    return {
      status: 200,
      body: { [key]: page.items, ...(page.next === undefined ? {} : { next_page_token: page.next }) },
    };
  };

  const answer = (call: UnityCall, url: URL): Reply => {
    if (!call.operation) return error(404, "NOT_FOUND", "no such route");
    const problem = call.operation === "getToken" ? undefined : spec.checkQuery(call.operation, url);
    if (problem) {
      validationErrors.push(`${call.operation} request: ${problem}`);
      return error(400, "INVALID_ARGUMENT", problem);
    }
    if (!authorized(call.token))
      return error(401, "UNAUTHENTICATED", "Invalid access token or the token has expired.");
    const catalog = url.searchParams.get("catalog_name") ?? "";
    const schema = url.searchParams.get("schema_name") ?? "";
    switch (call.operation) {
      case "listCatalogs":
        return list(url, "catalogs", [...state.catalogs.values()]);
      case "listSchemas":
        if (!state.catalogs.has(catalog)) return error(404, "NOT_FOUND", `Catalog not found: ${catalog}`);
        return list(url, "schemas", state.schemasOf(catalog));
      case "listTables":
        if (!state.schemas.has(`${catalog}.${schema}`))
          return error(404, "NOT_FOUND", `Schema not found: ${catalog}.${schema}`);
        return list(url, "tables", state.tablesOf(catalog, schema));
      case "getTable": {
        const fullName = decodeURIComponent(call.path.slice(`${API_PATH}/tables/`.length));
        const table = state.tables.get(fullName);
        return table ? { status: 200, body: table } : error(404, "NOT_FOUND", `Table not found: ${fullName}`);
      }
      default:
        return error(404, "NOT_FOUND", "no such route");
    }
  };

  const token = (req: IncomingMessage, body: string): Reply => {
    const form = Object.fromEntries(new URLSearchParams(body));
    const oauth = (status: number, code: string, description: string): Reply => ({
      status,
      body: { error: code, error_description: description },
    });
    if (form.grant_type !== "client_credentials")
      return oauth(400, "unsupported_grant_type", "client_credentials only");
    if (form.scope !== "all-apis") return oauth(400, "invalid_scope", "scope must be all-apis");
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    const [id, ...rest] = basic
      ? Buffer.from(basic[1] as string, "base64")
          .toString("utf8")
          .split(":")
      : [];
    const secret = id === undefined ? undefined : options.clients?.[id];
    if (secret === undefined || secret !== rest.join(":"))
      return oauth(401, "invalid_client", "Client authentication failed");
    const lifetimeS = options.tokenLifetimeS ?? 3600;
    const accessToken = `dapi-${randomBytes(12).toString("hex")}`;
    issued.set(accessToken, clock.now().getTime() + lifetimeS * 1000);
    return {
      status: 200,
      body: { access_token: accessToken, token_type: "Bearer", expires_in: lifetimeS, scope: "all-apis" },
    };
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loopback");
    const authorization = req.headers.authorization;
    const call: UnityCall = {
      operation: operationOf(req.method ?? "GET", url.pathname),
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.search,
      token: authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : undefined,
      status: 0,
    };
    calls.push(call);
    readBody(req)
      .then((body) => (call.operation === "getToken" ? token(req, body) : answer(call, url)))
      .then((reply) => send(res, call, reply))
      .catch((err: Error) => send(res, call, error(500, "INTERNAL", err.message)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    calls,
    validationErrors,
    revokeTokens: () => issued.clear(),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}

/** Which operation a request is for, by method and path; undefined for a route not served. */
function operationOf(method: string, path: string): UnityOperation | undefined {
  if (path === "/oidc/v1/token") return method === "POST" ? "getToken" : undefined;
  if (method !== "GET" || !path.startsWith(`${API_PATH}/`)) return undefined;
  const rest = path.slice(API_PATH.length + 1).split("/");
  if (rest.length === 1 && rest[0] === "catalogs") return "listCatalogs";
  if (rest.length === 1 && rest[0] === "schemas") return "listSchemas";
  if (rest.length === 1 && rest[0] === "tables") return "listTables";
  if (rest.length === 2 && rest[0] === "tables" && rest[1] !== "") return "getTable";
  return undefined;
}

function unityError(code: string, message: string) {
  return {
    error_code: code,
    details: [{ reason: code, metadata: {}, "@type": "google.rpc.ErrorInfo" }],
    stack_trace: null,
    message,
  };
}

function error(status: number, code: string, message: string): Reply {
  return { status, body: unityError(code, message) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
