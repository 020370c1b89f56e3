/**
 * `POST /api/v1/catalog-connections/{connection_id}/sync` and what a sync's end records: the
 * payload (credentials for the agent, the minimum size setting, no table list), the refusals (409
 * inactive or overlapping, 422 on mode), the tables written part by part (each part once, in
 * order; an incremental sync's listings answered with the tables to read) and marked deleted by
 * full and incremental syncs within the catalog asked for, the connection's sync
 * status through every end (succeeded, failed, cancelled, reaped), and the credentials purged from
 * the job row at each end. Jobs are completed through the job service, as an agent would.
 */

import { ManualClock } from "@lakesmith/shared";
import { type CatalogSyncPayload, CatalogSyncPayloadSchema } from "@lakesmith/shared/catalogs";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import {
  ALL_SECRETS,
  adminJson,
  CATALOG_AGENT,
  fail,
  HIVE,
  lease,
  POLARIS,
  rawRow,
  sendParts,
  succeed,
  syncedTable,
  syncResult,
  WORKSPACE,
  WORKSPACE_SECRET,
} from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-05-01T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
});
afterAll(() => plane.close());

const BASE = "/api/v1/catalog-connections";
const GB = 2 ** 30;
let seq = 0;

async function connection(body: Record<string, unknown> = WORKSPACE) {
  const res = await admin("POST", BASE, { name: `sync-${++seq}`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function sync(id: string, query = "") {
  const res = await admin("POST", `${BASE}/${id}/sync${query}`);
  expect(res.status, res.text).toBe(202);
  return res.body as { id: string };
}

const payloadOf = async (jobId: string): Promise<CatalogSyncPayload> =>
  CatalogSyncPayloadSchema.parse((await plane.services.jobs.get(jobId))?.payload);
const get = async (id: string) => (await admin("GET", `${BASE}/${id}`)).body;
const tablesOf = async (id: string, query = "") => {
  const res = await admin("GET", `${BASE}/${id}/tables${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    total: number;
    items: { full_name: string; deleted_at: string | null; synced_at: string; size_bytes: number | null }[];
  };
};
const names = (page: { items: { full_name: string }[] }) => page.items.map((t) => t.full_name);

function expectPurged(rawJob: string) {
  for (const secret of ALL_SECRETS) expect(rawJob).not.toContain(secret);
}

describe("queuing a sync", () => {
  it("answers 202 with the job, whose payload carries the credentials and the minimum size, and sets the connection running", async () => {
    const c = await connection();
    const res = await admin("POST", `${BASE}/${c.id}/sync`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^job_/),
      connection_id: c.id,
      status: "queued",
      trigger: "manual",
      mode: "full",
      catalog: null,
      min_size_bytes: Math.floor(0.1 * GB),
      summary: null,
      error: null,
      created_at: clock.now().toISOString(),
      started_at: null,
      finished_at: null,
    });
    expect(res.text).not.toContain(WORKSPACE_SECRET);
    const job = await plane.services.jobs.get(res.body.id);
    expect(job).toMatchObject({
      kind: "catalog_sync",
      locations: [],
      endpoints: ["https://dbc-1.cloud.databricks.com:443"],
      requires: [],
      exclusion: "catalog_sync",
      locks: [`connection:${c.id}/`],
    });
    expect(job?.payload).toEqual({
      connection_id: c.id,
      connection: { ...WORKSPACE },
      mode: "full",
      min_size_bytes: Math.floor(0.1 * GB),
    });
    expect(await get(c.id)).toMatchObject({
      sync_status: "running",
      last_sync_job_id: res.body.id,
      next_sync_at: new Date(clock.now().getTime() + 24 * 3_600_000).toISOString(),
    });
  });

  it("hides the credentials from GET /api/v1/jobs and its list while the job waits", async () => {
    const c = await connection(POLARIS);
    const { id } = await sync(c.id);
    const one = await admin("GET", `/api/v1/jobs/${id}`);
    expect(one.body.payload.connection).toEqual({
      type: "polaris",
      catalog_url: POLARIS.catalog_url,
      warehouse: "analytics",
      client_id: "polaris-client",
      token_url: POLARIS.token_url,
      scope: POLARIS.scope,
    });
    expect(one.body.endpoints).toEqual(["https://polaris.example.com:443", "https://auth.example.com:443"]);
    const list = await admin("GET", "/api/v1/jobs?kind=catalog_sync&limit=1000");
    for (const text of [one.text, list.text])
      for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
  });

  it("names the catalog asked for, and takes the minimum size setting as it is when the sync is queued", async () => {
    const c = await connection();
    const setting = (gb: number) =>
      plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { min_eligible_table_size_gb: gb } });
    const before = await sync(c.id, "?catalog=main");
    expect(await payloadOf(before.id)).toMatchObject({
      catalog: "main",
      min_size_bytes: Math.floor(0.1 * GB),
    });
    expect((await setting(2.5)).status).toBe(200);
    try {
      await succeed(plane, before.id, syncResult([]));
      const after = await sync(c.id);
      expect((await payloadOf(after.id)).min_size_bytes).toBe(Math.floor(2.5 * GB));
      expect((await payloadOf(before.id)).min_size_bytes).toBe(Math.floor(0.1 * GB));
      await succeed(plane, after.id, syncResult([]));
    } finally {
      expect((await setting(0.1)).status).toBe(200);
    }
  });

  it("refuses a second sync while one is queued or running with 409 naming it, and takes one after it ends", async () => {
    const c = await connection();
    const first = await sync(c.id);
    const queued = await admin("POST", `${BASE}/${c.id}/sync?mode=full&catalog=other`);
    expect(queued.status).toBe(409);
    expect(queued.body.detail).toContain(`'${first.id}' queued`);
    const leased = await lease(plane, first.id);
    const running = await admin("POST", `${BASE}/${c.id}/sync`);
    expect(running.status).toBe(409);
    expect(running.body.detail).toContain(`'${first.id}' running`);
    await succeed(plane, leased, syncResult([]));
    expect((await admin("POST", `${BASE}/${c.id}/sync`)).status).toBe(202);
  });

  it("syncs two connections at once: the overlap rule is per connection", async () => {
    const a = await connection();
    const b = await connection();
    await sync(a.id);
    await sync(b.id);
  });

  it("queues exactly one sync when two requests race", async () => {
    const c = await connection();
    const answers = await Promise.all([1, 2, 3].map(() => admin("POST", `${BASE}/${c.id}/sync`)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 409, 409]);
  });

  it("refuses an inactive connection with 409, an incremental sync of another type with 422 on mode, an unknown one with 404", async () => {
    const inactive = await connection({ ...WORKSPACE, is_active: false });
    const refused = await admin("POST", `${BASE}/${inactive.id}/sync`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("inactive");
    for (const body of [HIVE, POLARIS]) {
      const c = await connection(body);
      const res = await admin("POST", `${BASE}/${c.id}/sync?mode=incremental`);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["mode"]);
    }
    expect((await admin("POST", `${BASE}/${inactive.id}/sync?mode=partial`)).status).toBe(422);
    expect((await admin("POST", `${BASE}/${inactive.id}/sync?catalog=`)).status).toBe(422);
    expect((await admin("POST", `${BASE}/con_missing/sync`)).status).toBe(404);
    expect((await get(inactive.id)).sync_status).toBe("idle");
  });
});

describe("a full sync's end", () => {
  let c: { id: string };
  let firstJob: string;
  beforeAll(async () => {
    c = await connection();
    firstJob = (await sync(c.id)).id;
    clock.advance(5_000);
    await succeed(
      plane,
      firstJob,
      syncResult([
        syncedTable("main.sales.orders", { size_bytes: 9 * GB, has_partitions: true }),
        syncedTable("main.sales.customers"),
        syncedTable("main.hr.people"),
        syncedTable("samples.tpch.lineitem", { format: "parquet", table_type: "EXTERNAL" }),
      ]),
    );
  });

  it("writes every reported table and sets the connection completed", async () => {
    expect(names(await tablesOf(c.id))).toEqual([
      "main.hr.people",
      "main.sales.customers",
      "main.sales.orders",
      "samples.tpch.lineitem",
    ]);
    const job = await plane.services.jobs.get(firstJob);
    expect(await get(c.id)).toMatchObject({
      sync_status: "completed",
      last_synced_at: job?.finishedAt?.toISOString(),
      last_sync_error: null,
      last_sync_job_id: firstJob,
      tables_count: 4,
    });
  });

  it("keeps counts only in the job's result, and no credential in its row", async () => {
    const job = await plane.services.jobs.get(firstJob);
    expect(job?.result).not.toHaveProperty("tables");
    expect(job?.result).toMatchObject({
      tables_count: 4,
      unchanged_count: 0,
      schemas_count: 3,
      tables_marked_deleted: 0,
      below_min_size: 2,
    });
    expect(job?.payload).toEqual({
      connection_id: c.id,
      connection: {
        type: "workspace",
        workspace_url: WORKSPACE.workspace_url,
        client_id: WORKSPACE.client_id,
      },
      mode: "full",
      min_size_bytes: Math.floor(0.1 * GB),
    });
    expectPurged(await rawRow(plane, "jobs", firstJob));
  });

  it("marks deleted what a later full sync no longer reports, and brings back what returns", async () => {
    clock.advance(60_000);
    const second = await sync(c.id);
    await succeed(
      plane,
      second.id,
      syncResult([
        syncedTable("main.sales.orders", { size_bytes: 10 * GB }),
        syncedTable("main.hr.people"),
        syncedTable("samples.tpch.lineitem"),
      ]),
    );
    const finished = (await plane.services.jobs.get(second.id))?.finishedAt?.toISOString();
    expect(names(await tablesOf(c.id))).toEqual([
      "main.hr.people",
      "main.sales.orders",
      "samples.tpch.lineitem",
    ]);
    const all = await tablesOf(c.id, "?include_deleted=true");
    expect(all.items.find((t) => t.full_name === "main.sales.customers")).toMatchObject({
      deleted_at: finished,
    });
    expect(all.items.filter((t) => t.deleted_at !== null)).toHaveLength(1);
    const detail = await admin("GET", `${BASE}/${c.id}/tables/main.sales.customers`);
    expect(detail.body).toMatchObject({ deleted_at: finished });
    expect((await get(c.id)).tables_count).toBe(3);
    const view = (await admin("GET", `/api/v1/jobs/${second.id}`)).body;
    expect(view.result).toMatchObject({ tables_count: 3, tables_marked_deleted: 1 });

    clock.advance(60_000);
    const third = await sync(c.id);
    await succeed(
      plane,
      third.id,
      syncResult([
        syncedTable("main.sales.orders"),
        syncedTable("main.sales.customers"),
        syncedTable("main.hr.people"),
        syncedTable("samples.tpch.lineitem"),
      ]),
    );
    expect((await admin("GET", `${BASE}/${c.id}/tables/main.sales.customers`)).body.deleted_at).toBeNull();
    expect((await get(c.id)).tables_count).toBe(4);
  });

  it("marks deleted only within the catalog a sync named", async () => {
    clock.advance(60_000);
    const scoped = await sync(c.id, "?catalog=samples");
    await succeed(plane, scoped.id, syncResult([], { catalogs: ["samples"] }));
    const live = names(await tablesOf(c.id));
    expect(live).toEqual(["main.hr.people", "main.sales.customers", "main.sales.orders"]);
    clock.advance(60_000);
    const main = await sync(c.id, "?catalog=main");
    await succeed(plane, main.id, syncResult([syncedTable("main.hr.people")]));
    expect(names(await tablesOf(c.id))).toEqual(["main.hr.people"]);
  });

  it("marks everything deleted when a full sync reports no table at all", async () => {
    const other = await connection();
    const a = await sync(other.id);
    await succeed(plane, a.id, syncResult([syncedTable("x.y.z")]));
    const b = await sync(other.id);
    await succeed(plane, b.id, syncResult([]));
    expect((await tablesOf(other.id)).total).toBe(0);
    expect((await tablesOf(other.id, "?include_deleted=true")).total).toBe(1);
  });
});

describe("an incremental sync", () => {
  it("answers each listing with the tables to read, confirms the unchanged, and marks deleted the rest", async () => {
    const c = await connection();
    const full = await sync(c.id);
    await succeed(
      plane,
      full.id,
      syncResult([
        syncedTable("main.s.kept", { updated_at: 1000 }),
        syncedTable("main.s.changed", { updated_at: 2000 }),
        syncedTable("main.s.unknown", { updated_at: null }),
        syncedTable("main.s.dropped", { updated_at: 4000 }),
        syncedTable("other.s.elsewhere", { updated_at: 3000 }),
      ]),
    );
    clock.advance(3_600_000);
    const res = await admin("POST", `${BASE}/${c.id}/sync?mode=incremental&catalog=main`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ mode: "incremental", catalog: "main" });
    const payload = await payloadOf(res.body.id);
    expect(payload.mode).toBe("incremental");
    // The payload names no table, however many the connection has.
    expect(payload).not.toHaveProperty("known");
    const job = await lease(plane, res.body.id);
    const listing = [
      { full_name: "main.s.kept", updated_at: 1000 },
      { full_name: "main.s.changed", updated_at: 5000 },
      { full_name: "main.s.unknown", updated_at: null },
      { full_name: "main.s.new", updated_at: 6000 },
    ];
    const [reply] = await sendParts(plane, job, [{ listed: listing }]);
    expect([...((reply?.read ?? []) as string[])].sort()).toEqual([
      "main.s.changed",
      "main.s.new",
      "main.s.unknown",
    ]);
    // The same listing again (its ack was lost): the same answer, applied once.
    const [again] = await sendParts(plane, job, [{ listed: listing }]);
    expect(again).toEqual(reply);
    await sendParts(
      plane,
      job,
      [
        {
          tables: [
            syncedTable("main.s.changed", { updated_at: 5000, size_bytes: 7 }),
            syncedTable("main.s.unknown", { updated_at: null }),
            syncedTable("main.s.new", { updated_at: 6000 }),
          ],
        },
      ],
      2,
    );
    await succeed(plane, job, {
      ...syncResult([]).result,
      mode: "incremental",
      tables_count: 3,
      unchanged_count: 1,
    });
    const finished = (await plane.services.jobs.get(res.body.id))?.finishedAt?.toISOString();
    const all = await tablesOf(c.id, "?include_deleted=true");
    const byName = Object.fromEntries(all.items.map((t) => [t.full_name, t]));
    expect(byName["main.s.kept"]).toMatchObject({ deleted_at: null, synced_at: finished });
    expect(byName["main.s.changed"]).toMatchObject({ deleted_at: null, size_bytes: 7, synced_at: finished });
    expect(byName["main.s.new"]).toMatchObject({ deleted_at: null });
    expect(byName["main.s.unknown"]).toMatchObject({ deleted_at: null });
    expect(byName["main.s.dropped"]).toMatchObject({ deleted_at: finished });
    // Outside the catalog synced: untouched.
    expect(byName["other.s.elsewhere"]).toMatchObject({ deleted_at: null });
    expect((await admin("GET", `/api/v1/jobs/${res.body.id}`)).body.result).toMatchObject({
      tables_count: 3,
      unchanged_count: 1,
      tables_marked_deleted: 1,
    });
  });

  it("asks the agent to read every listed table of a connection never synced, and one marked deleted", async () => {
    const c = await connection();
    const full = await sync(c.id);
    await succeed(plane, full.id, syncResult([syncedTable("main.s.gone", { updated_at: 10 })]));
    await succeed(plane, (await sync(c.id)).id, syncResult([]));
    const job = await lease(plane, (await sync(c.id, "?mode=incremental")).id);
    const [reply] = await sendParts(plane, job, [
      {
        listed: [
          { full_name: "main.s.gone", updated_at: 10 },
          { full_name: "main.s.fresh", updated_at: 11 },
        ],
      },
    ]);
    expect(reply).toEqual({ read: ["main.s.gone", "main.s.fresh"] });
  });
});

describe("a sync's parts", () => {
  it("are applied once each, in order: a part sent again changes nothing, a gap or an old fence is refused", async () => {
    const c = await connection();
    const job = await lease(plane, (await sync(c.id)).id);
    await sendParts(plane, job, [{ tables: [syncedTable("main.a.one", { size_bytes: 1 })] }]);
    // Part 1 again, now carrying other facts: already applied, so it is only answered.
    await sendParts(plane, job, [{ tables: [syncedTable("main.a.one", { size_bytes: 999 })] }]);
    expect((await tablesOf(c.id)).items.map((t) => [t.full_name, t.size_bytes])).toEqual([["main.a.one", 1]]);
    const gap = await plane.services.jobs.part(CATALOG_AGENT.id, {
      job_id: job.id,
      fence: job.fence,
      seq: 3,
      part: { tables: [] },
    });
    expect(gap).toEqual({ kind: "refused", reason: "part 3 came before part 2" });
    const old = await plane.services.jobs.part(CATALOG_AGENT.id, {
      job_id: job.id,
      fence: job.fence - 1,
      seq: 2,
      part: { tables: [] },
    });
    expect(old.kind).toBe("refused");
    const stranger = await plane.services.jobs.part("agt_someone_else", {
      job_id: job.id,
      fence: job.fence,
      seq: 2,
      part: { tables: [] },
    });
    expect(stranger.kind).toBe("refused");
    const bad = await plane.services.jobs.part(CATALOG_AGENT.id, {
      job_id: job.id,
      fence: job.fence,
      seq: 2,
      part: {
        tables: [{ full_name: "main.a.two" }],
      },
    });
    expect(bad.kind).toBe("refused");
    if (bad.kind === "refused") expect(bad.reason).toContain("part 2: not a catalog sync part (tables.0.");
    await sendParts(plane, job, [{ tables: [syncedTable("main.a.two")] }], 2);
    await succeed(plane, job, syncResult([]).result);
    expect(names(await tablesOf(c.id))).toEqual(["main.a.one", "main.a.two"]);
    const ended = await plane.services.jobs.part(CATALOG_AGENT.id, {
      job_id: job.id,
      fence: job.fence,
      seq: 3,
      part: { tables: [] },
    });
    expect(ended.kind).toBe("refused");
  });

  it("of a sync that fails mid-way are kept, and nothing is marked deleted", async () => {
    const c = await connection();
    await succeed(
      plane,
      (await sync(c.id)).id,
      syncResult([syncedTable("main.a.x"), syncedTable("main.a.y")]),
    );
    const job = await lease(plane, (await sync(c.id)).id);
    await sendParts(plane, job, [
      { tables: [syncedTable("main.a.x", { size_bytes: 5 }), syncedTable("main.a.z")] },
    ]);
    const done = await plane.services.jobs.complete(CATALOG_AGENT.id, job.id, job.fence, "failed", {
      error: "the catalog went away",
      retryable: false,
    });
    expect(done.kind).toBe("done");
    const live = await tablesOf(c.id);
    expect(live.items.map((t) => [t.full_name, t.size_bytes])).toEqual([
      ["main.a.x", 5],
      ["main.a.y", 500_000_000],
      ["main.a.z", 500_000_000],
    ]);
    expect(await get(c.id)).toMatchObject({
      sync_status: "failed",
      last_sync_error: "the catalog went away",
    });
  });

  it("of an earlier attempt do not count as seen by the attempt that succeeds", async () => {
    const c = await connection();
    await succeed(
      plane,
      (await sync(c.id)).id,
      syncResult([syncedTable("main.a.x"), syncedTable("main.a.y")]),
    );
    const id = (await sync(c.id)).id;
    const first = await lease(plane, id);
    await sendParts(plane, first, [{ tables: [syncedTable("main.a.x"), syncedTable("main.a.y")] }]);
    // The agent is lost; the job is handed out again and its second attempt no longer sees main.a.y.
    const retried = await plane.services.jobs.release(CATALOG_AGENT.id, id, first.fence, "agent lost");
    expect(retried.kind).toBe("done");
    const second = await lease(plane, id);
    expect(second.fence).toBeGreaterThan(first.fence);
    await sendParts(plane, second, [{ tables: [syncedTable("main.a.x")] }]);
    await succeed(plane, second, syncResult([]).result);
    expect(names(await tablesOf(c.id))).toEqual(["main.a.x"]);
    expect((await admin("GET", `/api/v1/jobs/${id}`)).body.result).toMatchObject({
      tables_marked_deleted: 1,
    });
  });
});

describe("a sync that does not succeed", () => {
  it("sets the connection failed with the agent's error, keeps its tables, and purges the credentials", async () => {
    const c = await connection();
    const ok = await sync(c.id);
    await succeed(plane, ok.id, syncResult([syncedTable("main.a.b")]));
    const lastSynced = (await get(c.id)).last_synced_at;
    const bad = await sync(c.id);
    await fail(plane, bad.id, "the catalog answered 403: PERMISSION_DENIED");
    expect(await get(c.id)).toMatchObject({
      sync_status: "failed",
      last_sync_error: "the catalog answered 403: PERMISSION_DENIED",
      last_synced_at: lastSynced,
      tables_count: 1,
    });
    expectPurged(await rawRow(plane, "jobs", bad.id));
    // The next success clears the error.
    const again = await sync(c.id);
    await succeed(plane, again.id, syncResult([syncedTable("main.a.b")]));
    expect(await get(c.id)).toMatchObject({ sync_status: "completed", last_sync_error: null });
  });

  it("sets the connection failed when the sync is cancelled before it started, and purges the credentials", async () => {
    const c = await connection(HIVE);
    const job = await sync(c.id);
    const res = await admin("POST", `/api/v1/jobs/${job.id}/cancel`);
    expect(res.status).toBe(202);
    expect(await get(c.id)).toMatchObject({
      sync_status: "failed",
      last_sync_error: "cancelled before it started",
    });
    expectPurged(await rawRow(plane, "jobs", job.id));
  });

  it("sets the connection failed when a running sync is cancelled and its agent confirms", async () => {
    const c = await connection();
    const job = await sync(c.id);
    const leased = await lease(plane, job.id);
    expect((await admin("POST", `/api/v1/jobs/${job.id}/cancel`)).status).toBe(202);
    expect((await get(c.id)).sync_status).toBe("running");
    const done = await plane.services.jobs.complete(
      "agt_catalogs_for_tests",
      job.id,
      leased.fence,
      "cancelled",
    );
    expect(done.kind).toBe("done");
    expect(await get(c.id)).toMatchObject({
      sync_status: "failed",
      last_sync_error: "the sync ended cancelled",
    });
    expectPurged(await rawRow(plane, "jobs", job.id));
  });

  it("stays running while a lost sync waits for another attempt, and fails after the last, purging the credentials then", async () => {
    const c = await connection();
    const job = await sync(c.id);
    const { leaseMs, retryBaseMs } = plane.services.jobs.timings;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await lease(plane, job.id);
      clock.advance(leaseMs + 1);
      await plane.services.jobs.reap();
      if (attempt < 3) {
        expect((await get(c.id)).sync_status).toBe("running");
        expect(await rawRow(plane, "jobs", job.id)).toContain(WORKSPACE_SECRET);
        clock.advance(retryBaseMs * 2 ** attempt + 1);
      }
    }
    expect((await plane.services.jobs.get(job.id))?.status).toBe("failed");
    expect(await get(c.id)).toMatchObject({
      sync_status: "failed",
      last_sync_error: "the lease lapsed after 3 attempts",
    });
    expectPurged(await rawRow(plane, "jobs", job.id));
  });

  it("sets the connection failed, writing nothing, when the agent's result is not a sync result", async () => {
    const c = await connection();
    const job = await sync(c.id);
    await succeed(plane, job.id, { tables: "all of them" });
    const view = await get(c.id);
    expect(view.sync_status).toBe("failed");
    expect(view.last_sync_error).toContain("not a catalog sync result");
    expect(view.tables_count).toBe(0);
    expectPurged(await rawRow(plane, "jobs", job.id));
  });

  it("writes nothing for a connection deleted while its sync ran", async () => {
    const c = await connection();
    const job = await sync(c.id);
    const leased = await lease(plane, job.id);
    expect((await admin("DELETE", `${BASE}/${c.id}?confirm=true`)).status).toBe(204);
    // The agent had not heard of the cancel yet and reports its tables.
    await sendParts(plane, leased, [{ tables: [syncedTable("main.a.b")] }]);
    const done = await plane.services.jobs.complete(
      "agt_catalogs_for_tests",
      job.id,
      leased.fence,
      "succeeded",
      { result: syncResult([syncedTable("main.a.b")]).result },
    );
    expect(done.kind).toBe("done");
    const [left] = await plane.services.db.all<{ n: number }>(
      sql`select count(*) as n from catalog_tables where connection_id = ${c.id}`,
    );
    expect(left?.n).toBe(0);
    expectPurged(await rawRow(plane, "jobs", job.id));
  });
});
