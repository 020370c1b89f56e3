/**
 * Optimus recommendations over a synced Unity catalog with policies, on a manual clock: the latest
 * succeeded run's recommendations (paged) and tables, a table's per-day metrics (window edges, days
 * without data, applied markers), and apply / dismiss / revert: the table's own policy created with
 * the inherited actions or updated in place, never the catalog's; 404s, 409s naming the status or
 * "not managed", 422 naming `layout` or `days`, Viewer 403 on writes.
 */
import { ManualClock, newId } from "@lakesmith/shared";
import type { Layout } from "@lakesmith/shared/jobs";
import { locationKey } from "@lakesmith/shared/locations";
import { QUERY_LOG_ANALYSIS_KIND } from "@lakesmith/shared/optimus";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId, tableId } from "../src/catalogs/ids.ts";
import {
  catalogTables,
  jobs,
  managedTables,
  optimusRecommendations,
  optimusTableDays,
  optimusWorkloads,
  policies,
} from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson, lease, succeed, syncedTable, syncResult, WORKSPACE } from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-05-10T09:00:00Z"));
const DAY = 86_400_000;
const AGENT = {
  id: "agt_optimus_recs",
  kinds: [QUERY_LOG_ANALYSIS_KIND],
  capabilities: ["s3"],
  allow: [locationKey("s3://logs")],
  endpoints: [] as string[],
};
const BASE = "/api/v1/optimus/runs";
const RECS = "/api/v1/optimus/recommendations";
const ZORDER: Layout = { type: "zorder", columns: ["customer_id", "order_date"] };
const LINEAR: Layout = { type: "linear", columns: ["event_day"] };

let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let viewer: string;
let unity: string;
let main: string;
let submission: string;
/** Lakesmith table id by short name. */
const lake: Record<string, string> = {};

const external = (fullName: string, extra = {}) => {
  const [, schema = "", name = ""] = fullName.split(".");
  return syncedTable(fullName, {
    table_type: "EXTERNAL",
    location: `s3://lake/${schema}/${name}`,
    ...extra,
  });
};
const TABLES = [
  "main.sales.orders",
  "main.sales.events",
  "main.hr.people",
  "main.hr.staff",
  "main.ops.logs",
  "main.raw.blobs",
  "other.x.loose",
  "other.y.cold",
].map((n) => external(n));
const catTable = (fullName: string) => tableId({ connectionId: unity, catalog: "main" }, fullName);

const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const res = await admin(method, path, body);
  expect(res.status, res.text).toBe(status);
  return res.body;
};
const problem = async (method: string, path: string, status: number, body?: unknown) => {
  const res = await admin(method, path, body ?? (method === "POST" ? {} : undefined));
  expect(res.status, res.text).toBe(status);
  return res.text;
};

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  viewer = (await plane.userWithRole("Viewer")).token;
  unity = (await ok("POST", "/api/v1/catalog-connections", { name: "unity", ...WORKSPACE }, 201)).id;
  await succeed(
    plane,
    (await ok("POST", `/api/v1/catalog-connections/${unity}/sync`, undefined, 202)).id,
    syncResult(TABLES),
  );
  main = catalogId({ connectionId: unity, catalog: "main" });
  for (const t of TABLES) {
    const name = t.full_name.split(".").slice(1).join("_");
    lake[name] = (
      await ok(
        "POST",
        "/api/v1/tables",
        { name, catalog_connection_id: unity, catalog_table: t.full_name },
        201,
      )
    ).id;
  }
  lake.by_uri = (await ok("POST", "/api/v1/tables", { name: "by_uri", uri: "s3://lake/by/uri" }, 201)).id;
  // The catalog's policy, inherited by every table of `main` without its own.
  await ok(
    "POST",
    `/api/v1/catalogs/${main}/policies`,
    {
      actions: { compress: {}, expire_snapshots: { retention_hours: 200 } },
      schedule: { frequency: "daily", time_utc: "03:00" },
      target_file_size_mb: 256,
    },
    201,
  );
  await ok(
    "POST",
    `/api/v1/catalogs/${main}/tables/${catTable("main.sales.events")}/policies`,
    {
      actions: {
        compact: {},
        improve_layout: {
          layout: LINEAR,
          schedule: { frequency: "weekly", time_utc: "05:00", day_of_week: "sunday" },
        },
      },
    },
    201,
  );
  await ok(
    "POST",
    `/api/v1/catalogs/${main}/tables/${catTable("main.hr.staff")}/policies`,
    { enabled: false, actions: { compact: {} } },
    201,
  );
  // Created paused, so that its create triggers no run, then resumed (a PATCH never triggers one): the
  // tests below queue every run they count.
  submission = (
    await ok(
      "POST",
      BASE,
      {
        name: "recs",
        engine: "spark",
        daily_sync_time_utc: "23:00",
        query_logs_uri: "s3://logs/spark",
        active: false,
      },
      201,
    )
  ).id;
  await ok("PATCH", `${BASE}/${submission}`, { active: true });
});
afterAll(() => plane.close());

/** A run of the submission, ended as `outcome`; its id (the job's). */
async function run(outcome: "succeeded" | "failed" = "succeeded"): Promise<string> {
  clock.advance(60_000);
  const { job_id } = await ok("POST", `${BASE}/${submission}/sync-now`, undefined, 202);
  const job = await lease(plane, job_id, AGENT);
  const detail = outcome === "succeeded" ? { result: { tables: 1 } } : { error: "no logs", retryable: false };
  const done = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, outcome, detail);
  expect(done.kind).toBe("done");
  return job_id;
}

/** A recommendation of `runId` for the Lakesmith table `name`, as a scoring's finish stores it. */
async function recommend(
  runId: string,
  name: string,
  extra: Partial<typeof optimusRecommendations.$inferInsert> = {},
) {
  const id = newId("orec");
  const fqn = TABLES.find((t) => t.full_name.split(".").slice(1).join("_") === name)?.full_name ?? name;
  await plane.services.db.insert(optimusRecommendations).values({
    id,
    submissionId: submission,
    runId,
    scoringJobId: newId("job"),
    tableId: lake[name] as string,
    tableFqn: fqn,
    layout: ZORDER,
    currentLayout: null,
    expectedSkipFraction: 0.8,
    currentSkipFraction: 0.1,
    measuredSkipFraction: 0.12,
    bytesSavedPerDay: 1e9,
    rewriteBytes: 5e9,
    reason: "Z-order on the two balanced filter columns skips 80% of the bytes",
    evidence: {
      candidates: [
        { layout: ZORDER, skip_fraction: 0.8 },
        { layout: null, skip_fraction: 0.1 },
      ],
      sample_rows: 1000,
      pseudo_files: 10,
      method: "sample sorted and cut into pseudo-files",
      table_version: 3,
      filter_sets: [
        {
          predicates: [{ column: "customer_id", op: "=", values: ["42"] }],
          columns: ["customer_id"],
          queries: 12,
          bytes_scanned: 3e9,
          days: { "2026-05-01": { queries: 12, bytes_scanned: 3e9 } },
          examples: ["query72"],
        },
      ],
    },
    status: "open",
    createdAt: clock.now(),
    ...extra,
  });
  return id;
}

const tablePolicy = async (fullName: string) =>
  (
    await plane.services.db
      .select()
      .from(policies)
      .where(and(eq(policies.scope, "table"), eq(policies.target, fullName)))
  )[0];
/** The action names of the table's own policy, sorted. */
const ownActions = async (fullName: string) =>
  Object.keys(
    ((await tablePolicy(fullName))?.body as { actions?: object } | undefined)?.actions ?? {},
  ).sort();
const effectiveOf = async (fullName: string) =>
  (await plane.services.db.select().from(managedTables).where(eq(managedTables.fullName, fullName)))[0]
    ?.policyId;
const catalogPolicy = async () =>
  (await plane.services.db.select().from(policies).where(eq(policies.scope, "catalog")))[0];

describe("the latest run's recommendations and tables", () => {
  let first: string;
  let second: string;

  it("lists nothing before a run succeeded, and 404 for an unknown submission", async () => {
    expect(await ok("GET", `${BASE}/${submission}/recommendations`)).toEqual({
      items: [],
      total: 0,
      offset: 0,
      limit: 100,
      run_id: null,
    });
    expect(await ok("GET", `${BASE}/${submission}/tables`)).toMatchObject({ run_id: null, items: [] });
    await problem("GET", `${BASE}/opt_nope/recommendations`, 404);
    await problem("GET", `${BASE}/opt_nope/tables`, 404);
    await problem("GET", `${BASE}/opt_nope/tables/main.sales.orders/metrics`, 404);
  });

  it("shows only the newest succeeded run's, largest saving first, paged; a failed newer run changes nothing", async () => {
    first = await run();
    await recommend(first, "sales_orders");
    second = await run();
    await recommend(second, "sales_orders", { bytesSavedPerDay: 5e8 });
    await recommend(second, "sales_events", { bytesSavedPerDay: 9e9, layout: LINEAR });
    await recommend(second, "ops_logs", { bytesSavedPerDay: 7e9 });
    await run("failed");
    await plane.services.db.insert(optimusWorkloads).values({
      runId: second,
      tableId: lake.sales_events as string,
      submissionId: submission,
      tableFqn: "main.sales.events",
      queries: 40,
      bytesScanned: 8e10,
      filterSets: [],
      other: { queries: 0, bytes_scanned: 0 },
    });

    const page = await ok("GET", `${BASE}/${submission}/recommendations`);
    expect(page).toMatchObject({ total: 3, offset: 0, limit: 100, run_id: second });
    expect(page.items.map((r: { table_fqn: string }) => r.table_fqn)).toEqual([
      "main.sales.events",
      "main.ops.logs",
      "main.sales.orders",
    ]);
    const rec = page.items[2];
    expect(rec).toMatchObject({
      run_id: second,
      submission_id: submission,
      table_id: lake.sales_orders,
      layout: ZORDER,
      current_layout: null,
      expected_skip_fraction: 0.8,
      current_skip_fraction: 0.1,
      measured_skip_fraction: 0.12,
      bytes_saved_per_day: 5e8,
      rewrite_bytes: 5e9,
      status: "open",
      applied_at: null,
      queries: [
        {
          predicates: [{ column: "customer_id", op: "=", values: ["42"] }],
          queries: 12,
          bytes_scanned: 3e9,
          examples: ["query72"],
        },
      ],
      evidence: { sample_rows: 1000, pseudo_files: 10, table_version: 3 },
    });
    expect(rec.evidence.candidates).toHaveLength(2);

    const paged = await ok("GET", `${BASE}/${submission}/recommendations?offset=1&limit=1`);
    expect(paged).toMatchObject({ total: 3, offset: 1, limit: 1 });
    expect(paged.items.map((r: { table_fqn: string }) => r.table_fqn)).toEqual(["main.ops.logs"]);
    expect(await problem("GET", `${BASE}/${submission}/recommendations?limit=501`, 422)).toContain("limit");
    expect(await problem("GET", `${BASE}/${submission}/recommendations?offset=-1`, 422)).toContain("offset");
    expect((await ok("GET", `${BASE}/${submission}/recommendations?limit=500`)).limit).toBe(500);
  });

  it("lists the tables with a recommendation in that run, with their workload where kept", async () => {
    const { run_id, items } = await ok("GET", `${BASE}/${submission}/tables`);
    expect(run_id).toBe(second);
    expect(items).toEqual([
      expect.objectContaining({ table_fqn: "main.ops.logs", recommendations: 1, open: 1, queries: null }),
      expect.objectContaining({ table_fqn: "main.sales.events", queries: 40, bytes_scanned: 8e10 }),
      expect.objectContaining({
        table_fqn: "main.sales.orders",
        table_id: lake.sales_orders,
        recommendations: 1,
        open: 1,
        applied: 0,
        best_expected_skip_fraction: 0.8,
        bytes_saved_per_day: 5e8,
      }),
    ]);
  });
});

describe("apply, dismiss and revert", () => {
  let runId: string;
  beforeAll(async () => {
    runId = await run();
  });

  it("creates the table's own policy from the inherited one plus the layout, leaves the catalog's alone, and a revert deletes it", async () => {
    const before = await catalogPolicy();
    const id = await recommend(runId, "sales_orders");
    const applied = await ok("POST", `${RECS}/${id}/apply`, {});
    expect(applied.policy).toMatchObject({
      catalog_id: main,
      table_id: catTable("main.sales.orders"),
      created: true,
    });
    expect(applied.run_now).toBeNull();
    expect(applied.recommendation).toMatchObject({
      status: "applied",
      applied_policy_id: applied.policy.policy_id,
    });
    expect(applied.recommendation.applied_at).toBe(clock.now().toISOString());
    const own = await tablePolicy("main.sales.orders");
    expect(own?.body).toMatchObject({
      enabled: true,
      actions: {
        compress: {},
        expire_snapshots: { retention_hours: 200 },
        improve_layout: { layout: ZORDER },
      },
      schedule: { frequency: "daily", time_utc: "03:00" },
      target_file_size_mb: 256,
    });
    expect(await effectiveOf("main.sales.orders")).toBe(own?.id);
    const after = await catalogPolicy();
    expect(after?.version).toBe(before?.version);
    expect(after?.body).toEqual(before?.body);

    expect(await problem("POST", `${RECS}/${id}/apply`, 409)).toContain("is applied");
    expect(await problem("POST", `${RECS}/${id}/dismiss`, 409)).toContain("is applied");

    const reverted = await ok("POST", `${RECS}/${id}/revert`);
    expect(reverted).toMatchObject({ policy_change: "deleted", recommendation: { status: "reverted" } });
    expect(await tablePolicy("main.sales.orders")).toBeUndefined();
    expect(await effectiveOf("main.sales.orders")).toBe(before?.id);
    expect(await problem("POST", `${RECS}/${id}/revert`, 409)).toContain("is reverted");
    expect(await problem("POST", `${RECS}/${id}/apply`, 409)).toContain("is reverted");
  });

  it("updates a table's own policy in place, keeping the action's schedule, and a revert restores the previous layout", async () => {
    const id = await recommend(runId, "sales_events");
    const before = await tablePolicy("main.sales.events");
    const applied = await ok("POST", `${RECS}/${id}/apply`, {});
    expect(applied.policy).toMatchObject({
      policy_id: before?.id,
      created: false,
      version: (before?.version ?? 0) + 1,
    });
    expect((await tablePolicy("main.sales.events"))?.body).toMatchObject({
      actions: {
        compact: {},
        improve_layout: { layout: ZORDER, schedule: { frequency: "weekly", day_of_week: "sunday" } },
      },
    });
    const reverted = await ok("POST", `${RECS}/${id}/revert`);
    expect(reverted.policy_change).toBe("restored");
    expect((await tablePolicy("main.sales.events"))?.body).toEqual({ ...before?.body });
  });

  it("keeps a created policy someone changed since, removing only the layout", async () => {
    const id = await recommend(runId, "hr_people");
    const { policy } = await ok("POST", `${RECS}/${id}/apply`, {});
    const own = await tablePolicy("main.hr.people");
    await ok("PUT", `/api/v1/catalogs/${main}/policies/${policy.policy_id}`, {
      ...(own?.body as object),
      target_file_size_mb: 128,
    });
    const reverted = await ok("POST", `${RECS}/${id}/revert`);
    expect(reverted.policy_change).toBe("restored");
    const kept = await tablePolicy("main.hr.people");
    expect(kept?.body).toMatchObject({ target_file_size_mb: 128, actions: { compress: {} } });
    expect(await ownActions("main.hr.people")).toEqual(["compress", "expire_snapshots"]);
  });

  it("leaves a policy whose layout changed since as it is", async () => {
    const id = await recommend(runId, "ops_logs");
    const { policy } = await ok("POST", `${RECS}/${id}/apply`, {});
    const own = await tablePolicy("main.ops.logs");
    const body = own?.body as { actions: Record<string, unknown> };
    const changed = { ...body, actions: { ...body.actions, improve_layout: { layout: LINEAR } } };
    await ok("PUT", `/api/v1/catalogs/${main}/policies/${policy.policy_id}`, changed);
    const reverted = await ok("POST", `${RECS}/${id}/revert`);
    expect(reverted).toMatchObject({ policy_change: "none", recommendation: { status: "reverted" } });
    expect((await tablePolicy("main.ops.logs"))?.body).toMatchObject({
      actions: { improve_layout: { layout: LINEAR } },
    });
  });

  it("applies once when two applies race, and a revert after the policy was deleted changes nothing", async () => {
    const id = await recommend(runId, "sales_orders");
    const answers = await Promise.all([
      admin("POST", `${RECS}/${id}/apply`, {}),
      admin("POST", `${RECS}/${id}/apply`, {}),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const own = await tablePolicy("main.sales.orders");
    expect(own?.version).toBe(1);
    await ok("DELETE", `/api/v1/catalogs/${main}/policies/${own?.id}`, undefined, 204);
    const reverted = await ok("POST", `${RECS}/${id}/revert`);
    expect(reverted).toMatchObject({ policy_change: "none", recommendation: { status: "reverted" } });
    expect(reverted.detail).toContain("deleted");
    expect(await tablePolicy("main.sales.orders")).toBeUndefined();
  });

  it("gives a table that only a disabled policy covers a policy of the layout alone", async () => {
    const other = catalogId({ connectionId: unity, catalog: "other" });
    await ok(
      "POST",
      `/api/v1/catalogs/${other}/policies?prefix=y`,
      { enabled: false, actions: { compress: {} } },
      201,
    );
    expect(await effectiveOf("other.y.cold")).toBeNull();
    const id = await recommend(runId, "y_cold");
    const { policy } = await ok("POST", `${RECS}/${id}/apply`, {});
    expect(policy).toMatchObject({ catalog_id: other, created: true });
    expect((await tablePolicy("other.y.cold"))?.body).toMatchObject({
      enabled: true,
      actions: { improve_layout: { layout: ZORDER } },
    });
    expect(await ownActions("other.y.cold")).toEqual(["improve_layout"]);
    expect(await effectiveOf("other.y.cold")).toBe(policy.policy_id);
    expect((await ok("POST", `${RECS}/${id}/revert`)).policy_change).toBe("deleted");
    expect(await effectiveOf("other.y.cold")).toBeNull();
  });

  it("queues the table's improve_layout at once with run_now", async () => {
    const id = await recommend(runId, "sales_orders");
    const applied = await ok("POST", `${RECS}/${id}/apply`, { run_now: true });
    expect(applied.run_now.error).toBeNull();
    const [job] = await plane.services.db.select().from(jobs).where(eq(jobs.id, applied.run_now.job_id));
    expect(job).toMatchObject({ kind: "crunch", tableId: lake.sales_orders, trigger: "action" });
    expect((job?.payload as { layout?: Layout } | undefined)?.layout).toEqual(ZORDER);
    await ok("POST", `${RECS}/${id}/revert`);
  });

  it("dismisses an open one only", async () => {
    const id = await recommend(runId, "sales_orders");
    expect(await problem("POST", `${RECS}/${id}/revert`, 409)).toContain("is open");
    const dismissed = await ok("POST", `${RECS}/${id}/dismiss`);
    expect(dismissed).toMatchObject({ id, status: "dismissed", status_changed_by: expect.any(String) });
    expect(await problem("POST", `${RECS}/${id}/dismiss`, 409)).toContain("is dismissed");
    expect(await problem("POST", `${RECS}/${id}/apply`, 409)).toContain("is dismissed");
  });

  it("refuses tables that are not managed (409 saying how), a format without layouts (422 naming layout), a disabled own policy (409)", async () => {
    const loose = await recommend(runId, "x_loose", { tableFqn: "other.x.loose" });
    const text = await problem("POST", `${RECS}/${loose}/apply`, 409);
    expect(text).toContain("not managed");
    expect(text).toContain("/policies");
    const byUri = await recommend(runId, "by_uri", { tableFqn: "by_uri" });
    expect(await problem("POST", `${RECS}/${byUri}/apply`, 409)).toContain(
      "not managed: it was registered by its URI",
    );

    await plane.services.db
      .update(catalogTables)
      .set({ format: "csv" })
      .where(eq(catalogTables.fullName, "main.raw.blobs"));
    const blobs = await recommend(runId, "raw_blobs");
    const refused = JSON.parse(await problem("POST", `${RECS}/${blobs}/apply`, 422));
    expect(refused.errors.map((e: { path: string }) => e.path)).toContain("layout");

    const staff = await recommend(runId, "hr_staff");
    expect(await problem("POST", `${RECS}/${staff}/apply`, 409)).toContain("disabled");
    for (const id of [loose, byUri, blobs, staff])
      expect(
        (await ok("GET", `${BASE}/${submission}/recommendations?limit=500`)).items.find(
          (r: { id: string }) => r.id === id,
        )?.status,
      ).toBe("open");
  });

  it("answers 404 for an unknown recommendation, 422 for a bad body, and 403 to a Viewer on writes", async () => {
    for (const verb of ["apply", "dismiss", "revert"])
      expect(await problem("POST", `${RECS}/orec_nope/${verb}`, 404)).toContain("orec_nope");
    const id = await recommend(runId, "sales_orders");
    expect(await problem("POST", `${RECS}/${id}/apply`, 422, { run_now: "yes" })).toContain("run_now");
    expect(await problem("POST", `${RECS}/${id}/apply`, 422, { extra: 1 })).toContain("extra");
    for (const verb of ["apply", "dismiss", "revert"]) {
      const res = await plane.call("POST", `${RECS}/${id}/${verb}`, { token: viewer, body: {} });
      expect(res.status, verb).toBe(403);
    }
    const read = await plane.call("GET", `${BASE}/${submission}/recommendations`, { token: viewer });
    expect(read.status).toBe(200);
    expect(
      (await ok("GET", `${BASE}/${submission}/recommendations?limit=500`)).items.find(
        (r: { id: string }) => r.id === id,
      )?.status,
    ).toBe("open");
  });
});

describe("per-day metrics", () => {
  const fqn = "main.hr.people";
  const path = (days?: number) =>
    `${BASE}/${submission}/tables/${encodeURIComponent(fqn)}/metrics${days === undefined ? "" : `?days=${days}`}`;
  const dayOf = (offset: number) =>
    new Date(Date.parse("2026-06-30T00:00:00Z") + offset * DAY).toISOString().slice(0, 10);

  it("gives one entry per UTC day ending today, null where nothing was measured, and the window's edges", async () => {
    clock.set(new Date("2026-06-30T18:00:00Z"));
    const row = (day: string, queries: number) => ({
      submissionId: submission,
      tableId: lake.hr_people as string,
      day,
      tableFqn: fqn,
      queries,
      bytesScanned: queries * 1e6,
      measuredSkipFraction: 0.5,
      predictedSkipFraction: 0.8,
      runId: "job_measured",
      measuredAt: clock.now(),
    });
    await plane.services.db
      .insert(optimusTableDays)
      .values([row(dayOf(0), 10), row(dayOf(-89), 7), row(dayOf(-90), 3), row(dayOf(1), 99)]);

    const series = await ok("GET", path());
    expect(series).toMatchObject({
      table_fqn: fqn,
      table_id: lake.hr_people,
      from: dayOf(-89),
      to: dayOf(0),
    });
    expect(series.days).toHaveLength(90);
    expect(series.days[0]).toMatchObject({ day: dayOf(-89), queries: 7, bytes_scanned: 7e6 });
    expect(series.days[89]).toEqual({
      day: dayOf(0),
      queries: 10,
      bytes_scanned: 1e7,
      measured_skip_fraction: 0.5,
      predicted_skip_fraction: 0.8,
      run_id: "job_measured",
    });
    expect(series.days[1]).toEqual({
      day: dayOf(-88),
      queries: null,
      bytes_scanned: null,
      measured_skip_fraction: null,
      predicted_skip_fraction: null,
      run_id: null,
    });
    expect((await ok("GET", path(89))).days[0]).toMatchObject({ day: dayOf(-88), queries: null });
    expect((await ok("GET", path(91))).days[0]).toMatchObject({ day: dayOf(-90), queries: 3 });
    const one = await ok("GET", path(1));
    expect(one.days).toEqual([expect.objectContaining({ day: dayOf(0), queries: 10 })]);
    expect((await ok("GET", path(365))).days).toHaveLength(365);
    for (const days of [0, 366]) expect(await problem("GET", path(days), 422)).toContain("days");
    expect(await problem("GET", `${BASE}/${submission}/tables/main.no.such/metrics`, 404)).toContain(
      "main.no.such",
    );
  });

  it("marks the recommendations applied while the window lasted, with when they were reverted", async () => {
    clock.set(new Date("2026-06-10T11:00:00Z"));
    const early = await recommend(await run(), "hr_people");
    clock.set(new Date("2026-06-10T12:00:00Z"));
    await ok("POST", `${RECS}/${early}/apply`, {});
    clock.set(new Date("2026-06-12T12:00:00Z"));
    await ok("POST", `${RECS}/${early}/revert`);
    clock.set(new Date("2026-06-20T08:00:00Z"));
    const late = await recommend(await run(), "hr_people");
    await ok("POST", `${RECS}/${late}/apply`, {});
    clock.set(new Date("2026-06-30T18:00:00Z"));

    const all = await ok("GET", path(30));
    expect(all.markers).toEqual([
      {
        recommendation_id: early,
        layout: ZORDER,
        applied_at: "2026-06-10T12:00:00.000Z",
        applied_day: "2026-06-10",
        applied_by: expect.any(String),
        reverted_at: "2026-06-12T12:00:00.000Z",
      },
      expect.objectContaining({ recommendation_id: late, applied_day: "2026-06-20", reverted_at: null }),
    ]);
    // The window starts 2026-06-12 with days=19: reverted on that day, still shown; from 06-13, not.
    expect(
      (await ok("GET", path(19))).markers.map((m: { recommendation_id: string }) => m.recommendation_id),
    ).toEqual([early, late]);
    expect(
      (await ok("GET", path(18))).markers.map((m: { recommendation_id: string }) => m.recommendation_id),
    ).toEqual([late]);
    // A late apply stays marked however short the window.
    expect(
      (await ok("GET", path(1))).markers.map((m: { recommendation_id: string }) => m.recommendation_id),
    ).toEqual([late]);
    // The clock moved weeks on: a Viewer signs in afresh.
    const read = await plane.call("GET", path(), { token: (await plane.userWithRole("Viewer")).token });
    expect(read.status).toBe(200);
  });
});
