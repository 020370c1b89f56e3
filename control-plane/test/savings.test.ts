/**
 * Savings and metrics on Node: jobs end through the job service as an agent would, their finish
 * hooks write the daily rollup, and the API's figures match a hand computation (discount 20 %,
 * projection 12 months, goal 1 PB, 1,000 USD per PB processed) per table, per catalog and in
 * total; the metrics fill every day of the range; the migration's backfill counts what the hooks
 * count; a job's figures count once; every role reads, API keys by scope.
 */
import { readFileSync } from "node:fs";
import { ManualClock } from "@lakesmith/shared";
import type { CrunchResult } from "@lakesmith/shared/jobs";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId } from "../src/catalogs/ids.ts";
import { type Job, jobs, savingsCounted, savingsDaily } from "../src/db/schema.ts";
import { runFinishHooks } from "../src/jobs/complete.ts";
import { reportFigures } from "../src/notifications/figures.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import {
  AGENT,
  expirationResult,
  expiredFile,
  hardDeletePayloadOf,
  hardDeleteResult,
  lease,
  succeed,
} from "./support/deletions.ts";
import { activeTable } from "./support/tables.ts";

const GiB = 2 ** 30;
const PiB = 2 ** 50;

let plane: TestPlane;
const clock = new ManualClock(new Date("2026-09-30T20:00:00Z"));
const tables: Record<"a" | "b" | "c", { id: string }> = {} as never;
const catalog = catalogId({ connectionId: "con_savings", catalog: "main" });

async function admin(method: string, path: string, body?: unknown) {
  const res = await plane.call(method, path, { token: ADMIN_KEY, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

async function get(path: string, token = ADMIN_KEY) {
  const res = await plane.call("GET", path, { token });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBe(200);
  return JSON.parse(text);
}

function crunchResult(before: number, after: number, extra: Partial<CrunchResult> = {}): CrunchResult {
  return {
    job_type: "crunch",
    table_version_before: 3,
    committed_version: 4,
    files_before: 40,
    files_after: 4,
    bytes_before: before,
    bytes_after: after,
    drr: 100 * (1 - after / before),
    rows_in: 1000,
    rows_out: 1000,
    partitions: [],
    partitions_crunched: 2,
    partitions_skipped: 0,
    settings: null,
    duration_ms: 1000,
    ...extra,
  };
}

/** Queues a crunch of the table at `at` and lets the agent report `result`. */
async function crunch(tableId: string, at: string, result: CrunchResult): Promise<Job> {
  clock.set(new Date(at));
  const payload = { table_id: tableId, uri: `s3://lake/${tableId}`, format: "delta" };
  const { job } = await plane.services.jobs.enqueue({ kind: "crunch", payload, tableId });
  return succeed(plane, job.id, result);
}

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  tables.a = await activeTable(plane, "savings.a");
  tables.b = await activeTable(plane, "savings.b");
  tables.c = await activeTable(plane, "savings.c");
  const config = await admin("PUT", "/api/v1/config", {
    storage_cost_usd_per_gb_month: 0.02,
    cloud_discount_percent: 20,
    projection_period_months: 12,
    quarterly_goal_pb: 1,
    operational_cost_usd_per_pb: 1000,
    pending_deletion_grace_hours: 0,
  });
  expect(config.status, config.text).toBe(200);
  // Table a is linked to catalog `main` of a connection (its synced table says so): its jobs count
  // for the catalog too.
  await plane.services.db.run(sql`insert into catalog_tables
    (connection_id, full_name, catalog, schema, name, detail, synced_at, sync_job_id)
    values ('con_savings', 'main.sales.orders', 'main', 'sales', 'orders', '{}', 0, 'job_sync')`);
  await plane.services.db.run(
    sql`update tables set catalog_connection_id = 'con_savings', catalog_full_name = 'main.sales.orders' where id = ${tables.a.id}`,
  );

  // The fixture: three committed crunches, one in the third quarter.
  await crunch(tables.a.id, "2026-09-30T20:00:00Z", crunchResult(100 * GiB, 40 * GiB));
  await crunch(tables.a.id, "2026-11-19T08:00:00Z", crunchResult(50 * GiB, 20 * GiB));
  await crunch(tables.b.id, "2026-11-20T09:00:00Z", crunchResult(20 * GiB, 10 * GiB));
  // A crunch that found nothing to commit, and one that failed: neither counts.
  await crunch(tables.b.id, "2026-11-20T10:00:00Z", crunchResult(0, 0, { committed_version: null, drr: 0 }));
  clock.set(new Date("2026-11-20T11:00:00Z"));
  const failingPayload = { table_id: tables.b.id, uri: "s3://lake/savings.b", format: "delta" };
  const { job: failing } = await plane.services.jobs.enqueue({
    kind: "crunch",
    payload: failingPayload,
    tableId: tables.b.id,
  });
  const job = await lease(plane, failing.id);
  await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "failed", {
    error: "conflict",
    retryable: false,
  });

  // Table c: an expiration removes two partitions (three files), a hard delete removes two files.
  clock.set(new Date("2026-11-20T12:00:00Z"));
  const expiration = await admin("POST", `/api/v1/tables/${tables.c.id}/partition-expiration`, {});
  expect(expiration.status, expiration.text).toBe(202);
  const files = [
    expiredFile("2025-01-01", 0, 1000),
    expiredFile("2025-01-01", 1, 2000),
    expiredFile("2025-01-02", 0, 4000),
  ];
  await succeed(
    plane,
    expiration.body.id,
    expirationResult(files, { committed_at: clock.now().getTime() - 1000, table_retention_hours: 0 }),
  );
  clock.set(new Date("2026-11-21T12:00:00Z"));
  const hard = await admin("POST", `/api/v1/vacuum/hard-delete?table_id=${tables.c.id}`);
  expect(hard.status, hard.text).toBe(202);
  const hardJob = hard.body.jobs[0].id;
  const payload = await hardDeletePayloadOf(plane, hardJob);
  // Deleted: 1000 and 4000 bytes; the 2000-byte file was already absent (not deleted by us).
  await succeed(
    plane,
    hardJob,
    hardDeleteResult(payload, { "event_date=2025-01-01/part-1.parquet": { outcome: "absent" } }),
  );
  clock.set(new Date("2026-11-21T15:00:00Z"));
});
afterAll(() => plane.close());

describe("savings", () => {
  it("match a hand computation in total: bytes, DRR, dollars at a 20 % discount, 12-month projection, goal, operational cost, deletions", async () => {
    const s = await get("/api/v1/savings");
    expect(s).toMatchObject({
      scope: "all",
      table_id: null,
      catalog_id: null,
      rewrites: 3,
      bytes_before: 170 * GiB,
      bytes_after: 70 * GiB,
      bytes_saved: 100 * GiB,
      files_before: 120,
      files_after: 12,
      deletions: { partitions_deleted: 2, files_deleted: 2, bytes_deleted: 5000 },
    });
    expect(s.drr_percent).toBeCloseTo(100 * (1 - 70 / 170), 10);
    // 0.02 x (1 - 0.20) = 0.016 USD per GB-month; 100 GB saved: 1.60 a month, 19.20 over 12 months.
    expect(s.storage.effective_usd_per_gb_month).toBeCloseTo(0.016, 12);
    expect(s.storage.saved_usd_per_month).toBeCloseTo(1.6, 12);
    expect(s.storage).toMatchObject({
      usd_per_gb_month: 0.02,
      cloud_discount_percent: 20,
      projection_period_months: 12,
    });
    expect(s.storage.projected_usd).toBeCloseTo(19.2, 12);
    // Q4 2026 holds the November crunches only: 30 + 10 = 40 GiB of 1 PiB.
    expect(s.goal).toMatchObject({
      quarterly_goal_pb: 1,
      quarter: "2026-Q4",
      start: "2026-10-01",
      end: "2026-12-31",
      bytes_saved: 40 * GiB,
    });
    expect(s.goal.progress_percent).toBeCloseTo((100 * 40) / 2 ** 20, 12);
    // 1,000 USD per PB x 170 GiB processed.
    expect(s.operational_cost.bytes_processed).toBe(170 * GiB);
    expect(s.operational_cost.estimate_usd).toBeCloseTo((1000 * 170 * GiB) / PiB, 12);
  });

  it("per table and per catalog count only their tables", async () => {
    const a = await get(`/api/v1/savings/tables/${tables.a.id}`);
    expect(a).toMatchObject({ scope: "table", table_id: tables.a.id, rewrites: 2, bytes_saved: 90 * GiB });
    expect(a.storage.saved_usd_per_month).toBeCloseTo(90 * 0.016, 12);
    expect(a.goal.bytes_saved).toBe(30 * GiB);
    const b = await get(`/api/v1/savings/tables/${tables.b.id}`);
    expect(b).toMatchObject({ rewrites: 1, bytes_before: 20 * GiB, bytes_after: 10 * GiB });
    expect(b.drr_percent).toBe(50);
    const c = await get(`/api/v1/savings/tables/${tables.c.id}`);
    expect(c).toMatchObject({ rewrites: 0, bytes_saved: 0, drr_percent: null });
    expect(c.deletions).toEqual({ partitions_deleted: 2, files_deleted: 2, bytes_deleted: 5000 });
    const inCatalog = await get(`/api/v1/savings/catalogs/${catalog}`);
    expect(inCatalog).toMatchObject({
      scope: "catalog",
      catalog_id: catalog,
      rewrites: 2,
      bytes_saved: 90 * GiB,
    });
    expect(await plane.services.savings.forTable(tables.a.id)).toEqual(a);
  });

  it("answers 404 for an unknown table or catalog, and hides the goal and the estimates while unset", async () => {
    expect((await admin("GET", "/api/v1/savings/tables/tbl_nope")).status).toBe(404);
    expect((await admin("GET", "/api/v1/savings/catalogs/cat_nope")).status).toBe(404);
    const unseen = catalogId({ connectionId: "con_savings", catalog: "other" });
    expect((await admin("GET", `/api/v1/savings/catalogs/${unseen}`)).status).toBe(404);
    await admin("PUT", "/api/v1/config", {
      quarterly_goal_pb: 0,
      projection_period_months: null,
      operational_cost_usd_per_pb: null,
    });
    clock.advance(10_000); // past the settings cache
    const s = await get("/api/v1/savings");
    expect(s.goal).toBeNull();
    expect(s.storage).toMatchObject({ projection_period_months: null, projected_usd: null });
    expect(s.operational_cost).toMatchObject({ usd_per_pb: null, estimate_usd: null });
    await admin("PUT", "/api/v1/config", {
      quarterly_goal_pb: 1,
      projection_period_months: 12,
      operational_cost_usd_per_pb: 1000,
    });
    clock.advance(10_000);
  });

  it("counts a job once when its finish hooks run again", async () => {
    const [done] = await plane.services.db
      .select()
      .from(jobs)
      .where(
        sql`${jobs.tableId} = ${tables.b.id} and ${jobs.kind} = 'crunch' and ${jobs.status} = 'succeeded'`,
      )
      .limit(1);
    await runFinishHooks(plane.services.jobs.engine, [done as Job]);
    expect((await get(`/api/v1/savings/tables/${tables.b.id}`)).rewrites).toBe(1);
    expect((await get("/api/v1/savings")).bytes_saved).toBe(100 * GiB);
  });

  it("the migration's backfill counts what the finish hooks counted", async () => {
    const { db } = plane.services;
    const before = await db.select().from(savingsDaily).orderBy(savingsDaily.tableId, savingsDaily.day);
    expect(before.length).toBeGreaterThan(0);
    await db.delete(savingsDaily);
    await db.delete(savingsCounted);
    const migration = readFileSync(new URL("../drizzle/0021_savings.sql", import.meta.url), "utf8");
    const backfill = migration.split("--> statement-breakpoint").filter((s) => /^\s*\/\*/.test(s));
    expect(backfill.length).toBe(6);
    for (const statement of backfill) await db.run(sql.raw(statement));
    expect(await db.select().from(savingsDaily).orderBy(savingsDaily.tableId, savingsDaily.day)).toEqual(
      before,
    );
  });
});

describe("the reports", () => {
  it("count what the savings count: a UTC day's report figures equal that day's metrics", async () => {
    const { values } = await plane.services.config.get();
    const figures = await reportFigures(
      plane.services.db,
      values,
      new Date("2026-11-20T00:00:00Z"),
      new Date("2026-11-21T00:00:00Z"),
    );
    const [day] = (await get("/api/v1/metrics?start=2026-11-20&end=2026-11-20")).days;
    // Three crunches of table b ended that day: one committed, one with nothing to commit, one failed.
    expect(figures.crunch).toMatchObject({
      jobs: 1,
      bytesBefore: day.bytes_crunched,
      bytesAfter: day.bytes_after,
      bytesSaved: day.bytes_saved,
      drrPercent: day.drr_percent,
    });
    expect(figures.dollars.perMonth).toBeCloseTo((day.bytes_saved / GiB) * 0.016, 12);
  });
});

describe("metrics", () => {
  it("fill every day of the range with zeros, and sum the days", async () => {
    const m = await get("/api/v1/metrics?start=2026-11-18&end=2026-11-22");
    expect(m).toMatchObject({ scope: "all", start: "2026-11-18", end: "2026-11-22" });
    expect(m.days.map((d: { date: string }) => d.date)).toEqual([
      "2026-11-18",
      "2026-11-19",
      "2026-11-20",
      "2026-11-21",
      "2026-11-22",
    ]);
    const zero = {
      bytes_crunched: 0,
      bytes_after: 0,
      bytes_saved: 0,
      partitions_crunched: 0,
      files_reduced: 0,
      drr_percent: null,
      partitions_deleted: 0,
      files_deleted: 0,
      bytes_deleted: 0,
    };
    expect(m.days[0]).toEqual({ date: "2026-11-18", ...zero });
    expect(m.days[1]).toEqual({
      ...zero,
      date: "2026-11-19",
      bytes_crunched: 50 * GiB,
      bytes_after: 20 * GiB,
      bytes_saved: 30 * GiB,
      partitions_crunched: 2,
      files_reduced: 36,
      drr_percent: 60,
    });
    expect(m.days[2]).toMatchObject({ bytes_crunched: 20 * GiB, drr_percent: 50, partitions_deleted: 2 });
    expect(m.days[3]).toMatchObject({ files_deleted: 2, bytes_deleted: 5000, bytes_crunched: 0 });
    expect(m.days[4]).toEqual({ date: "2026-11-22", ...zero });
    expect(m.totals).toMatchObject({ bytes_crunched: 70 * GiB, bytes_saved: 40 * GiB, files_reduced: 72 });
    expect(m.totals.drr_percent).toBeCloseTo(100 * (1 - 30 / 70), 10);
  });

  it("default to the last 30 UTC days, per table and per catalog", async () => {
    const m = await get(`/api/v1/metrics/tables/${tables.a.id}`);
    expect(m).toMatchObject({
      scope: "table",
      table_id: tables.a.id,
      start: "2026-10-23",
      end: "2026-11-21",
    });
    expect(m.days).toHaveLength(30);
    expect(m.totals.bytes_crunched).toBe(50 * GiB);
    const sept = await get(`/api/v1/metrics/catalogs/${catalog}?start=2026-09-30&end=2026-09-30`);
    expect(sept.days).toEqual([expect.objectContaining({ date: "2026-09-30", bytes_crunched: 100 * GiB })]);
  });

  it("refuse a backwards, too long or malformed range with 422 naming the field", async () => {
    const backwards = await admin("GET", "/api/v1/metrics?start=2026-11-02&end=2026-11-01");
    expect(backwards.status).toBe(422);
    expect(backwards.body.errors[0].path).toBe("start");
    const long = await admin("GET", "/api/v1/metrics?start=2025-01-01&end=2026-01-02");
    expect(long.status).toBe(422);
    expect(long.body.detail).toContain("367 days");
    expect((await admin("GET", "/api/v1/metrics?start=2025-01-01&end=2026-01-01")).status).toBe(200);
    const malformed = await admin("GET", "/api/v1/metrics?start=2026-02-30");
    expect(malformed.status).toBe(422);
    expect(malformed.text).toContain("start");
    expect((await admin("GET", "/api/v1/metrics/tables/tbl_nope")).status).toBe(404);
  });
});

describe("who may read savings and metrics", () => {
  it("lets a Viewer read both, and API keys with savings:read or metrics:read their own", async () => {
    const viewer = (await plane.userWithRole("Viewer")).token;
    await get("/api/v1/savings", viewer);
    await get(`/api/v1/metrics/tables/${tables.a.id}`, viewer);
    const savingsKey = (await plane.apiKey(["savings:read"])).key;
    const metricsKey = (await plane.apiKey(["metrics:read"])).key;
    const tablesKey = (await plane.apiKey(["tables:read"])).key;
    const status = async (path: string, token: string) => (await plane.call("GET", path, { token })).status;
    expect(await status("/api/v1/savings", savingsKey)).toBe(200);
    expect(await status("/api/v1/metrics", savingsKey)).toBe(403);
    expect(await status("/api/v1/metrics", metricsKey)).toBe(200);
    expect(await status(`/api/v1/savings/catalogs/${catalog}`, metricsKey)).toBe(403);
    expect(await status("/api/v1/savings", tablesKey)).toBe(403);
    expect(await status("/api/v1/savings", "")).toBe(401);
  });
});
