/**
 * A Hive Metastore catalog connection end to end, through the public API and a `lakesmith-agent`
 * child process allowed the metastore's endpoint: a loopback metastore (a real Thrift server from
 * the metastore IDL) behind SASL PLAIN. Test with a good and a wrong password, create, sync with
 * the size threshold and a changed one, browse, a table dropped from the metastore, delete; the
 * password appears in no response, no job row after its job, no database column in plain text.
 */
import { mkdtempSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HiveMetastoreServer } from "../agent/test/support/hive-metastore.ts";
import type { ChildAgent } from "./support/agents.ts";
import { expectConfirmedDelete, expectSecretNowhere } from "./support/catalog-connections.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "hive-catalog-e2e-"));
const PASSWORD = "hms-e2e-pa55-6d0b";
const MB = 1024 * 1024;
let metastore: HiveMetastoreServer;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

beforeAll(async () => {
  metastore = await HiveMetastoreServer.start({ sasl: { username: "lakesmith", password: PASSWORD } });
  metastore.registerParquetTable(
    {
      db: "sales",
      name: "orders",
      location: "s3://lake/sales/orders",
      partitionKeys: [{ name: "day", type: "string" }],
    },
    [
      { values: ["2026-01-01"], totalSize: 100 * MB },
      { values: ["2026-01-02"], totalSize: 150 * MB },
    ],
  );
  metastore.registerParquetTable({
    db: "sales",
    name: "events",
    location: "s3://lake/events",
    totalSize: 2048 * MB,
  });
  metastore.registerParquetTable({ db: "sales", name: "tiny", location: "s3://lake/tiny", totalSize: MB });
  const raw = join(root, "raw");
  await mkdir(raw, { recursive: true });
  await writeFile(join(raw, "part-0.csv"), "x".repeat(500));
  metastore.registerTextTable({ db: "staging", name: "raw", location: pathToFileURL(raw).href });
});
afterAll(async () => {
  await metastore?.stop();
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

const hive = (password: string) => ({
  type: "hive_metastore",
  metastore_uri: metastore.uri,
  username: "lakesmith",
  password,
});

const names = (page: { items: { full_name: string }[] }) => page.items.map((t) => t.full_name);

describe("a Hive Metastore connection end to end", () => {
  it("tests, creates, syncs with the size threshold and browses a metastore; a dropped table is marked; the password never shows", async () => {
    plane = await startPlane();
    await connectedChildAgent(
      plane,
      "hive-catalog-agent",
      { LAKESMITH_AGENT_ALLOW: pathToFileURL(root).href, LAKESMITH_AGENT_ALLOW_ENDPOINTS: metastore.uri },
      children,
    );
    const sync = async (id: string) => {
      const queued = await plane?.api("POST", `/api/v1/catalog-connections/${id}/sync`);
      expect(queued?.status, JSON.stringify(queued?.body)).toBe(202);
      const job = await plane?.waitForJob(
        queued?.body.id ?? queued?.body.job_id,
        ["succeeded", "failed"],
        60_000,
      );
      expect(job?.status, job?.error ?? "").toBe("succeeded");
      return queued?.body.id ?? queued?.body.job_id;
    };

    const bad = await plane.api("POST", "/api/v1/catalog-connections/test", hive("wrong-password"));
    expect(bad.status, JSON.stringify(bad.body)).toBe(200);
    expect(bad.body).toMatchObject({
      ok: false,
      catalogs: [],
      message: `Hive Metastore ${metastore.uri} refused the SASL PLAIN login of user 'lakesmith': Error validating the login`,
    });
    const good = await plane.api("POST", "/api/v1/catalog-connections/test", hive(PASSWORD));
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(good.body).toMatchObject({ ok: true, catalogs: ["hive"], message: null });

    const created = await plane.api("POST", "/api/v1/catalog-connections", {
      name: "hms-prod",
      ...hive(PASSWORD),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ type: "hive_metastore", has_password: true, username: "lakesmith" });
    const id = created.body.id as string;

    // The default threshold (0.1 GB) keeps the two large tables only.
    const first = await sync(id);
    const connection = (await plane.api("GET", `/api/v1/catalog-connections/${id}`)).body;
    expect(connection).toMatchObject({ sync_status: "completed" });
    const large = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables?sort_by=size_bytes`))
      .body;
    expect(names(large)).toEqual(["hive.sales.orders", "hive.sales.events"]);
    expect(large.items[0]).toMatchObject({
      catalog: "hive",
      schema: "sales",
      format: "parquet",
      table_type: "EXTERNAL_TABLE",
      location: "s3://lake/sales/orders",
      size_bytes: 250 * MB,
      has_partitions: true,
    });

    // A lower threshold applies at the next sync: the small tables arrive, sized by statistics or listing.
    const setting = await plane.api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 });
    expect(setting.status, JSON.stringify(setting.body)).toBe(200);
    await sync(id);
    const all = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables?sort_by=full_name`)).body;
    expect(names(all)).toEqual([
      "hive.sales.events",
      "hive.sales.orders",
      "hive.sales.tiny",
      "hive.staging.raw",
    ]);
    expect(all.items[3]).toMatchObject({ format: "text", size_bytes: 500 });

    const catalogs = (await plane.api("GET", `/api/v1/catalog-connections/${id}/catalogs`)).body;
    expect(JSON.stringify(catalogs)).toContain('"hive"');
    const schemas = (await plane.api("GET", `/api/v1/catalog-connections/${id}/catalogs/hive/schemas`)).body;
    expect(JSON.stringify(schemas)).toContain("staging");
    const parquet = (
      await plane.api("GET", `/api/v1/catalog-connections/${id}/tables?format=parquet&has_partitions=true`)
    ).body;
    expect(names(parquet)).toEqual(["hive.sales.orders"]);
    const detail = await plane.api("GET", `/api/v1/catalog-connections/${id}/tables/hive.sales.orders`);
    expect(detail.status).toBe(200);
    expect(detail.body.detail).toMatchObject({
      transactional: false,
      partition_keys: [{ name: "day", type: "string" }],
      size_source: "partition_statistics",
    });

    // The metastore drops a table; the next full sync marks it, and browsing no longer lists it.
    metastore.dropTable("sales", "tiny");
    await sync(id);
    const after = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables`)).body;
    expect(names(after)).not.toContain("hive.sales.tiny");
    const deleted = (await plane.api("GET", `/api/v1/catalog-connections/${id}/tables?include_deleted=true`))
      .body;
    expect(
      deleted.items.find((t: { full_name: string }) => t.full_name === "hive.sales.tiny")?.deleted_at,
    ).not.toBeNull();

    // The password: in no answer, no job row once the job ended, no column of the database in plain text.
    const answers = [
      bad.body,
      good.body,
      created.body,
      connection,
      all,
      detail.body,
      (await plane.api("GET", "/api/v1/catalog-connections")).body,
      (await plane.api("GET", `/api/v1/jobs/${first}`)).body,
    ];
    await expectSecretNowhere(plane, PASSWORD, answers, ["catalog_connections", "jobs", "catalog_tables"]);

    await expectConfirmedDelete(plane, id);
  });
});
