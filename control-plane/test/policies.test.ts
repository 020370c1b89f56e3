/**
 * Document 2's policies and managed tables over a synced Unity catalog, with a manual clock: a
 * catalog policy manages every table, a prefix policy overrides it, a table policy overrides both,
 * disabling keeps tables managed, deleting the last policy unmanages, the engine onboards qualifying
 * tables and queues their runs (trigger policy) at the policy's time, once, and the emergency stop
 * halts new runs.
 */
import { ManualClock } from "@lakesmith/shared";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId, tableId } from "../src/catalogs/ids.ts";
import { jobs, lakeTables } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson, lease, succeed, syncedTable, syncResult, WORKSPACE } from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let unity: string;
let main: string;
const DAY = 86_400_000;
/** An agent that inspects tables in the lake bucket. */
const INSPECTOR = {
  id: "agt_inspector",
  kinds: ["onboarding"],
  capabilities: ["s3"],
  allow: ["s3://lake"],
  endpoints: [],
};

const table = (namespace: string, name: string, extra = {}) =>
  syncedTable(`main.${namespace}.${name}`, {
    schema: namespace,
    name,
    table_type: "EXTERNAL",
    format: "delta",
    location: `s3://lake/${namespace}/${name}`,
    ...extra,
  });

const TABLES = [
  table("sales", "orders", { has_partitions: true }),
  table("sales.eu", "orders"),
  table("sales.eu", "refunds"),
  table("hr", "people"),
  table("hr", "tiny", { size_bytes: 1_000 }),
  table("ice", "events", { format: "iceberg" }),
];
const id = (namespace: string, name: string) =>
  tableId({ connectionId: unity, catalog: "main" }, `main.${namespace}.${name}`);

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  unity = (await admin("POST", "/api/v1/catalog-connections", { name: "unity", ...WORKSPACE })).body.id;
  const sync = (await admin("POST", `/api/v1/catalog-connections/${unity}/sync`)).body.id;
  await succeed(plane, sync, syncResult(TABLES));
  main = catalogId({ connectionId: unity, catalog: "main" });
});
afterAll(() => plane.close());

const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const res = await admin(method, path, body);
  expect(res.status, res.text).toBe(status);
  return res.body;
};
const managed = async () =>
  (await ok("GET", "/api/v1/managedtables?page_size=100")).items as {
    full_name: string;
    state: string;
    effective_policy_id: string | null;
    waiting_reason: string | null;
  }[];

const COMPACT_DAILY = { actions: { compact: {} }, schedule: { frequency: "daily", time_utc: "03:00" } };

describe("policies and managed tables", () => {
  let catalogPolicy: string;
  let prefixPolicy: string;
  let tablePolicy: string;

  it("manages every table of the catalog under a catalog policy; a second POST replaces it", async () => {
    expect(await managed()).toEqual([]);
    const created = await ok("POST", `/api/v1/catalogs/${main}/policies`, COMPACT_DAILY, 201);
    catalogPolicy = created.policy_id;
    expect(created).toMatchObject({ scope: "catalog", prefix: null, enabled: true, version: 1 });
    const replaced = await ok("POST", `/api/v1/catalogs/${main}/policies`, {
      ...COMPACT_DAILY,
      actions: { compact: {}, compress: {} },
    });
    expect(replaced).toMatchObject({ policy_id: catalogPolicy, version: 2 });
    const rows = await managed();
    expect(rows.map((r) => r.full_name)).toEqual(TABLES.map((t) => t.full_name).sort());
    expect(new Set(rows.map((r) => r.effective_policy_id))).toEqual(new Set([catalogPolicy]));
  });

  it("pages the managed tables by keyset and filters them by a wildcard on the name, either case", async () => {
    const all: string[] = [];
    let token: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: { items: { full_name: string }[]; total: number; next_page_token: string | null } =
        await ok(
          "GET",
          `/api/v1/managedtables?page_size=2${token ? `&page_token=${encodeURIComponent(token)}` : ""}`,
        );
      expect(page.total).toBe(TABLES.length);
      all.push(...page.items.map((t) => t.full_name));
      token = page.next_page_token;
      if (!token) break;
    }
    expect(all).toEqual(TABLES.map((t) => t.full_name).sort());
    for (const q of ["ORD*", "ord*", "*ders", "o?ders"]) {
      const found = await ok("GET", `/api/v1/managedtables?q=${encodeURIComponent(q)}`);
      expect(
        found.items.map((t: { full_name: string }) => t.full_name),
        q,
      ).toEqual(["main.sales.eu.orders", "main.sales.orders"]);
      expect(found.total, q).toBe(2);
    }
    expect((await ok("GET", "/api/v1/managedtables?q=zzz*")).total).toBe(0);
  });

  it("a prefix policy overrides the catalog's for the tables under it, by whole levels", async () => {
    prefixPolicy = (await ok("POST", `/api/v1/catalogs/${main}/policies?prefix=sales.eu`, COMPACT_DAILY, 201))
      .policy_id;
    const byName = Object.fromEntries((await managed()).map((r) => [r.full_name, r.effective_policy_id]));
    expect(byName["main.sales.eu.orders"]).toBe(prefixPolicy);
    expect(byName["main.sales.eu.refunds"]).toBe(prefixPolicy);
    expect(byName["main.sales.orders"]).toBe(catalogPolicy);
  });

  it("a table policy overrides both; an action the table can't take is a 422 naming it", async () => {
    const bad = await admin("POST", `/api/v1/catalogs/${main}/tables/${id("ice", "events")}/policies`, {
      actions: { expire_partitions: { retention_days: 10 } },
    });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.errors[0].path).toBe("actions.expire_partitions");
    const unpartitioned = await admin(
      "POST",
      `/api/v1/catalogs/${main}/tables/${id("hr", "people")}/policies`,
      {
        actions: { expire_partitions: {} },
      },
    );
    expect(unpartitioned.status, unpartitioned.text).toBe(422);
    tablePolicy = (
      await ok(
        "POST",
        `/api/v1/catalogs/${main}/tables/${id("sales.eu", "orders")}/policies`,
        { actions: { improve_layout: { layout: { type: "zorder", columns: ["a", "b"] } } } },
        201,
      )
    ).policy_id;
    const detail = await ok("GET", `/api/v1/managedtables/${id("sales.eu", "orders")}`);
    expect(detail.effective_policy_id).toBe(tablePolicy);
    expect(detail.effective_policy.actions_applied[0]).toMatchObject({
      action: "improve_layout",
      schedule: { frequency: "daily", time_utc: "02:00" },
      schedule_source: "default",
      parameters: { layout: { value: { type: "zorder", columns: ["a", "b"] }, source: "policy" } },
    });
    const applying = await ok("GET", `/api/v1/managedtables/${id("sales.eu", "orders")}/policies`);
    expect(
      applying.items.map((p: { policy_id: string; effective: boolean }) => [p.policy_id, p.effective]),
    ).toEqual([
      [tablePolicy, true],
      [prefixPolicy, false],
      [catalogPolicy, false],
    ]);
  });

  it("shows each value's source: the configuration's partition retention once expiration is named", async () => {
    await ok(
      "POST",
      `/api/v1/catalogs/${main}/tables/${id("sales", "orders")}/policies`,
      {
        actions: { expire_partitions: {}, expire_snapshots: {} },
      },
      201,
    );
    const detail = await ok("GET", `/api/v1/managedtables/${id("sales", "orders")}`);
    const byAction = Object.fromEntries(
      detail.effective_policy.actions_applied.map((a: { action: string }) => [a.action, a]),
    );
    expect(byAction.expire_partitions.parameters.retention_days).toEqual({
      value: 30,
      source: "configuration",
    });
    expect(byAction.expire_snapshots.parameters.retention_hours).toEqual({ value: null, source: "table" });
  });

  it("disabling keeps tables managed and leaves those with no enabled policy disabled", async () => {
    await ok("POST", `/api/v1/catalogs/${main}/policies/${catalogPolicy}:disable`);
    const byName = Object.fromEntries((await managed()).map((r) => [r.full_name, r]));
    expect(byName["main.hr.people"]).toMatchObject({ state: "disabled", effective_policy_id: null });
    expect(byName["main.sales.eu.refunds"]?.effective_policy_id).toBe(prefixPolicy);
    await ok("POST", `/api/v1/managedtables/${id("hr", "people")}/policies/${catalogPolicy}:enable`);
    expect((await ok("GET", `/api/v1/managedtables/${id("hr", "people")}`)).effective_policy_id).toBe(
      catalogPolicy,
    );
  });

  it("refuses to delete a catalog or prefix policy through a table's path, naming the catalog path", async () => {
    const res = await admin(
      "DELETE",
      `/api/v1/managedtables/${id("hr", "people")}/policies/${catalogPolicy}`,
    );
    expect(res.status, res.text).toBe(409);
    expect(res.body.detail).toContain(`DELETE /api/v1/catalogs/${main}/policies/${catalogPolicy}`);
    const list = await ok("GET", `/api/v1/catalogs/${main}/policies`);
    expect(list.items.map((p: { scope: string }) => p.scope)).toEqual([
      "catalog",
      "prefix",
      "table",
      "table",
    ]);
  });

  it("deleting a table's last policy makes it unmanaged", async () => {
    await ok("DELETE", `/api/v1/catalogs/${main}/policies/${catalogPolicy}`, undefined, 204);
    const names = (await managed()).map((r) => r.full_name);
    expect(names).toEqual(["main.sales.eu.orders", "main.sales.eu.refunds", "main.sales.orders"]);
    expect((await admin("GET", `/api/v1/managedtables/${id("hr", "people")}`)).status).toBe(404);
    await ok(
      "DELETE",
      `/api/v1/managedtables/${id("sales.eu", "orders")}/policies/${tablePolicy}`,
      undefined,
      204,
    );
    expect((await ok("GET", `/api/v1/managedtables/${id("sales.eu", "orders")}`)).effective_policy_id).toBe(
      prefixPolicy,
    );
  });
});

describe("the engine", () => {
  /** The runs policies queued (opportunity scans, which the engine queues too, are not runs). */
  const policyJobs = async () =>
    (await plane.services.db.select().from(jobs).where(eq(jobs.trigger, "policy"))).filter(
      (j) => j.kind !== "opportunity_scan",
    );

  it("waits on tables that do not qualify, onboards the others, and queues runs at the policy's time, once", async () => {
    await ok("PUT", "/api/v1/config", { min_existence_days: 0 });
    await ok("POST", `/api/v1/catalogs/${main}/policies`, { ...COMPACT_DAILY, target_file_size_mb: 64 }, 201);
    await plane.services.scheduler.tick(clock.now());
    const rows = Object.fromEntries((await managed()).map((r) => [r.full_name, r]));
    expect(rows["main.hr.tiny"]).toMatchObject({ state: "waiting" });
    expect(rows["main.hr.tiny"]?.waiting_reason).toContain("min_qualifying_table_size_gb");
    expect(rows["main.hr.people"]).toMatchObject({ state: "waiting", waiting_reason: "onboarding" });
    // Onboarding finishes (the agent's recipe); the table then runs at 03:00, not before.
    // A Unity connection onboards EXTERNAL Delta tables: its Iceberg table waits, saying why.
    expect(rows["main.ice.events"]?.waiting_reason).toContain("can't be onboarded");
    const onboarded = await plane.services.db.select().from(lakeTables);
    expect(onboarded.length).toBe(TABLES.length - 2);
    const people = onboarded.find((t) => t.catalogFullName === "main.hr.people");
    const recipe = {
      partition_columns: [],
      partition_pattern: null,
      date_filter_column: null,
      cluster_columns: [],
      enumerated_columns: [],
    };
    for (const t of onboarded) {
      const job = await lease(plane, t.onboardingJobId as string, INSPECTOR);
      const partitioned = t.catalogFullName === "main.sales.orders";
      const done = await plane.services.jobs.complete(INSPECTOR.id, job.id, job.fence, "succeeded", {
        result: partitioned
          ? {
              ...recipe,
              partition_columns: ["event_date"],
              partition_pattern: "event_date=YYYY-MM-DD",
              date_filter_column: "event_date",
            }
          : recipe,
      });
      expect(done.kind).toBe("done");
    }
    clock.advance(2 * 60_000);
    await plane.services.scheduler.tick(clock.now());
    expect(await policyJobs()).toEqual([]);
    const active = await ok("GET", `/api/v1/managedtables/${id("hr", "people")}`);
    expect(active.state).toBe("active");
    // Once active, the engine has its opportunities measured; savings start at nothing.
    expect(active.opportunities).toMatchObject({ status: "not_measured", scan: { trigger: "policy" } });
    expect(active.savings).toMatchObject({ bytes_saved: 0 });
    clock.set(new Date("2026-03-01T03:00:00Z"));
    await plane.services.scheduler.tick(clock.now());
    await plane.services.scheduler.tick(clock.now());
    const queued = await policyJobs();
    const ofPeople = queued.filter((j) => j.tableId === people?.id);
    expect(ofPeople.map((j) => j.kind)).toEqual(["optimize"]);
    // The policy's file size, not the table's own (512).
    expect(ofPeople[0]?.payload).toMatchObject({ target_file_size_mb: 64 });
    expect(ofPeople[0]?.dedupeKey).toBe(`policy:${people?.id}:rewrite:2026-03-01T03:00:00.000Z`);
    // Every onboarded table got its runs; orders, with its own policy, its expirations at 02:00.
    expect(new Set(queued.map((j) => j.tableId))).toEqual(new Set(onboarded.map((t) => t.id)));
    const orders = onboarded.find((t) => t.catalogFullName === "main.sales.orders");
    const ofOrders = queued.filter((j) => j.tableId === orders?.id);
    expect(ofOrders.map((j) => j.kind).sort()).toEqual(["partition_expiration", "vacuum"]);
    expect(ofOrders.find((j) => j.kind === "partition_expiration")?.payload).toMatchObject({
      retention_days: 30,
      as_of: "2026-03-01",
      dry_run: false,
    });
    expect(ofOrders.find((j) => j.kind === "vacuum")?.payload).toMatchObject({ keep_table_retention: true });
  });

  it("the catalog's emergency stop halts new runs and shows on every table; resuming runs at the next time", async () => {
    const before = (await policyJobs()).length;
    await ok("PUT", `/api/v1/catalogs/${main}/policy-stop`, { paused: true });
    expect((await ok("GET", `/api/v1/managedtables/${id("hr", "people")}`)).paused).toMatchObject({
      catalog: true,
    });
    clock.set(new Date(Date.parse("2026-03-01T03:00:00Z") + DAY));
    await plane.services.scheduler.tick(clock.now());
    expect((await policyJobs()).length).toBe(before);
    await ok("PUT", `/api/v1/catalogs/${main}/policy-stop`, { paused: false });
    await plane.services.scheduler.tick(clock.now());
    expect((await policyJobs()).length).toBe(before);
    clock.advance(DAY);
    await plane.services.scheduler.tick(clock.now());
    expect((await policyJobs()).length).toBeGreaterThan(before);
  });

  it("the global stop (policy_engine_paused) halts them too", async () => {
    await ok("PUT", "/api/v1/config", { policy_engine_paused: true });
    const before = (await policyJobs()).length;
    clock.advance(DAY);
    await plane.services.scheduler.tick(clock.now());
    expect((await policyJobs()).length).toBe(before);
    expect((await managed()).every((r) => r.state === "paused" || r.state === "waiting")).toBe(true);
    await ok("PUT", "/api/v1/config", { policy_engine_paused: false });
    const held = await plane.services.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.trigger, "policy"), eq(jobs.status, "queued")));
    expect(held.length).toBeGreaterThan(0);
  });
});

describe("later syncs", () => {
  it("a table a sync adds under a catalog policy is picked up by the next tick, one it drops is let go", async () => {
    const newbie = table("hr", "newbie");
    // The days the engine tests moved the clock on made the connection's daily sync due: that sync
    // reports the catalog as it is now.
    const [sync] = await plane.services.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, "catalog_sync"), eq(jobs.status, "queued")));
    expect(sync, "a scheduled sync").toBeDefined();
    const adopted = table("hr", "adopted");
    await succeed(
      plane,
      sync?.id as string,
      syncResult([...TABLES.filter((t) => t.name !== "tiny"), newbie, adopted]),
    );
    // Onboarded by hand before the engine saw it: the engine adopts that table, not a second one.
    const byHand = await ok(
      "POST",
      "/api/v1/tables",
      { name: "by-hand.adopted", catalog_connection_id: unity, catalog_table: "main.hr.adopted" },
      201,
    );
    await plane.services.scheduler.tick(clock.now());
    const names = (await managed()).map((r) => r.full_name);
    expect(names).toContain("main.hr.newbie");
    expect(names).not.toContain("main.hr.tiny");
    const detail = await ok("GET", `/api/v1/managedtables/${id("hr", "adopted")}`);
    expect(detail.lake_table?.id).toBe(byHand.id);
    expect(detail.waiting_reason).toBe("onboarding");
  });
});

describe("the preview", () => {
  it("lists the tables a policy would manage and queues a dry run of each destructive action, once per version", async () => {
    const policy = await ok("POST", `/api/v1/catalogs/${main}/tables/${id("sales", "orders")}/policies`, {
      enabled: false,
      actions: { expire_partitions: { retention_days: 10 }, compact: {} },
    });
    const started = await ok(
      "POST",
      `/api/v1/catalogs/${main}/policies/${policy.policy_id}:preview`,
      undefined,
      202,
    );
    expect(started.tables.map((t: { full_name: string }) => t.full_name)).toEqual(["main.sales.orders"]);
    const [entry] = started.tables;
    expect(entry.actions).toEqual([{ action: "compact" }, { action: "expire_partitions" }]);
    expect(entry.deletes).toMatchObject([{ action: "expire_partitions", status: "queued" }]);
    const job = await plane.services.jobs.get(entry.deletes[0].job_id);
    expect(job?.trigger).toBe("preview");
    expect(job?.payload).toMatchObject({
      dry_run: true,
      retention_days: 10,
      as_of: clock.now().toISOString().slice(0, 10),
    });
    const again = await ok(
      "POST",
      `/api/v1/catalogs/${main}/policies/${policy.policy_id}:preview`,
      undefined,
      202,
    );
    expect(again.tables[0].deletes[0].job_id).toBe(entry.deletes[0].job_id);
    const read = await ok("GET", `/api/v1/catalogs/${main}/policies/${policy.policy_id}/preview`);
    expect(read.tables[0].deletes[0]).toMatchObject({ job_id: entry.deletes[0].job_id });
  });

  it("leaves out tables a more specific enabled policy covers", async () => {
    const catalog = (await ok("GET", `/api/v1/catalogs/${main}/policies?scope=catalog`)).items[0];
    const preview = await ok("GET", `/api/v1/catalogs/${main}/policies/${catalog.policy_id}/preview`);
    const names = preview.tables.map((t: { full_name: string }) => t.full_name);
    expect(names).toContain("main.hr.people");
    expect(names).not.toContain("main.sales.eu.orders");
  });
});
