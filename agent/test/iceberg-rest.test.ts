import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ManualClock } from "@lakesmith/shared/time";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseJson } from "../src/iceberg/json.ts";
import {
  RestCatalogClient,
  type RestCatalogClientOptions,
  RestCatalogError,
  type SnapshotJson,
  type TableCommit,
} from "../src/iceberg/rest/index.ts";
import { ICEBERG_FIXTURES } from "./support/iceberg.ts";
import {
  type RestCatalogServer,
  type RestCatalogServerOptions,
  startRestCatalog,
} from "./support/rest-catalog.ts";

const LINEITEM = join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/metadata/v2.metadata.json");
const TABLE_UUID = "cc2317c6-1937-45fc-b29f-935ff34bcf22";
/** The fixture's snapshots: neither id is a double, so a `JSON.parse` anywhere would change them. */
const PARENT = 7817332053627255703n;
const CURRENT = 2354745328521181395n;
const NEW = 5674432298346784501n;
const SECRET = "s3cret-5f1e0c7a-never-printed";

let catalog: RestCatalogServer;
let scratch: string;

async function start(options: RestCatalogServerOptions = {}): Promise<RestCatalogServer> {
  catalog = await startRestCatalog({ clients: { agent: SECRET }, ...options });
  return catalog;
}

function client(options: Partial<RestCatalogClientOptions> = {}): RestCatalogClient {
  return new RestCatalogClient({
    uri: catalog.uri,
    auth: { clientId: "agent", clientSecret: SECRET },
    ...options,
  });
}

async function lineitem(): Promise<Record<string, unknown>> {
  return parseJson(await readFile(LINEITEM, "utf8")) as Record<string, unknown>;
}

/** Registers the lineitem fixture's metadata as `tpch.lineitem`, backed by a scratch folder. */
async function registerLineitem() {
  return catalog.tables.register(["tpch"], "lineitem", { metadata: await lineitem(), folder: scratch });
}

function snapshot(id: bigint, parent: bigint, sequence: number): SnapshotJson {
  return {
    "snapshot-id": id,
    "parent-snapshot-id": parent,
    "sequence-number": sequence,
    "timestamp-ms": 1_767_225_600_000,
    "manifest-list": `file:///lake/tpch/lineitem/metadata/snap-${id}.avro`,
    summary: { operation: "replace", "added-data-files": "1", "deleted-data-files": "2" },
    "schema-id": 0,
  };
}

/** A compaction's commit: on top of `expected` on main, add `id` and move main to it. */
function replaceOnMain(expected: bigint, id = NEW): TableCommit {
  return {
    requirements: [
      { type: "assert-table-uuid", uuid: TABLE_UUID },
      { type: "assert-ref-snapshot-id", ref: "main", "snapshot-id": expected },
    ],
    updates: [
      { action: "add-snapshot", snapshot: snapshot(id, expected, 3) },
      { action: "set-snapshot-ref", "ref-name": "main", type: "branch", "snapshot-id": id },
    ],
  };
}

function callsOf(operation: string) {
  return catalog.calls.filter((c) => c.operation === operation);
}

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-rest-"));
});

afterEach(async () => {
  const errors = [...catalog.validationErrors];
  await catalog.close();
  await rm(scratch, { recursive: true, force: true });
  expect(errors, "every answer the catalog sent must match the OpenAPI description").toEqual([]);
});

describe("catalog config", () => {
  it("merges defaults, the client's warehouse and overrides, and puts the prefix in every catalog path", async () => {
    await start({
      warehouse: "lake",
      defaults: { clients: "4", "write.mode": "copy" },
      overrides: { "write.mode": "merge" },
    });
    await registerLineitem();
    const rest = client({ warehouse: "lake" });

    const config = await rest.config();
    expect(config.prefix).toBe("warehouse1");
    expect(config.properties).toEqual({
      clients: "4",
      warehouse: "lake",
      "write.mode": "merge",
      prefix: "warehouse1",
    });
    await rest.listNamespaces();
    await rest.listTables(["tpch"]);
    await rest.loadTable(["tpch"], "lineitem");

    expect(callsOf("getConfig").map((c) => c.query)).toEqual(["?warehouse=lake"]);
    const catalogCalls = catalog.calls.filter(
      (c) => c.operation !== "getConfig" && c.operation !== "getToken",
    );
    expect(catalogCalls.map((c) => c.path)).toEqual([
      "/api/catalog/v1/warehouse1/namespaces",
      "/api/catalog/v1/warehouse1/namespaces/tpch/tables",
      "/api/catalog/v1/warehouse1/namespaces/tpch/tables/lineitem",
    ]);
  });

  it("reads the config once, before the first catalog call, when config() was never called", async () => {
    await start();
    await registerLineitem();
    const rest = client();
    await Promise.all([rest.loadTable(["tpch"], "lineitem"), rest.listNamespaces()]);
    await rest.listTables(["tpch"]);
    expect(callsOf("getConfig")).toHaveLength(1);
    expect(catalog.calls.find((c) => c.operation !== "getToken")?.operation).toBe("getConfig");
  });

  it("throws a 404 naming the operation and URL for a warehouse the catalog does not have", async () => {
    await start({ warehouse: "lake" });
    const err = await client({ warehouse: "swamp" })
      .config()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestCatalogError);
    expect(err).toMatchObject({ status: 404, type: "NoSuchWarehouseException", operation: "getConfig" });
    expect((err as Error).message).toContain(`getConfig GET ${catalog.uri}/v1/config?warehouse=swamp: 404`);
  });
});

describe("OAuth2 client credentials", () => {
  it("fetches one token and sends it on every request", async () => {
    await start();
    await registerLineitem();
    const rest = client();
    await rest.listNamespaces();
    await rest.listTables(["tpch"]);
    await rest.loadTable(["tpch"], "lineitem");

    expect(callsOf("getToken")).toHaveLength(1);
    const tokens = new Set(catalog.calls.filter((c) => c.operation !== "getToken").map((c) => c.token));
    expect(tokens.size).toBe(1);
    expect([...tokens][0]).toMatch(/^tok-/);
  });

  it("replaces the token shortly before it expires, without a refused request", async () => {
    const clock = new ManualClock();
    await start({ clock, tokenLifetimeS: 600 });
    const rest = client({ clock });
    await rest.listNamespaces();
    clock.advance(530_000); // 70 s left: still used
    await rest.listNamespaces();
    expect(callsOf("getToken")).toHaveLength(1);

    clock.advance(20_000); // 50 s left, under a tenth of its life: replaced while still valid
    await rest.listNamespaces();
    clock.advance(700_000); // long expired: replaced
    await rest.listNamespaces();

    expect(callsOf("getToken")).toHaveLength(3);
    expect(catalog.calls.every((c) => c.status === 200)).toBe(true);
  });

  it("fetches a new token and retries once when the catalog refuses the token", async () => {
    await start();
    const rest = client();
    await rest.listNamespaces();
    catalog.revokeTokens();
    catalog.tables.addNamespace(["tpch"]);

    expect(await rest.listNamespaces()).toEqual([["tpch"]]);
    expect(catalog.calls.slice(-3).map((c) => [c.operation, c.status])).toEqual([
      ["listNamespaces", 401],
      ["getToken", 200],
      ["listNamespaces", 200],
    ]);
  });

  it("throws a refused static token without retrying, and without printing it", async () => {
    await start({ token: "the-right-token" });
    const wrong = "static-token-9b1d-never-printed";
    const err = await client({ auth: { token: wrong } })
      .listNamespaces()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401, operation: "getConfig" });
    expect((err as Error).message).toContain("refused the credentials");
    expect((err as Error).message).not.toContain(wrong);
    expect(catalog.calls).toHaveLength(1);

    await expect(client({ auth: { token: "the-right-token" } }).listNamespaces()).resolves.toEqual([]);
  });

  it("names the token URL but never the secret when the secret is wrong", async () => {
    await start({ clients: { agent: "another-secret" } });
    const err = await client()
      .listNamespaces()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestCatalogError);
    const message = (err as Error).message;
    expect(message).toContain(`getToken POST ${catalog.uri}/v1/oauth/tokens: 401 invalid_client`);
    expect(message).toContain("check the client id and secret");
    expect(`${String(err)} ${JSON.stringify(err)}`).not.toContain(SECRET);
  });

  it("redacts the secret and the token from error text the catalog sends back", async () => {
    await start();
    const echo: typeof fetch = async (input, init) => {
      const body = String(init?.body ?? "");
      const secret = new URLSearchParams(body).get("client_secret");
      if (secret !== null)
        return Response.json(
          { error: "invalid_client", error_description: `bad secret ${secret}` },
          { status: 401 },
        );
      return fetch(input, init);
    };
    const message = await client({ fetch: echo })
      .config()
      .catch((e: Error) => e.message);
    expect(message).toContain("bad secret <redacted>");
    expect(message).not.toContain(SECRET);
  });
});

describe("paging", () => {
  it("lists every namespace across pages, empty pages included", async () => {
    await start({ pageSize: 2, emptyPages: true });
    const names = ["a", "b", "c", "d", "e"];
    for (const name of names) catalog.tables.addNamespace([name]);

    expect(await client().listNamespaces()).toEqual(names.map((n) => [n]));
    // [a b] -> [] -> [c d] -> [] -> [e]
    expect(callsOf("listNamespaces")).toHaveLength(5);
  });

  it("lists every table across pages, and the namespaces under a parent", async () => {
    await start({ pageSize: 2, emptyPages: true });
    const metadata = await lineitem();
    for (const name of ["t1", "t2", "t3"]) await catalog.tables.register(["db", "raw"], name, { metadata });
    catalog.tables.addNamespace(["db", "clean"]);
    const rest = client();

    expect((await rest.listTables(["db", "raw"])).map((t) => t.name)).toEqual(["t1", "t2", "t3"]);
    expect(callsOf("listTables")).toHaveLength(3);
    expect(await rest.listNamespaces(["db"])).toEqual([
      ["db", "raw"],
      ["db", "clean"],
    ]);
    expect(callsOf("listNamespaces").at(-1)?.query).toContain("parent=db&");
  });
});

describe("namespace and table names in URLs", () => {
  it("encodes each level, joins them with %1F, and encodes dots and spaces safely", async () => {
    await start();
    await catalog.tables.register(["sales data", "q1.2024"], "orders v2", { metadata: await lineitem() });
    const rest = client();

    const loaded = await rest.loadTable(["sales data", "q1.2024"], "orders v2");
    expect(loaded.metadata.tableUuid).toBe(TABLE_UUID);
    expect(await rest.listTables(["sales data", "q1.2024"])).toEqual([
      { namespace: ["sales data", "q1.2024"], name: "orders v2" },
    ]);
    expect(await rest.listNamespaces(["sales data"])).toEqual([["sales data", "q1.2024"]]);
    expect(callsOf("loadTable")[0]?.path).toBe(
      "/api/catalog/v1/warehouse1/namespaces/sales%20data%1Fq1.2024/tables/orders%20v2",
    );
  });

  it("refuses a name a URL path would read as a relative step, before sending anything", async () => {
    await start();
    const rest = client();
    await rest.config();
    const before = catalog.calls.length;
    await expect(rest.loadTable(["tpch"], "..")).rejects.toMatchObject({ reason: "invalid_name" });
    await expect(rest.listTables(["."])).rejects.toMatchObject({ reason: "invalid_name" });
    await expect(rest.listTables(["tpch", ""])).rejects.toMatchObject({ reason: "invalid_name" });
    expect(catalog.calls).toHaveLength(before);
  });
});

describe("loadTable", () => {
  it("keeps 64-bit snapshot ids exact", async () => {
    await start();
    const registered = await registerLineitem();
    const loaded = await client().loadTable(["tpch"], "lineitem");

    expect(loaded.metadataLocation).toBe(registered.metadataLocation);
    expect(loaded.metadata.currentSnapshotId).toBe(CURRENT);
    expect(loaded.metadata.snapshots.map((s) => s.snapshotId)).toEqual([PARENT, CURRENT]);
    expect(loaded.metadata.refs.main?.snapshotId).toBe(CURRENT);
    expect(loaded.metadata.raw["current-snapshot-id"]).toBe(CURRENT);
    expect(loaded.config).toEqual({});
  });

  it("asks for the snapshots branches and tags name only, with snapshots=refs", async () => {
    await start();
    await registerLineitem();
    const loaded = await client().loadTable(["tpch"], "lineitem", { snapshots: "refs" });
    expect(callsOf("loadTable")[0]?.query).toBe("?snapshots=refs");
    expect(loaded.metadata.currentSnapshotId).toBe(CURRENT);
    expect(loaded.metadata.snapshots.map((s) => s.snapshotId)).toEqual([CURRENT]);
    // Without it, the whole history, as before.
    const all = await client().loadTable(["tpch"], "lineitem");
    expect(all.metadata.snapshots.map((s) => s.snapshotId)).toEqual([PARENT, CURRENT]);
  });

  it("throws the catalog's 404 with the operation, the URL and the error type", async () => {
    await start();
    const err = await client()
      .loadTable(["tpch"], "orders")
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 404, type: "NoSuchTableException", reason: "http" });
    expect((err as Error).message).toContain(
      `loadTable GET ${catalog.uri}/v1/warehouse1/namespaces/tpch/tables/orders: 404 NoSuchTableException`,
    );
  });
});

describe("commitTable", () => {
  it("commits a snapshot, 64-bit ids exact, and the catalog writes the new metadata file", async () => {
    const clock = new ManualClock();
    await start({ clock });
    const registered = await registerLineitem();
    const previous = registered.metadataLocation;

    const result = await client({ clock }).commitTable(["tpch"], "lineitem", replaceOnMain(CURRENT));
    if (!result.ok) throw new Error(result.message);
    expect(result.metadata.currentSnapshotId).toBe(NEW);
    expect(result.metadata.snapshots.map((s) => s.snapshotId)).toEqual([PARENT, CURRENT, NEW]);
    expect(result.metadata.lastSequenceNumber).toBe(3);
    expect(result.metadata.lastUpdatedMs).toBe(clock.now().getTime());
    expect(result.metadata.snapshotLog.at(-1)?.snapshotId).toBe(NEW);
    expect(result.metadata.metadataLog.at(-1)?.metadataFile).toBe(previous);

    expect(result.metadataLocation).not.toBe(previous);
    expect(result.metadataLocation.startsWith(`file://${scratch}/metadata/`)).toBe(true);
    const written = parseJson(await readFile(fileURLToPath(result.metadataLocation), "utf8")) as Record<
      string,
      unknown
    >;
    expect(written["current-snapshot-id"]).toBe(NEW);

    const reloaded = await client().loadTable(["tpch"], "lineitem");
    expect(reloaded.metadataLocation).toBe(result.metadataLocation);
    expect(reloaded.metadata.currentSnapshotId).toBe(NEW);
  });

  it("expires a snapshot and sets properties in one commit", async () => {
    await start();
    await registerLineitem();
    const result = await client().commitTable(["tpch"], "lineitem", {
      requirements: [{ type: "assert-ref-snapshot-id", ref: "main", "snapshot-id": CURRENT }],
      updates: [
        { action: "remove-snapshots", "snapshot-ids": [PARENT] },
        { action: "set-properties", updates: { "lakesmith.last-expire": "2026-01-01" } },
      ],
    });
    if (!result.ok) throw new Error(result.message);
    expect(result.metadata.snapshots.map((s) => s.snapshotId)).toEqual([CURRENT]);
    expect(result.metadata.properties["lakesmith.last-expire"]).toBe("2026-01-01");
    expect(result.metadata.currentSnapshotId).toBe(CURRENT);
  });

  it("returns a conflict for a stale assert-ref-snapshot-id, and applies nothing", async () => {
    await start();
    await registerLineitem();
    const rest = client();

    const result = await rest.commitTable(["tpch"], "lineitem", replaceOnMain(PARENT));
    expect(result).toMatchObject({ ok: false, kind: "conflict" });
    if (result.ok) return;
    expect(result.message).toContain(
      `updateTable POST ${catalog.uri}/v1/warehouse1/namespaces/tpch/tables/lineitem: 409 CommitFailedException`,
    );
    expect(result.message).toContain("reload the table");
    expect(callsOf("updateTable").map((c) => c.status)).toEqual([409]);
    expect((await rest.loadTable(["tpch"], "lineitem")).metadata.currentSnapshotId).toBe(CURRENT);
  });

  it("returns a conflict for another table's uuid", async () => {
    await start();
    await registerLineitem();
    const commit = replaceOnMain(CURRENT);
    commit.requirements[0] = { type: "assert-table-uuid", uuid: "00000000-0000-0000-0000-000000000000" };
    expect(await client().commitTable(["tpch"], "lineitem", commit)).toMatchObject({
      ok: false,
      kind: "conflict",
    });
  });

  it("returns unknown for a 500 after the catalog applied the commit, and a reload shows it applied", async () => {
    await start();
    await registerLineitem();
    const rest = client();
    catalog.failNext({ status: 500, afterApply: true });

    const result = await rest.commitTable(["tpch"], "lineitem", replaceOnMain(CURRENT));
    expect(result).toMatchObject({ ok: false, kind: "unknown" });
    if (!result.ok) expect(result.message).toContain("500 CommitStateUnknownException");
    if (!result.ok) expect(result.message).toContain("look for its snapshot");

    const reloaded = await rest.loadTable(["tpch"], "lineitem");
    expect(reloaded.metadata.currentSnapshotId).toBe(NEW);
    expect(reloaded.metadata.snapshots.some((s) => s.snapshotId === NEW)).toBe(true);
  });

  it("returns unknown for a 503, and a reload shows nothing applied", async () => {
    await start();
    await registerLineitem();
    const rest = client();
    catalog.failNext({ status: 503 });

    const result = await rest.commitTable(["tpch"], "lineitem", replaceOnMain(CURRENT));
    expect(result).toMatchObject({ ok: false, kind: "unknown" });

    const reloaded = await rest.loadTable(["tpch"], "lineitem");
    expect(reloaded.metadata.currentSnapshotId).toBe(CURRENT);
    expect(reloaded.metadata.snapshots.some((s) => s.snapshotId === NEW)).toBe(false);
  });

  it("returns unknown when the catalog does not answer in time", async () => {
    await start();
    await registerLineitem();
    catalog.failNext({ delayMs: 10_000 });

    const started = Date.now();
    const result = await client({ timeoutMs: 300 }).commitTable(["tpch"], "lineitem", replaceOnMain(CURRENT));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ ok: false, kind: "unknown" });
    if (!result.ok) expect(result.message).toContain(`updateTable POST ${catalog.uri}/v1/warehouse1/`);
    if (!result.ok) expect(result.message).toContain("no answer within 300 ms");
  });

  it("throws, rather than returns, a commit to a table that does not exist", async () => {
    await start();
    catalog.tables.addNamespace(["tpch"]);
    await expect(client().commitTable(["tpch"], "orders", replaceOnMain(CURRENT))).rejects.toMatchObject({
      status: 404,
      type: "NoSuchTableException",
    });
  });
});

describe("the loopback catalog's contract check", () => {
  it("answers 500 and records the error when an answer would break the OpenAPI description", async () => {
    await start();
    const metadata = { ...(await lineitem()), "format-version": 9 };
    await catalog.tables.register(["tpch"], "future", { metadata });

    await expect(client().loadTable(["tpch"], "future")).rejects.toMatchObject({
      status: 500,
      type: "ResponseValidationError",
    });
    expect(catalog.validationErrors).toHaveLength(1);
    expect(catalog.validationErrors[0]).toContain("format-version");
    catalog.validationErrors.length = 0;
  });

  it("answers 400 and records the error when a commit request breaks the OpenAPI description", async () => {
    await start();
    await registerLineitem();
    const commit = {
      requirements: [],
      updates: [{ action: "upgrade-everything" }],
    } as unknown as TableCommit;

    await expect(client().commitTable(["tpch"], "lineitem", commit)).rejects.toMatchObject({
      status: 400,
      type: "BadRequestException",
    });
    expect(catalog.validationErrors).toHaveLength(1);
    expect(catalog.validationErrors[0]).toMatch(/^updateTable request: /);
    catalog.validationErrors.length = 0;
  });
});
