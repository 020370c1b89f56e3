/**
 * Tables onboarded through a catalog connection (`POST /api/v1/tables` with
 * `catalog_connection_id` and `catalog_table`): the 422s naming the field, the link on the table,
 * the `catalog` reference every job that reads the table carries (onboarding, crunch, scheduled
 * crunch) with its secret in no view and purged from the row at the job's end, routing to agents
 * allowed the catalog's endpoints as well as the location, vacuum refused for Iceberg through
 * Polaris and allowed for a Unity EXTERNAL Delta table, and a sync that no
 * longer reports the table stopping its schedules. Jobs are completed through the job service.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  adminJson,
  POLARIS,
  POLARIS_SECRET,
  rawRow,
  succeed,
  syncedTable,
  syncResult,
  WORKSPACE,
} from "./support/catalogs.ts";
import { FAKE_AGENT, RECIPE } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-05-01T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let polaris: string;
let workspace: string;

const LOCATION = "s3://lake/warehouse/tpch/lineitem";
const LINEITEM = "analytics.tpch.sf001.lineitem";
const ENDPOINTS = ["https://polaris.example.com:443", "https://auth.example.com:443"];
/** Allowed the tables' locations only. */
const STORAGE_AGENT = { ...FAKE_AGENT, id: "agt_storage_only", kinds: [...FAKE_AGENT.kinds, "optimize"] };
/** Allowed the locations and the Polaris endpoints. */
const LINKED_AGENT = { ...STORAGE_AGENT, id: "agt_storage_and_catalog", endpoints: ENDPOINTS };
const REF = {
  type: "iceberg_rest",
  uri: POLARIS.catalog_url,
  warehouse: "analytics",
  namespace: ["tpch", "sf001"],
  table: "lineitem",
  client_id: POLARIS.client_id,
  client_secret: POLARIS_SECRET,
  token_url: POLARIS.token_url,
  scope: POLARIS.scope,
};

/** A table of the two-level namespace `tpch.sf001`. */
const tpch = (name: string, extra: Parameters<typeof syncedTable>[1]) =>
  syncedTable(`analytics.tpch.sf001.${name}`, { schema: "tpch.sf001", name, ...extra });
const polarisTables = [
  tpch("lineitem", { format: "iceberg", table_type: "ICEBERG", location: LOCATION }),
  tpch("orders", { format: "iceberg", location: "s3://lake/warehouse/orders" }),
  tpch("legacy", { format: "delta" }),
];

async function connection(body: Record<string, unknown>, name: string) {
  // No scheduled sync while the suite moves the clock: each sync here is the test's.
  const res = await admin("POST", "/api/v1/catalog-connections", { name, sync_interval_hours: 720, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function syncWith(connectionId: string, tables: ReturnType<typeof syncedTable>[]) {
  const res = await admin("POST", `/api/v1/catalog-connections/${connectionId}/sync`);
  expect(res.status, res.text).toBe(202);
  await succeed(plane, res.body.id, syncResult(tables));
}

/** Offers queued jobs to `agent` until it gets `jobId` (handing back the others); then leases it. */
async function leaseAs(agent: typeof LINKED_AGENT, jobId: string): Promise<Job | undefined> {
  const { jobs } = plane.services;
  const others: Job[] = [];
  let job: Job | undefined;
  for (;;) {
    job = await jobs.offerNext(agent);
    if (!job || job.id === jobId) break;
    others.push(job);
  }
  for (const other of others) await jobs.reject(agent.id, other.id, other.fence);
  if (!job) return undefined;
  const acked = await jobs.ack(agent.id, job.id, job.fence);
  if (acked.kind !== "done") throw new Error(`ack refused: ${acked.kind}`);
  return acked.job;
}

async function complete(job: Job, result: Record<string, unknown> | null, error?: string) {
  const done = await plane.services.jobs.complete(
    job.leaseOwner ?? LINKED_AGENT.id,
    job.id,
    job.fence,
    error ? "failed" : "succeeded",
    error ? { error, retryable: false } : { result: result ?? {} },
  );
  expect(done.kind).toBe("done");
}

let seq = 0;
async function linkedTable(fullName = LINEITEM) {
  const res = await admin("POST", "/api/v1/tables", {
    name: `linked.${++seq}`,
    catalog_connection_id: polaris,
    catalog_table: fullName,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; onboarding_job_id: string; [k: string]: unknown };
}

/** A linked table whose onboarding succeeded through the linked agent. */
async function onboardedLinked(fullName = LINEITEM) {
  const table = await linkedTable(fullName);
  const job = await leaseAs(LINKED_AGENT, table.onboarding_job_id);
  if (!job) throw new Error("onboarding not offered");
  await complete(job, RECIPE as unknown as Record<string, unknown>);
  return table;
}

async function expectNoSecret(jobId: string) {
  const views = [
    await admin("GET", `/api/v1/jobs/${jobId}`),
    await admin("GET", "/api/v1/jobs?limit=1000"),
    await admin("GET", "/api/v1/crunch?limit=1000"),
  ];
  for (const v of views) expect(v.text).not.toContain(POLARIS_SECRET);
}

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  polaris = await connection(POLARIS, "polaris");
  workspace = await connection(WORKSPACE, "unity");
  await syncWith(polaris, polarisTables);
  await syncWith(workspace, [
    syncedTable("main.sales.orders", { format: "iceberg" }),
    syncedTable("main.sales.managed"),
    syncedTable("main.sales.events", { table_type: "EXTERNAL", location: "s3://lake/unity/events" }),
  ]);
});
afterAll(() => plane.close());

describe("POST /api/v1/tables through a catalog connection", () => {
  const post = (body: Record<string, unknown>) =>
    admin("POST", "/api/v1/tables", { name: `refused.${++seq}`, ...body });
  const expect422 = async (body: Record<string, unknown>, field: string, message: RegExp) => {
    const res = await post(body);
    expect(res.status, res.text).toBe(422);
    expect(res.text).toContain(field);
    expect(res.text).toMatch(message);
  };

  it("answers 422 naming the field for an unknown connection, a missing half, a workspace table that is not external Delta, an unknown or non-Iceberg synced table", async () => {
    await expect422(
      { catalog_connection_id: "con_nope", catalog_table: LINEITEM },
      "catalog_connection_id",
      /no catalog connection/,
    );
    await expect422({ catalog_connection_id: polaris }, "catalog_table", /required/);
    await expect422({ catalog_table: LINEITEM }, "catalog_connection_id", /required/);
    await expect422({}, "uri", /required/);
    await expect422(
      { catalog_connection_id: workspace, catalog_table: "main.sales.orders" },
      "catalog_table",
      /workspace connection are onboarded when they are Delta tables/,
    );
    await expect422(
      { catalog_connection_id: workspace, catalog_table: "main.sales.managed" },
      "catalog_table",
      /MANAGED table: its storage is Unity's own.*only EXTERNAL tables/,
    );
    await expect422(
      { catalog_connection_id: polaris, catalog_table: "analytics.tpch.sf001.nope" },
      "catalog_table",
      /no synced table/,
    );
    await expect422(
      { catalog_connection_id: polaris, catalog_table: "analytics.tpch.sf001.legacy" },
      "catalog_table",
      /delta table/,
    );
  });

  it("onboards a workspace's external Delta table as a Delta table whose jobs carry no catalog reference", async () => {
    const res = await admin("POST", "/api/v1/tables", {
      name: `unity.events.${++seq}`,
      catalog_connection_id: workspace,
      catalog_table: "main.sales.events",
    });
    expect(res.status, res.text).toBe(201);
    const table = JSON.parse(res.text);
    expect(table).toMatchObject({
      format: "delta",
      uri: "s3://lake/unity/events",
      catalog_table: "main.sales.events",
    });
    const job = await plane.services.jobs.get(table.onboarding_job_id);
    expect(job?.payload).not.toHaveProperty("catalog");
  });

  it("answers 422 when a given uri or format differs from the synced table's", async () => {
    const link = { catalog_connection_id: polaris, catalog_table: LINEITEM };
    await expect422({ ...link, uri: "s3://lake/elsewhere" }, "uri", /differs from the location/);
    await expect422({ ...link, format: "delta" }, "format", /iceberg table/);
    const same = await post({ ...link, uri: LOCATION, format: "iceberg" });
    expect(same.status, same.text).toBe(201);
  });

  it("stores the link, takes the synced table's location as uri and iceberg as format; plain tables show nulls", async () => {
    const table = await linkedTable();
    expect(table).toMatchObject({
      uri: LOCATION,
      format: "iceberg",
      catalog_connection_id: polaris,
      catalog_table: LINEITEM,
      catalog_table_deleted: false,
      onboarding_status: "pending",
    });
    expect((await admin("GET", `/api/v1/tables/${table.id}`)).body).toMatchObject({
      catalog_connection_id: polaris,
      catalog_table: LINEITEM,
    });
    const plain = await admin("POST", "/api/v1/tables", { name: `plain.${++seq}`, uri: "s3://lake/plain" });
    expect(plain.body).toMatchObject({
      format: "delta",
      catalog_connection_id: null,
      catalog_table: null,
      catalog_table_deleted: false,
    });
  });
});

describe("the jobs of a linked table", () => {
  it("onboarding carries the catalog reference, goes only to an agent allowed the catalog's endpoints, and its end purges the secret", async () => {
    const table = await linkedTable();
    const job = await plane.services.jobs.get(table.onboarding_job_id);
    expect(job?.payload).toEqual({ table_id: table.id, uri: LOCATION, format: "iceberg", catalog: REF });
    expect(job).toMatchObject({ locations: ["s3://lake/warehouse/tpch/lineitem/"], endpoints: ENDPOINTS });
    await expectNoSecret(table.onboarding_job_id);
    expect((await admin("GET", `/api/v1/onboarding/${table.id}/status`)).text).not.toContain(POLARIS_SECRET);

    expect(await leaseAs(STORAGE_AGENT, table.onboarding_job_id)).toBeUndefined();
    const leased = await leaseAs(LINKED_AGENT, table.onboarding_job_id);
    expect(leased?.payload.catalog).toEqual(REF);
    await complete(leased as Job, RECIPE as unknown as Record<string, unknown>);
    const raw = await rawRow(plane, "jobs", table.onboarding_job_id);
    expect(raw).not.toContain(POLARIS_SECRET);
    expect(raw).toContain(POLARIS.client_id);
    expect((await admin("GET", `/api/v1/tables/${table.id}`)).body.onboarding_status).toBe("active");
  });

  it("a manual crunch carries the reference, hidden from every view and purged at its end", async () => {
    const table = await onboardedLinked();
    const res = await admin("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
    expect(res.status, res.text).toBe(202);
    expect(res.text).not.toContain(POLARIS_SECRET);
    const job = await plane.services.jobs.get(res.body.id);
    expect(job?.payload.catalog).toEqual(REF);
    expect(job?.endpoints).toEqual(ENDPOINTS);
    await expectNoSecret(res.body.id);
    expect((await admin("GET", `/api/v1/crunch/${res.body.id}`)).text).not.toContain(POLARIS_SECRET);
    expect(await leaseAs(STORAGE_AGENT, res.body.id)).toBeUndefined();
    const leased = await leaseAs(LINKED_AGENT, res.body.id);
    await complete(leased as Job, null, "the catalog refused the commit");
    expect(await rawRow(plane, "jobs", res.body.id)).not.toContain(POLARIS_SECRET);
  });

  it("refuses vacuum of a Polaris Iceberg table (409, trigger and schedule) and partition expiration (422)", async () => {
    const table = await onboardedLinked();
    const vacuum = await admin("POST", `/api/v1/tables/${table.id}/vacuum`, {});
    expect(vacuum.status, vacuum.text).toBe(409);
    expect(vacuum.text).toContain(
      "its snapshots expire through its catalog, which is not supported yet; a catalog-linked Delta table can be vacuumed",
    );
    const schedule = await admin("POST", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`, {
      schedule_type: "daily",
      lookback_start: 3,
      lookback_end: 1,
      run_time_utc: "03:00",
    });
    expect(schedule.status, schedule.text).toBe(409);
    expect(schedule.text).toContain("expire through its catalog");
    const expiration = await admin("POST", `/api/v1/tables/${table.id}/partition-expiration`, {});
    expect(expiration.status, expiration.text).toBe(422);
  });

  it("vacuums a Unity EXTERNAL Delta table like one registered by URI: no catalog reference, no catalog endpoint", async () => {
    const created = await admin("POST", "/api/v1/tables", {
      name: `unity.${++seq}`,
      catalog_connection_id: workspace,
      catalog_table: "main.sales.events",
    });
    expect(created.status, created.text).toBe(201);
    const vacuum = await admin("POST", `/api/v1/tables/${created.body.id}/vacuum`, { retention_hours: 200 });
    expect(vacuum.status, vacuum.text).toBe(202);
    const job = await plane.services.jobs.get(vacuum.body.id);
    expect(job?.payload).toMatchObject({
      uri: "s3://lake/unity/events",
      format: "delta",
      retention_hours: 200,
    });
    expect(job?.payload.catalog).toBeUndefined();
    expect(job?.endpoints).toEqual([]);
  });
});

describe("scheduled crunches of a linked table, and a sync that no longer reports it", () => {
  it("releases the scheduled crunch with the reference and the catalog's endpoints; a dropped table's schedules stop, a returned one is unflagged", async () => {
    const table = await onboardedLinked("analytics.tpch.sf001.orders");
    const created = await admin("POST", `/api/v1/tables/${table.id}/schedule?job_type=crunch`, {
      schedule_type: "daily",
      lookback_start: 3,
      lookback_end: 1,
      run_time_utc: "11:00",
    });
    expect(created.status, created.text).toBe(201);

    clock.set(new Date("2026-05-01T11:00:00Z"));
    const ticked = await plane.services.scheduler.tick();
    expect(ticked).toMatchObject({ fired: 1, linked: { released: 1, cancelled: 0 } });
    const { items } = await plane.services.jobs.list({ tableId: table.id, kinds: ["crunch"] }, 0, 10);
    const job = items[0] as Job;
    expect(job.payload).toMatchObject({
      table_id: table.id,
      uri: "s3://lake/warehouse/orders",
      date_range: { start: "2026-04-28", end: "2026-04-30" },
      catalog: { ...REF, table: "orders" },
    });
    expect(job.endpoints).toEqual(ENDPOINTS);
    expect(job.notBefore.getTime()).toBe(clock.now().getTime());
    await expectNoSecret(job.id);
    expect(await leaseAs(STORAGE_AGENT, job.id)).toBeUndefined();
    const leased = await leaseAs(LINKED_AGENT, job.id);
    await complete(leased as Job, null, "stopped by the test");
    expect(await rawRow(plane, "jobs", job.id)).not.toContain(POLARIS_SECRET);

    // The catalog drops `orders`: the sync marks it, the table stays, its schedule is disabled.
    await syncWith(
      polaris,
      polarisTables.filter((t) => t.name !== "orders"),
    );
    const dropped = (await admin("GET", `/api/v1/tables/${table.id}`)).body;
    expect(dropped).toMatchObject({
      catalog_table_deleted: true,
      catalog_table: "analytics.tpch.sf001.orders",
    });
    expect(dropped.schedule.crunch).toMatchObject({ enabled: false });
    clock.set(new Date("2026-05-02T11:00:00Z"));
    expect((await plane.services.scheduler.tick()).fired).toBe(0);
    const crunch = await admin("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
    expect(crunch.status, crunch.text).toBe(409);
    expect(crunch.text).toContain("no longer reported");

    // It comes back: the flag clears; the schedule stays as the sync left it.
    await syncWith(polaris, polarisTables);
    const back = (await admin("GET", `/api/v1/tables/${table.id}`)).body;
    expect(back).toMatchObject({ catalog_table_deleted: false });
    expect(back.schedule.crunch).toMatchObject({ enabled: false });
  });

  it("deleting the connection keeps its onboarded tables, flagged as dropped, their schedules stopped", async () => {
    const doomed = await connection(POLARIS, `doomed-${++seq}`);
    await syncWith(doomed, polarisTables);
    const res = await admin("POST", "/api/v1/tables", {
      name: `doomed.${++seq}`,
      catalog_connection_id: doomed,
      catalog_table: LINEITEM,
    });
    expect(res.status, res.text).toBe(201);
    const table = res.body as { id: string; onboarding_job_id: string };
    const onboarding = await leaseAs(LINKED_AGENT, table.onboarding_job_id);
    await complete(onboarding as Job, RECIPE as unknown as Record<string, unknown>);
    const schedule = await admin("POST", `/api/v1/tables/${table.id}/schedule?job_type=crunch`, {
      schedule_type: "daily",
      lookback_start: 3,
      lookback_end: 1,
      run_time_utc: "12:00",
    });
    expect(schedule.status, schedule.text).toBe(201);

    expect((await admin("DELETE", `/api/v1/catalog-connections/${doomed}?confirm=true`)).status).toBe(204);
    const kept = (await admin("GET", `/api/v1/tables/${table.id}`)).body;
    expect(kept).toMatchObject({ catalog_table_deleted: true, catalog_connection_id: doomed });
    expect(kept.schedule.crunch).toMatchObject({ enabled: false });
    const crunch = await admin("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
    expect(crunch.status, crunch.text).toBe(409);
    expect(crunch.text).toContain("deleted catalog connection");
  });

  it("a plain table's scheduled crunch is not held and carries no reference", async () => {
    const res = await admin("POST", "/api/v1/tables", {
      name: `plain.sched.${++seq}`,
      uri: "s3://lake/plain2",
    });
    const id = res.body.id as string;
    const job = await leaseAs(STORAGE_AGENT, res.body.onboarding_job_id);
    await complete(job as Job, RECIPE as unknown as Record<string, unknown>);
    await admin("POST", `/api/v1/tables/${id}/schedule?job_type=crunch`, {
      schedule_type: "daily",
      lookback_start: 3,
      lookback_end: 1,
      run_time_utc: "12:00",
    });
    clock.set(new Date("2026-05-02T12:00:00Z"));
    expect(await plane.services.scheduler.tick()).toMatchObject({ fired: 1, linked: { released: 0 } });
    const { items } = await plane.services.jobs.list({ tableId: id, kinds: ["crunch"] }, 0, 10);
    expect(items[0]?.payload.catalog).toBeUndefined();
    expect(items[0]?.notBefore.getTime()).toBe(clock.now().getTime());
  });
});
