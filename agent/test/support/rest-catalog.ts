/**
 * A loopback Iceberg REST catalog for tests, held to the published contract: every answer it
 * sends (status and body) is validated against the Iceberg REST OpenAPI description
 * (`shared/fixtures/catalog-specs/`), and so is every commit and token request it receives. An
 * answer that does not validate goes out as a 500 instead and is recorded in `validationErrors`,
 * which tests assert to be empty; a request to a route the catalog does not serve is recorded too.
 *
 * - Routes: `/v1/config`, `/v1/oauth/tokens` (client credentials), and under `/v1/{prefix}`:
 *   list namespaces, list tables (both paged), load table, commit table. All but the token
 *   endpoint need a bearer token (the static `token` or one it issued and that has not expired by
 *   `clock`).
 * - Commits check `assert-create`, `assert-table-uuid`, `assert-ref-snapshot-id`,
 *   `assert-current-schema-id` and `assert-default-spec-id` (409 on a mismatch), apply
 *   `add-snapshot`, `set-snapshot-ref`, `remove-snapshots`, `remove-snapshot-ref`,
 *   `set-properties` and `remove-properties` (400 for any other), bump `last-updated-ms`,
 *   `last-sequence-number`, `snapshot-log` and `metadata-log`, and write the new metadata JSON into
 *   the table's folder where it has one.
 * - Faults: `failNext` answers the next request of an operation (default `updateTable`) with a
 *   status, after applying the commit or not, or after a delay (for client timeouts).
 *
 * One file holds the validator, the routes and the metadata updates because tests may add only
 * this file to `test/support/`; each part is a section below.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse as parseYaml } from "yaml";
import { parseJson, stringifyJson } from "../../src/iceberg/json.ts";
import { DELTA_FIXTURES } from "./fixtures.ts";

/** The published Iceberg REST catalog OpenAPI description (OpenAPI 3.1). */
export const ICEBERG_REST_SPEC = join(DELTA_FIXTURES, "../catalog-specs/iceberg-rest-catalog-open-api.yaml");

// ---------------------------------------------------------------------------------------------
// The contract: responses and requests validated against the OpenAPI document.
// ---------------------------------------------------------------------------------------------

const DOC_ID = "https://iceberg.apache.org/rest-catalog-open-api.json";

type Json = Record<string, unknown>;

/**
 * Validators for the document's operations. The document is dereferenced by swagger-parser with
 * circular references left as `$ref` (types and expressions nest into themselves, and Ajv can't
 * compile a cyclic object); Ajv resolves those within the document, registered under `DOC_ID`,
 * so each schema is compiled by its JSON pointer in the document.
 */
class Contract {
  private readonly ajv: Ajv2020;
  private readonly operations = new Map<string, { pointer: string; operation: Json }>();
  private readonly compiled = new Map<string, ValidateFunction>();

  private constructor(private readonly doc: Json) {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12 plus `discriminator` and `example`; the
    // document's `nullable` (a 3.0 leftover) is one Ajv understands. strictTypes is off because
    // the published schemas put `required` beside `allOf` without `type`.
    this.ajv = new Ajv2020({
      allErrors: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
    });
    for (const keyword of ["discriminator", "example", "components", "paths"]) this.ajv.addKeyword(keyword);
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: doc.components, paths: doc.paths });
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>))
      for (const [method, operation] of Object.entries(item))
        if (isObject(operation) && typeof operation.operationId === "string")
          this.operations.set(operation.operationId, {
            pointer: `/paths/${pointerPart(path)}/${method}`,
            operation,
          });
  }

  static async load(): Promise<Contract> {
    const raw = parseYaml(await readFile(ICEBERG_REST_SPEC, "utf8")) as Json;
    if (!String(raw.openapi).startsWith("3.1")) throw new Error(`expected OpenAPI 3.1, got ${raw.openapi}`);
    type Document = Parameters<typeof SwaggerParser.dereference>[0];
    const doc = await SwaggerParser.dereference(structuredClone(raw) as unknown as Document, {
      dereference: { circular: "ignore" },
    });
    return new Contract(doc as unknown as Json);
  }

  /** Why `status` with body `text` is not an answer `operationId` may give, or undefined. */
  checkResponse(operationId: string, status: number, text: string): string | undefined {
    const { pointer, operation } = this.operation(operationId);
    const responses = operation.responses as Record<string, Json>;
    const key = [String(status), `${String(status)[0]}XX`, "default"].find((k) => k in responses);
    if (key === undefined) return `${status} is not a documented answer of ${operationId}`;
    const [responsePointer, response] = this.follow(`${pointer}/responses/${key}`, responses[key] as Json);
    if (!isObject(response.content))
      return text === "" ? undefined : `${status} of ${operationId} has no body`;
    if (!isObject(response.content["application/json"])) return `${status} of ${operationId} is not JSON`;
    return this.check(`${responsePointer}/content/application~1json/schema`, parseWire(text));
  }

  /** Why `value` is not a request body `operationId` accepts as `contentType`, or undefined. */
  checkRequest(operationId: string, contentType: string, value: unknown): string | undefined {
    const { pointer, operation } = this.operation(operationId);
    const [bodyPointer, body] = this.follow(`${pointer}/requestBody`, operation.requestBody as Json);
    if (!isObject(body.content) || !isObject(body.content[contentType]))
      return `${operationId} takes no ${contentType} body`;
    return this.check(`${bodyPointer}/content/${pointerPart(contentType)}/schema`, value);
  }

  private operation(operationId: string): { pointer: string; operation: Json } {
    const found = this.operations.get(operationId);
    if (!found) throw new Error(`the spec has no operation ${operationId}`);
    return found;
  }

  /** A response or request body object, and its pointer, through a `$ref` dereferencing left. */
  private follow(pointer: string, object: Json): [string, Json] {
    if (typeof object.$ref !== "string") return [pointer, object];
    const target = object.$ref.slice(1);
    const found = target
      .split("/")
      .slice(1)
      .reduce<unknown>(
        (node, part) => (node as Json)[part.replace(/~1/g, "/").replace(/~0/g, "~")],
        this.doc,
      );
    return this.follow(target, found as Json);
  }

  private check(pointer: string, value: unknown): string | undefined {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(value)) return undefined;
    return this.ajv.errorsText(validate.errors, { separator: "; ", dataVar: "body" });
  }
}

let contract: Promise<Contract> | undefined;

function pointerPart(part: string): string {
  return part.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The body as a validator sees the wire: plain JSON numbers (64-bit ids as the nearest double). */
function parseWire(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------
// The catalog's state: namespaces and tables.
// ---------------------------------------------------------------------------------------------

export interface StoredTable {
  namespace: string[];
  name: string;
  /** The current metadata JSON, as `parseJson` reads it (64-bit ids are `bigint`). */
  metadata: Json;
  metadataLocation: string;
  /** Where new metadata files are written, where the table has a folder. */
  folder: string | undefined;
  /** How many metadata files the table has had; numbers the next one. */
  version: number;
}

export interface TableInit {
  /** The metadata JSON, read with `parseJson` so that 64-bit ids are exact. */
  metadata: Json;
  /** The table's folder: its metadata is written to `<folder>/metadata/`. */
  folder?: string;
}

/** The catalog's tables, and its namespaces (every level of every table's namespace). */
export class CatalogTables {
  private readonly tables = new Map<string, StoredTable>();
  private readonly spaces = new Map<string, string[]>();

  /** Registers a table; with a folder, its metadata is written there first, as a commit would. */
  async register(namespace: string[], name: string, init: TableInit): Promise<StoredTable> {
    this.addNamespace(namespace);
    const table: StoredTable = {
      namespace: [...namespace],
      name,
      metadata: structuredClone(init.metadata),
      metadataLocation: "",
      folder: init.folder,
      version: 0,
    };
    table.metadataLocation = await writeMetadata(table, table.metadata);
    this.tables.set(tableKey(namespace, name), table);
    return table;
  }

  /** Adds a namespace and every level above it. */
  addNamespace(levels: string[]): void {
    for (let n = 1; n <= levels.length; n++)
      this.spaces.set(spaceKey(levels.slice(0, n)), levels.slice(0, n));
  }

  get(namespace: string[], name: string): StoredTable | undefined {
    return this.tables.get(tableKey(namespace, name));
  }

  hasNamespace(levels: string[]): boolean {
    return this.spaces.has(spaceKey(levels));
  }

  /** The namespaces directly under `parent`. */
  children(parent: string[]): string[][] {
    return [...this.spaces.values()].filter(
      (levels) => levels.length === parent.length + 1 && parent.every((level, i) => levels[i] === level),
    );
  }

  inNamespace(namespace: string[]): StoredTable[] {
    const key = spaceKey(namespace);
    return [...this.tables.values()].filter((t) => spaceKey(t.namespace) === key);
  }
}

function spaceKey(levels: string[]): string {
  return levels.join("\u001f");
}

function tableKey(namespace: string[], name: string): string {
  return `${spaceKey(namespace)}\u0000${name}`;
}

/** The metadata with only the snapshots a branch or tag names (`loadTable?snapshots=refs`). */
function referencedOnly(metadata: Json): Json {
  const refs = Object.values((metadata.refs ?? {}) as Record<string, Json>).map((ref) =>
    id(ref["snapshot-id"]),
  );
  if (metadata["current-snapshot-id"] !== undefined) refs.push(id(metadata["current-snapshot-id"]));
  const named = new Set(refs);
  if (!Array.isArray(metadata.snapshots)) return metadata;
  return {
    ...metadata,
    snapshots: (metadata.snapshots as Json[]).filter((s) => named.has(id(s["snapshot-id"]))),
  };
}

/** Writes the table's next metadata file where it has a folder; returns its location either way. */
async function writeMetadata(table: StoredTable, metadata: Json): Promise<string> {
  const file = `${String(table.version).padStart(5, "0")}-${randomUUID()}.metadata.json`;
  if (table.folder === undefined) return `${String(metadata.location ?? "memory:")}/metadata/${file}`;
  const dir = join(table.folder, "metadata");
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${file}.tmp`);
  await writeFile(temp, stringifyJson(metadata, 2));
  await rename(temp, join(dir, file));
  return pathToFileURL(join(dir, file)).href;
}

// ---------------------------------------------------------------------------------------------
// Commits: requirements, then updates, on a copy of the metadata.
// ---------------------------------------------------------------------------------------------

/** A commit the catalog turns down: 409 when a requirement failed, 400 when it is malformed. */
class Refusal extends Error {
  constructor(
    readonly status: 400 | 409,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function id(value: unknown): bigint | undefined {
  return typeof value === "bigint" || typeof value === "number" ? BigInt(value) : undefined;
}

/** The snapshot a ref points at; without `refs` (format v1), `main` is `current-snapshot-id`. */
function refSnapshot(metadata: Json, ref: string): bigint | undefined {
  const refs = metadata.refs as Record<string, Json> | undefined;
  if (refs) return id(refs[ref]?.["snapshot-id"]);
  const current = id(metadata["current-snapshot-id"]);
  return ref === "main" && current !== undefined && current !== -1n ? current : undefined;
}

function checkRequirement(metadata: Json, requirement: Json): void {
  const failed = (message: string) => new Refusal(409, "CommitFailedException", message);
  switch (requirement.type) {
    case "assert-create":
      throw failed("Requirement failed: table already exists");
    case "assert-table-uuid":
      if (metadata["table-uuid"] !== requirement.uuid)
        throw failed(
          `Requirement failed: UUID does not match: expected ${metadata["table-uuid"]} != ${requirement.uuid}`,
        );
      return;
    case "assert-ref-snapshot-id": {
      const ref = String(requirement.ref);
      const actual = refSnapshot(metadata, ref);
      const expected = id(requirement["snapshot-id"]);
      if (actual !== expected)
        throw failed(
          expected === undefined
            ? `Requirement failed: ref ${ref} was created concurrently`
            : `Requirement failed: ${ref} has changed: expected id ${expected} != ${actual ?? "none"}`,
        );
      return;
    }
    case "assert-current-schema-id":
    case "assert-default-spec-id": {
      const field = String(requirement.type).slice("assert-".length);
      if (metadata[field] !== requirement[field])
        throw failed(
          `Requirement failed: ${field} changed: expected ${requirement[field]} != ${metadata[field]}`,
        );
      return;
    }
    default:
      throw new Refusal(400, "BadRequestException", `unsupported requirement ${String(requirement.type)}`);
  }
}

function applyUpdate(metadata: Json, update: Json, nowMs: number): void {
  const snapshots = list(metadata, "snapshots");
  metadata.refs ??= {};
  const refs = metadata.refs as Record<string, Json>;
  const bad = (message: string) => new Refusal(400, "BadRequestException", message);
  switch (update.action) {
    case "add-snapshot": {
      const snapshot = structuredClone(update.snapshot) as Json;
      const snapshotId = id(snapshot["snapshot-id"]);
      if (snapshots.some((s) => id(s["snapshot-id"]) === snapshotId))
        throw bad(`Snapshot already exists for id: ${snapshotId}`);
      const last = Number(metadata["last-sequence-number"] ?? 0);
      const sequence = Number(snapshot["sequence-number"] ?? last + 1);
      if (
        Number(metadata["format-version"]) >= 2 &&
        snapshot["parent-snapshot-id"] !== undefined &&
        sequence <= last
      )
        throw bad(
          `Cannot add snapshot with sequence number ${sequence} older than last sequence number ${last}`,
        );
      snapshot["sequence-number"] = sequence;
      snapshots.push(snapshot);
      metadata["last-sequence-number"] = Math.max(last, sequence);
      return;
    }
    case "set-snapshot-ref": {
      const snapshotId = id(update["snapshot-id"]);
      if (!snapshots.some((s) => id(s["snapshot-id"]) === snapshotId))
        throw bad(`Cannot set ${update["ref-name"]} to unknown snapshot: ${snapshotId}`);
      const { action: _, "ref-name": name, ...ref } = update;
      refs[String(name)] = ref;
      if (name === "main") {
        metadata["current-snapshot-id"] = update["snapshot-id"];
        list(metadata, "snapshot-log").push({
          "timestamp-ms": nowMs,
          "snapshot-id": update["snapshot-id"],
        });
      }
      return;
    }
    case "remove-snapshots": {
      const removed = new Set((update["snapshot-ids"] as unknown[]).map(id));
      const kept = (entry: Json) => !removed.has(id(entry["snapshot-id"]));
      metadata.snapshots = snapshots.filter(kept);
      for (const [name, ref] of Object.entries(refs)) if (!kept(ref)) removeRef(metadata, name);
      if (Array.isArray(metadata["snapshot-log"]))
        metadata["snapshot-log"] = metadata["snapshot-log"].filter(kept);
      if (Array.isArray(metadata.statistics)) metadata.statistics = metadata.statistics.filter(kept);
      return;
    }
    case "remove-snapshot-ref":
      removeRef(metadata, String(update["ref-name"]));
      return;
    case "set-properties":
      metadata.properties = { ...(metadata.properties as Json), ...(update.updates as Json) };
      return;
    case "remove-properties": {
      const properties = { ...(metadata.properties as Json) };
      for (const key of update.removals as string[]) delete properties[key];
      metadata.properties = properties;
      return;
    }
    default:
      throw bad(`unsupported update ${String(update.action)}`);
  }
}

/** The array at `key`, made empty where absent. */
function list(metadata: Json, key: string): Json[] {
  if (!Array.isArray(metadata[key])) metadata[key] = [];
  return metadata[key] as Json[];
}

function removeRef(metadata: Json, name: string): void {
  delete (metadata.refs as Json)[name];
  if (name === "main") metadata["current-snapshot-id"] = -1;
}

/** The table's next metadata, or a `Refusal`; the stored table is not touched. */
function nextMetadata(table: StoredTable, commit: Json, nowMs: number): Json {
  for (const requirement of commit.requirements as Json[]) checkRequirement(table.metadata, requirement);
  const metadata = structuredClone(table.metadata);
  for (const update of commit.updates as Json[]) applyUpdate(metadata, update, nowMs);
  const previousMs = Number(table.metadata["last-updated-ms"] ?? 0);
  metadata["last-updated-ms"] = Math.max(nowMs, previousMs);
  list(metadata, "metadata-log").push({
    "timestamp-ms": previousMs,
    "metadata-file": table.metadataLocation,
  });
  return metadata;
}

// ---------------------------------------------------------------------------------------------
// The server: routes, auth, paging, faults, and the validated reply.
// ---------------------------------------------------------------------------------------------

export interface RestCatalogServerOptions {
  /** The `prefix` `/v1/config` hands out. Default `warehouse1`. */
  prefix?: string;
  /** Where set, a config request for another warehouse is answered 404. */
  warehouse?: string;
  defaults?: Record<string, string>;
  overrides?: Record<string, string>;
  /** A static bearer token the catalog accepts. */
  token?: string;
  /** OAuth2 clients: client id to secret. */
  clients?: Record<string, string>;
  /** `expires_in` of issued tokens, in seconds; they expire by `clock`. Default 3600. */
  tokenLifetimeS?: number;
  /** Entries per page, when the client asks for pages. Default 100. */
  pageSize?: number;
  /** Answer an empty page (with a next token) before every page but the first. */
  emptyPages?: boolean;
  /**
   * Validate every answer against the OpenAPI description. Default true; benchmarks only turn it
   * off (`npm run bench:catalogs`), where validating 100,000 table loads would be what is measured.
   */
  validateResponses?: boolean;
  clock?: Clock;
}

export type CatalogOperation =
  | "getConfig"
  | "getToken"
  | "listNamespaces"
  | "listTables"
  | "loadTable"
  | "updateTable";

export interface CatalogFault {
  /** Which operation's next request fails (the token endpoint can't). Default `updateTable`. */
  operation?: Exclude<CatalogOperation, "getToken">;
  /** The status to answer with instead of the real answer. */
  status?: 500 | 502 | 503 | 504;
  /** Apply the commit first, then fail: the "applied but state unknown" case. */
  afterApply?: boolean;
  /** Wait this long before answering (after applying, with `afterApply`). */
  delayMs?: number;
  /** Runs before the request is answered: another writer's commit that lands first. */
  before?: () => Promise<void>;
}

export interface CatalogCall {
  /** The spec's operationId, or undefined for a route the catalog does not serve. */
  operation: CatalogOperation | undefined;
  method: string;
  /** The path as sent, percent-encoding kept. */
  path: string;
  /** The query string as sent (`?pageToken=...`), or "". */
  query: string;
  /** The bearer token presented, if any. */
  token: string | undefined;
  /** The status answered; 0 until then. */
  status: number;
}

export interface RestCatalogServer {
  /** The catalog's base URL, for `RestCatalogClient`'s `uri`. */
  uri: string;
  tables: CatalogTables;
  calls: CatalogCall[];
  /** Answers that broke the contract (sent as 500 instead), and requests that did. */
  validationErrors: string[];
  failNext(fault: CatalogFault): void;
  /** Forgets every issued token, so the next request with one gets 401. */
  revokeTokens(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body?: unknown;
}

const BASE_PATH = "/api/catalog";

/**
 * Starts the catalog on 127.0.0.1 with an ephemeral port.
 *
 * @example
 * const catalog = await startRestCatalog({ clients: { agent: "s3cret" } });
 * await catalog.tables.register(["tpch"], "lineitem", { metadata, folder });
 * const client = new RestCatalogClient({ uri: catalog.uri, auth: { clientId: "agent", clientSecret: "s3cret" } });
 */
export async function startRestCatalog(options: RestCatalogServerOptions = {}): Promise<RestCatalogServer> {
  contract ??= Contract.load();
  const spec = await contract;
  const clock = options.clock ?? systemClock;
  const prefix = options.prefix ?? "warehouse1";
  const tables = new CatalogTables();
  const calls: CatalogCall[] = [];
  const validationErrors: string[] = [];
  const faults: CatalogFault[] = [];
  const issued = new Map<string, number>();
  const closing = new AbortController();

  const authorized = (token: string | undefined): boolean => {
    if (token === undefined) return false;
    if (token === options.token) return true;
    const expiresAt = issued.get(token);
    return expiresAt !== undefined && clock.now().getTime() < expiresAt;
  };

  const takeFault = (operation: CatalogOperation): CatalogFault | undefined => {
    const index = faults.findIndex((f) => (f.operation ?? "updateTable") === operation);
    return index < 0 ? undefined : faults.splice(index, 1)[0];
  };

  const send = (res: ServerResponse, call: CatalogCall, reply: Reply) => {
    let { status } = reply;
    let text = reply.body === undefined ? "" : stringifyJson(reply.body);
    const problem = !call.operation
      ? `${call.method} ${call.path} is not a route this catalog serves`
      : options.validateResponses === false
        ? undefined
        : spec.checkResponse(call.operation, status, text);
    if (problem) {
      validationErrors.push(`${call.operation ?? "?"} ${call.method} ${call.path} -> ${status}: ${problem}`);
      status = call.operation ? 500 : 404;
      text = stringifyJson(errorBody(status, "ResponseValidationError", problem));
    }
    call.status = status;
    if (!res.writableEnded && !res.destroyed)
      res.writeHead(status, { "content-type": "application/json" }).end(text);
  };

  const paged = <T>(url: URL, items: T[]): { items: T[]; next?: string | null } | Reply => {
    const token = url.searchParams.get("pageToken");
    if (token === null) return { items, next: null };
    const size = Number(url.searchParams.get("pageSize")) || options.pageSize || 100;
    const match = /^([en])(\d+)$/.exec(token);
    if (token !== "" && !match) return error(400, "BadRequestException", `not a page token: ${token}`);
    const offset = match ? Number(match[2]) : 0;
    if (match?.[1] === "e") return { items: [], next: `n${offset}` };
    const end = offset + size;
    return {
      items: items.slice(offset, end),
      next: end >= items.length ? null : `${options.emptyPages ? "e" : "n"}${end}`,
    };
  };

  const route = async (req: IncomingMessage, call: CatalogCall, url: URL): Promise<Reply> => {
    const body = await readBody(req);
    if (call.operation === "getToken") return token(body);
    if (!authorized(call.token))
      return error(401, "NotAuthorizedException", "Not authorized to make this request");
    const fault = call.operation ? takeFault(call.operation) : undefined;
    await fault?.before?.();
    if (fault && !fault.afterApply && fault.delayMs)
      await sleep(fault.delayMs, undefined, { signal: closing.signal });
    if (fault?.status && !fault.afterApply)
      return error(fault.status, "ServiceFailureException", "injected failure");
    const reply = await answer(call, url, body);
    if (fault?.afterApply && fault.delayMs) await sleep(fault.delayMs, undefined, { signal: closing.signal });
    if (fault?.status && fault.afterApply) {
      const type =
        call.operation === "updateTable" ? "CommitStateUnknownException" : "ServiceFailureException";
      return error(fault.status, type, "injected failure after the change was applied");
    }
    return reply;
  };

  const token = (body: string): Reply => {
    const form = Object.fromEntries(new URLSearchParams(body));
    const problem = spec.checkRequest("getToken", "application/x-www-form-urlencoded", form);
    if (problem) {
      validationErrors.push(`getToken request: ${problem}`);
      return { status: 400, body: { error: "invalid_request", error_description: problem } };
    }
    if (form.grant_type !== "client_credentials")
      return {
        status: 400,
        body: { error: "unsupported_grant_type", error_description: "client_credentials only" },
      };
    const secret = form.client_id === undefined ? undefined : options.clients?.[form.client_id];
    if (secret === undefined || secret !== form.client_secret)
      return {
        status: 401,
        body: { error: "invalid_client", error_description: "unknown client or wrong secret" },
      };
    const lifetimeS = options.tokenLifetimeS ?? 3600;
    const accessToken = `tok-${randomBytes(12).toString("hex")}`;
    issued.set(accessToken, clock.now().getTime() + lifetimeS * 1000);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: "bearer",
        expires_in: lifetimeS,
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      },
    };
  };

  const answer = async (call: CatalogCall, url: URL, body: string): Promise<Reply> => {
    const segments = call.path.slice(BASE_PATH.length).split("/");
    const namespace = decodeNamespace(segments[4] ?? "");
    switch (call.operation) {
      case "getConfig": {
        const warehouse = url.searchParams.get("warehouse");
        if (options.warehouse !== undefined && warehouse !== null && warehouse !== options.warehouse)
          return error(404, "NoSuchWarehouseException", `Warehouse does not exist: ${warehouse}`);
        return {
          status: 200,
          body: {
            defaults: options.defaults ?? {},
            overrides: { ...options.overrides, prefix },
            endpoints: [
              "GET /v1/{prefix}/namespaces",
              "GET /v1/{prefix}/namespaces/{namespace}/tables",
              "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
              "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
            ],
          },
        };
      }
      case "listNamespaces": {
        const parentParam = url.searchParams.get("parent");
        const parent = parentParam ? parentParam.split("\u001f") : [];
        if (parent.length > 0 && !tables.hasNamespace(parent))
          return error(404, "NoSuchNamespaceException", `Namespace does not exist: ${parent.join(".")}`);
        const page = paged(url, tables.children(parent));
        if ("status" in page) return page;
        return { status: 200, body: { namespaces: page.items, "next-page-token": page.next } };
      }
      case "listTables": {
        if (!tables.hasNamespace(namespace))
          return error(404, "NoSuchNamespaceException", `Namespace does not exist: ${namespace.join(".")}`);
        const page = paged(url, tables.inNamespace(namespace));
        if ("status" in page) return page;
        const identifiers = page.items.map((t) => ({ namespace: t.namespace, name: t.name }));
        return { status: 200, body: { identifiers, "next-page-token": page.next } };
      }
      case "loadTable":
      case "updateTable": {
        const name = decodeURIComponent(segments[6] ?? "");
        const table = tables.get(namespace, name);
        if (!table)
          return error(
            404,
            "NoSuchTableException",
            `Table does not exist: ${[...namespace, name].join(".")}`,
          );
        if (call.operation === "loadTable") {
          const snapshots = url.searchParams.get("snapshots") ?? "all";
          if (snapshots !== "all" && snapshots !== "refs")
            return error(400, "BadRequestException", `snapshots must be all or refs, not ${snapshots}`);
          const metadata = snapshots === "refs" ? referencedOnly(table.metadata) : table.metadata;
          return {
            status: 200,
            body: { "metadata-location": table.metadataLocation, metadata, config: {} },
          };
        }
        return commit(table, body);
      }
      default:
        return error(404, "NoSuchRouteException", "no such route");
    }
  };

  const commit = async (table: StoredTable, body: string): Promise<Reply> => {
    let request: Json;
    try {
      request = parseJson(body) as Json;
    } catch (err) {
      return error(400, "BadRequestException", (err as Error).message);
    }
    const problem = spec.checkRequest("updateTable", "application/json", parseWire(body));
    if (problem) {
      validationErrors.push(`updateTable request: ${problem}`);
      return error(400, "BadRequestException", `Malformed request: ${problem}`);
    }
    let metadata: Json;
    try {
      metadata = nextMetadata(table, request, clock.now().getTime());
    } catch (err) {
      if (err instanceof Refusal) return error(err.status, err.type, err.message);
      throw err;
    }
    table.version += 1;
    table.metadataLocation = await writeMetadata(table, metadata);
    table.metadata = metadata;
    return { status: 200, body: { "metadata-location": table.metadataLocation, metadata } };
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loopback");
    const authorization = req.headers.authorization;
    const call: CatalogCall = {
      operation: operationOf(req.method ?? "GET", url.pathname, prefix),
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.search,
      token: authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : undefined,
      status: 0,
    };
    calls.push(call);
    route(req, call, url)
      .then((reply) => send(res, call, reply))
      .catch((err: Error) => {
        if (closing.signal.aborted) return res.destroy();
        send(res, call, error(500, "InternalServerError", err.message));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    uri: `http://127.0.0.1:${port}${BASE_PATH}`,
    tables,
    calls,
    validationErrors,
    failNext: (fault) => faults.push(fault),
    revokeTokens: () => issued.clear(),
    close: () => {
      closing.abort();
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}

/** Which operation a request is for, by method and path; undefined for a route not served. */
function operationOf(method: string, path: string, prefix: string): CatalogOperation | undefined {
  if (!path.startsWith(`${BASE_PATH}/`)) return undefined;
  const s = path.slice(BASE_PATH.length).split("/");
  if (s[1] !== "v1") return undefined;
  if (s.length === 3 && s[2] === "config" && method === "GET") return "getConfig";
  if (s.length === 4 && s[2] === "oauth" && s[3] === "tokens" && method === "POST") return "getToken";
  if (s[2] !== encodeURIComponent(prefix) || s[3] !== "namespaces") return undefined;
  if (s.length === 4 && method === "GET") return "listNamespaces";
  if (s.length === 6 && s[5] === "tables" && method === "GET") return "listTables";
  if (s.length === 7 && s[5] === "tables")
    return method === "GET" ? "loadTable" : method === "POST" ? "updateTable" : undefined;
  return undefined;
}

/** A namespace path segment: levels split at `%1F`, each percent-decoded. */
function decodeNamespace(segment: string): string[] {
  return segment === "" ? [] : segment.split(/%1F/i).map(decodeURIComponent);
}

function errorBody(code: number, type: string, message: string) {
  return { error: { message, type, code } };
}

function error(status: number, type: string, message: string): Reply {
  return { status, body: errorBody(status, type, message) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
