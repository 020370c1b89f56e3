import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  CatalogSyncResultSchema,
  type CatalogTestResult,
  CatalogTestResultSchema,
  SYNC_PART_TABLES,
} from "@lakesmith/shared/catalogs";
import type { JobOffer } from "@lakesmith/shared/protocol";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AllowList } from "../src/allow.ts";
import { catalogHandlers } from "../src/handlers/catalogs.ts";
import { parseJson } from "../src/iceberg/json.ts";
import { HandlerRegistry } from "../src/registry.ts";
import { runJob } from "../src/runner.ts";
import { ICEBERG_FIXTURES } from "./support/iceberg.ts";
import { jobContext } from "./support/maintenance.ts";
import { type RestCatalogServer, startRestCatalog } from "./support/rest-catalog.ts";
import { SyncPlaneStub } from "./support/sync-plane.ts";

const LINEITEM = join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/metadata/v2.metadata.json");
/** The fixture's current snapshot (the overwrite) states this `total-files-size`. */
const LINEITEM_BYTES = 1_225_526;
const SECRET = "polaris-s3cret-4b1d-never-printed";

let catalog: RestCatalogServer;
let scratch: string;

const registry = () =>
  new HandlerRegistry(catalogHandlers({ allow: [], memory_limit_mb: 256, s3_force_path_style: false }));

function connection(overrides: Record<string, unknown> = {}) {
  return {
    type: "polaris",
    catalog_url: catalog.uri,
    warehouse: "lake",
    client_id: "agent",
    client_secret: SECRET,
    ...overrides,
  };
}

/** Runs `kind` through its registered handler with a parsed payload, as the runner would. */
async function run(
  kind: string,
  payload: Record<string, unknown>,
  plane = new SyncPlaneStub(),
): Promise<Record<string, unknown>> {
  const handler = registry().get(kind);
  if (!handler) throw new Error(`no ${kind} handler`);
  const ctx = jobContext(scratch, kind, handler.payload.parse(payload), { part: plane.part });
  return (await handler.run(ctx)) ?? {};
}

async function test(overrides: Record<string, unknown> = {}): Promise<CatalogTestResult> {
  return CatalogTestResultSchema.parse(await run(CATALOG_TEST_KIND, { connection: connection(overrides) }));
}

/** A sync's result with the tables its parts carried. */
async function sync(payload: Record<string, unknown> = {}) {
  const plane = new SyncPlaneStub();
  const result = await run(
    CATALOG_SYNC_KIND,
    { connection_id: "conn_1", connection: connection(), min_size_bytes: 0, ...payload },
    plane,
  );
  return plane.view(CatalogSyncResultSchema.parse(result));
}

/** Metadata of a small table: one snapshot stating `bytes` (none: no snapshot), optionally bucketed. */
function tinyMetadata(name: string, options: { bytes?: number; partitioned?: boolean; updatedMs: number }) {
  const snapshotId = 1000 + options.updatedMs;
  const withSnapshot = options.bytes !== undefined;
  return {
    "format-version": 2,
    "table-uuid": `00000000-0000-4000-8000-${String(options.updatedMs).padStart(12, "0")}`,
    location: `file:///lake/${name}`,
    "last-sequence-number": withSnapshot ? 1 : 0,
    "last-updated-ms": options.updatedMs,
    "last-column-id": 1,
    schemas: [
      { type: "struct", "schema-id": 0, fields: [{ id: 1, name: "id", required: false, type: "long" }] },
    ],
    "current-schema-id": 0,
    "partition-specs": [
      {
        "spec-id": 0,
        fields: options.partitioned
          ? [{ "source-id": 1, "field-id": 1000, name: "id_bucket", transform: "bucket[4]" }]
          : [],
      },
    ],
    "default-spec-id": 0,
    "last-partition-id": options.partitioned ? 1000 : 999,
    "sort-orders": [{ "order-id": 0, fields: [] }],
    "default-sort-order-id": 0,
    properties: { owner: "test" },
    ...(withSnapshot
      ? {
          "current-snapshot-id": snapshotId,
          snapshots: [
            {
              "snapshot-id": snapshotId,
              "sequence-number": 1,
              "timestamp-ms": options.updatedMs,
              "manifest-list": `file:///lake/${name}/metadata/snap-${snapshotId}.avro`,
              summary: { operation: "append", "total-files-size": String(options.bytes) },
              "schema-id": 0,
            },
          ],
          refs: { main: { "snapshot-id": snapshotId, type: "branch" } },
        }
      : { "current-snapshot-id": -1, snapshots: [], refs: {} }),
  };
}

/** `n` more tiny tables in namespace `bulk`. */
async function bulk(n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    await catalog.tables.register(["bulk"], `t${i}`, {
      metadata: tinyMetadata(`t${i}`, { bytes: 10, updatedMs: i + 1 }),
    });
}

/**
 * The catalog `lake`: `tpch.lineitem` (the fixture), and under `sales` three levels of tiny
 * tables, one without a snapshot; `empty` has no tables.
 */
async function populate(): Promise<void> {
  const lineitem = parseJson(await readFile(LINEITEM, "utf8")) as Record<string, unknown>;
  await catalog.tables.register(["tpch"], "lineitem", {
    metadata: lineitem,
    folder: join(scratch, "lineitem"),
  });
  const tiny = (ns: string[], name: string, options: Parameters<typeof tinyMetadata>[1]) =>
    catalog.tables.register(ns, name, { metadata: tinyMetadata(name, options) });
  await tiny(["sales"], "customers", { bytes: 10, updatedMs: 1_767_225_600_001 });
  await tiny(["sales", "eu"], "orders", { bytes: 4096, partitioned: true, updatedMs: 1_767_225_600_002 });
  await tiny(["sales", "eu"], "returns", { updatedMs: 1_767_225_600_003 });
  await tiny(["sales", "eu", "archive"], "orders_2019", { bytes: 2048, updatedMs: 1_767_225_600_004 });
  catalog.tables.addNamespace(["empty"]);
}

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "catalogs-polaris-"));
  catalog = await startRestCatalog({
    clients: { agent: SECRET },
    prefix: "lake",
    warehouse: "lake",
    pageSize: 2,
    emptyPages: true,
  });
  await populate();
});

afterEach(async () => {
  const errors = [...catalog.validationErrors];
  await catalog.close();
  await rm(scratch, { recursive: true, force: true });
  expect(errors, "every answer the catalog sent must match the OpenAPI description").toEqual([]);
});

describe("catalog_test on a Polaris catalog", () => {
  it("answers ok with the connection's warehouse as the one catalog", async () => {
    expect(await test()).toMatchObject({ ok: true, catalogs: ["lake"], message: null });
  });

  it("names the catalog `default` when neither the connection nor the config names a warehouse", async () => {
    expect(await test({ warehouse: undefined })).toMatchObject({ ok: true, catalogs: ["default"] });
  });

  it("answers not ok with the catalog's own message for a wrong secret, and never the secret", async () => {
    const result = await test({ client_secret: "wrong-secret-a7" });
    expect(result.ok).toBe(false);
    expect(result.catalogs).toEqual([]);
    expect(result.message).toContain("invalid_client: unknown client or wrong secret");
    expect(JSON.stringify(result)).not.toContain("wrong-secret-a7");
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it("answers not ok, saying there was no answer, when the catalog can't be reached", async () => {
    const uri = catalog.uri;
    await catalog.close();
    const result = await test({ catalog_url: uri });
    catalog = await startRestCatalog();
    expect(result).toMatchObject({ ok: false, catalogs: [] });
    expect(result.message).toMatch(/getToken POST .* no answer/);
  });
});

describe("catalog_sync on a Polaris catalog", () => {
  it("walks multi-level namespaces breadth first and reports every table with its facts", async () => {
    const result = await sync();
    expect(result.mode).toBe("full");
    expect(result.catalogs).toEqual(["lake"]);
    expect(result.schemas_count).toBe(5);
    // Breadth first: each namespace's tables are loaded before the next namespace's.
    expect([...new Set(result.tables.map((t) => t.schema))]).toEqual([
      "tpch",
      "sales",
      "sales.eu",
      "sales.eu.archive",
    ]);
    expect(result.tables.map((t) => t.full_name).sort()).toEqual([
      "lake.sales.customers",
      "lake.sales.eu.archive.orders_2019",
      "lake.sales.eu.orders",
      "lake.sales.eu.returns",
      "lake.tpch.lineitem",
    ]);
    const lineitem = result.tables.find((t) => t.name === "lineitem");
    expect(lineitem).toMatchObject({
      catalog: "lake",
      schema: "tpch",
      format: "iceberg",
      table_type: "ICEBERG",
      location: "./lineitem_iceberg",
      size_bytes: LINEITEM_BYTES,
      has_partitions: false,
      updated_at: 1_746_188_480_005,
      detail: {
        metadata_location: expect.stringMatching(
          /^file:\/\/.*\/lineitem\/metadata\/00000-.*\.metadata\.json$/,
        ),
        current_snapshot: {
          snapshot_id: "2354745328521181395",
          summary: expect.objectContaining({ "total-files-size": String(LINEITEM_BYTES) }),
        },
        schema: expect.objectContaining({ "schema-id": 0, type: "struct" }),
        partition_spec: { "spec-id": 0, fields: [] },
      },
    });
    expect(lineitem?.detail).not.toHaveProperty("snapshots");
    expect(result.tables.find((t) => t.name === "orders")).toMatchObject({
      schema: "sales.eu",
      size_bytes: 4096,
      has_partitions: true,
    });
    expect(result.tables.find((t) => t.name === "returns")).toMatchObject({
      size_bytes: null,
      detail: { current_snapshot: null },
    });
    expect(result.below_min_size).toBe(0);
  });

  it("leaves out tables below the size threshold, counting them, and keeps tables of unknown size", async () => {
    const result = await sync({ min_size_bytes: 3000 });
    expect(result.tables.map((t) => t.name).sort()).toEqual(["lineitem", "orders", "returns"]);
    expect(result.below_min_size).toBe(2);
  });

  it("syncs only the catalog asked for", async () => {
    expect((await sync({ catalog: "lake" })).tables).toHaveLength(5);
    const other = await sync({ catalog: "other" });
    expect(other).toMatchObject({ catalogs: [], schemas_count: 0, tables: [], below_min_size: 0 });
  });

  it("reads every table in incremental mode: its listing has no updated_at to compare", async () => {
    const result = await sync({ mode: "incremental" });
    expect(result).toMatchObject({ mode: "incremental", tables_count: 5, unchanged_count: 0, unchanged: [] });
  });

  it("sends a large catalog's tables in parts within the bounds, answering counts only", async () => {
    await bulk(1500);
    const plane = new SyncPlaneStub();
    const result = CatalogSyncResultSchema.parse(
      await run(
        CATALOG_SYNC_KIND,
        { connection_id: "c", connection: connection(), min_size_bytes: 0 },
        plane,
      ),
    );
    expect(result.tables_count).toBe(1505);
    expect(JSON.stringify(result).length).toBeLessThan(1000);
    expect(new Set(plane.tables.map((t) => t.full_name)).size).toBe(1505);
    expect(plane.parts.length).toBeGreaterThan(2);
    expect(plane.parts.every((p) => p.tables.length <= SYNC_PART_TABLES)).toBe(true);
  });

  it("stops the walk when the plane refuses a part, and sends nothing more", async () => {
    let calls = 0;
    const refusing = new SyncPlaneStub();
    const part = async (raw: Record<string, unknown>) => {
      calls++;
      if (calls === 1) throw new Error("job stopped: refused");
      return refusing.part(raw);
    };
    await bulk(1500);
    const handler = registry().get(CATALOG_SYNC_KIND);
    const payload = handler?.payload.parse({
      connection_id: "c",
      connection: connection(),
      min_size_bytes: 0,
    });
    const ctx = jobContext(scratch, CATALOG_SYNC_KIND, payload, { part });
    await expect(handler?.run(ctx)).rejects.toThrow("job stopped: refused");
    expect(calls).toBe(1);
  });

  it("fails for good with the catalog's message when the credentials are refused", async () => {
    const handler = registry().get(CATALOG_SYNC_KIND);
    const payload = handler?.payload.parse({
      connection_id: "conn_1",
      connection: connection({ client_secret: "nope-9" }),
      min_size_bytes: 0,
    });
    const failure = handler?.run(jobContext(scratch, CATALOG_SYNC_KIND, payload));
    await expect(failure).rejects.toMatchObject({
      name: "JobError",
      retryable: false,
      message: expect.stringContaining("unknown client or wrong secret"),
    });
    await expect(failure).rejects.not.toMatchObject({ message: expect.stringContaining("nope-9") });
  });
});

describe("catalog jobs through the runner", () => {
  const offer = (kind: string, payload: Record<string, unknown>): JobOffer => ({
    id: "job_00000000000000000001",
    kind,
    fence: 1,
    attempt: 1,
    priority: "P2",
    table_id: null,
    payload,
  });
  const runner = (endpoints: string[]) => ({
    registry: registry(),
    allow: new AllowList([], endpoints),
    scratchRoot: scratch,
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    progress: () => {},
    part: () => Promise.reject(new Error("no parts in these runs")),
  });

  it("refuses a catalog the agent's allowed endpoints do not cover, before any request", async () => {
    const outcome = await runJob(offer(CATALOG_TEST_KIND, { connection: connection() }), runner([]));
    expect(outcome).toMatchObject({ outcome: "failed", retryable: false });
    expect(catalog.calls).toEqual([]);
  });

  it("refuses a token URL the allowed endpoints do not cover: the secret would be sent there", async () => {
    const job = offer(CATALOG_TEST_KIND, {
      connection: connection({ token_url: "https://auth.example.com/oauth/token" }),
    });
    const outcome = await runJob(job, runner([catalog.uri]));
    expect(outcome).toMatchObject({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining(
        "endpoint 'https://auth.example.com/oauth/token' is not one this agent may reach",
      ),
    });
    expect(catalog.calls).toEqual([]);
  });

  it("runs a test of an allowed catalog", async () => {
    const outcome = await runJob(
      offer(CATALOG_TEST_KIND, { connection: connection() }),
      runner([catalog.uri]),
    );
    expect(outcome).toMatchObject({ outcome: "succeeded", result: { ok: true, catalogs: ["lake"] } });
  });
});
