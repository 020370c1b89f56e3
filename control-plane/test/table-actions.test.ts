/**
 * Document 2's actions and runs of catalog tables (`/api/v1/catalogs/{c}/tables/{t}/actions`,
 * `.../runs`) over real libSQL: the supported set per table type, 422s naming the field, the first
 * action onboarding the table and waiting for it, an action at a later time, retry, runs filtered
 * and paged, rerun. Jobs are leased and completed through the job service, as an agent would.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId, tableId } from "../src/catalogs/ids.ts";
import type { Job } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  adminJson,
  HIVE,
  lease,
  POLARIS,
  succeed,
  syncedTable,
  syncResult,
  WORKSPACE,
} from "./support/catalogs.ts";
import { FAKE_AGENT, RECIPE } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-05-01T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let unity: string;
let polaris: string;
let hive: string;

const AGENT = { ...FAKE_AGENT, kinds: [...FAKE_AGENT.kinds, "optimize"] };
const external = (fullName: string, extra: Parameters<typeof syncedTable>[1] = {}) =>
  syncedTable(fullName, { table_type: "EXTERNAL", location: `s3://lake/unity/${fullName}`, ...extra });

async function connection(body: Record<string, unknown>, name: string) {
  const res = await admin("POST", "/api/v1/catalog-connections", { name, sync_interval_hours: 720, ...body });
  expect(res.status, res.text).toBe(201);
  const sync = await admin("POST", `/api/v1/catalog-connections/${res.body.id}/sync`);
  expect(sync.status, sync.text).toBe(202);
  return { id: res.body.id as string, syncJob: sync.body.id as string };
}

/** The path of a synced table of `connectionId`: `.../catalogs/{catalog_id}/tables/{table_id}`. */
function path(connectionId: string, fullName: string) {
  const [catalog = ""] = fullName.split(".");
  const ref = { connectionId, catalog };
  return `/api/v1/catalogs/${catalogId(ref)}/tables/${encodeURIComponent(tableId(ref, fullName))}`;
}

/** Leases the job as the agent; undefined when it is not offered (held, or not due yet). */
async function leased(jobId: string): Promise<Job | undefined> {
  try {
    return await lease(plane, jobId, AGENT);
  } catch (err) {
    if (err instanceof Error && err.message.endsWith("was not offered")) return undefined;
    throw err;
  }
}

async function finish(jobId: string, outcome: { result: Record<string, unknown> } | { error: string }) {
  const job = await lease(plane, jobId, AGENT);
  const done = await plane.services.jobs.complete(
    AGENT.id,
    job.id,
    job.fence,
    "result" in outcome ? "succeeded" : "failed",
    "result" in outcome ? outcome : { error: outcome.error, retryable: false },
  );
  expect(done.kind).toBe("done");
}

const get = async (url: string, status = 200) => {
  const res = await admin("GET", url);
  expect(res.status, res.text).toBe(status);
  return res.body;
};
const post = async (url: string, body: unknown, status = 202) => {
  const res = await admin("POST", url, body);
  expect(res.status, res.text).toBe(status);
  return res.body;
};

/** Onboards the table's Lakesmith table by a first action, and finishes its onboarding. */
async function onboarded(url: string) {
  const first = await post(`${url}/actions`, { action: "compact" });
  const table = await plane.services.tables.find(first.lakesmith_table_id);
  await finish(table?.onboardingJobId as string, { result: { ...RECIPE } });
  await plane.services.scheduler.tick();
  await finish(first.action_id, { result: {} });
  return first.lakesmith_table_id as string;
}

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  const u = await connection(WORKSPACE, "unity");
  unity = u.id;
  await succeed(
    plane,
    u.syncJob,
    syncResult([
      external("main.sales.events", { has_partitions: true }),
      external("main.sales.flat", { has_partitions: false }),
      external("main.sales.held"),
      external("main.sales.failing"),
      external("main.sales.later"),
      external("main.sales.retried"),
      external("main.sales.runs"),
      syncedTable("main.sales.managed"),
    ]),
  );
  const p = await connection(POLARIS, "polaris");
  polaris = p.id;
  await succeed(
    plane,
    p.syncJob,
    syncResult([syncedTable("analytics.tpch.lineitem", { format: "iceberg", table_type: "ICEBERG" })]),
  );
  const h = await connection(HIVE, "hive");
  hive = h.id;
  await succeed(
    plane,
    h.syncJob,
    syncResult([syncedTable("hive.ops.events", { format: "parquet", table_type: "EXTERNAL_TABLE" })]),
  );
});
afterAll(() => plane.close());

const names = (list: { action: string }[]) => list.map((a) => a.action);

describe("GET .../actions: what each table supports", () => {
  it("lists every action for a partitioned Delta table, with parameters and this table's defaults", async () => {
    const body = await get(`${path(unity, "main.sales.events")}/actions`);
    expect(names(body.supported)).toEqual([
      "compress",
      "compact",
      "improve_layout",
      "expire_snapshots",
      "expire_partitions",
    ]);
    expect(body.unsupported).toEqual([]);
    const snapshots = body.supported.find((a: { action: string }) => a.action === "expire_snapshots");
    expect(snapshots).toMatchObject({ job_kind: "vacuum", destructive: true });
    expect(snapshots.parameters).toContainEqual(
      expect.objectContaining({ name: "retention_hours", type: "number", default: 168, required: false }),
    );
    const partitions = body.supported.find((a: { action: string }) => a.action === "expire_partitions");
    expect(partitions.parameters).toContainEqual(
      expect.objectContaining({ name: "retention_days", default: 30 }),
    );
    expect(body).toMatchObject({ items: [], total: 0, page_size: 50, next_page_token: null });
  });

  it("leaves out partition expiration for an unpartitioned Delta table, saying why", async () => {
    const body = await get(`${path(unity, "main.sales.flat")}/actions`);
    expect(names(body.unsupported)).toEqual(["expire_partitions"]);
    expect(body.unsupported[0].reason).toBe("the table is not partitioned");
  });

  it("offers an Iceberg table of Polaris the rewrites only: its snapshots expire through the catalog", async () => {
    const body = await get(`${path(polaris, "analytics.tpch.lineitem")}/actions`);
    expect(names(body.supported)).toEqual(["compress", "compact", "improve_layout"]);
    expect(body.unsupported.map((u: { reason: string }) => u.reason).join(" ")).toMatch(
      /committed through its catalog.*commits removes to a Delta log; this is a iceberg table/,
    );
    expect(body.supported.find((a: { action: string }) => a.action === "compress").parameters).toEqual([]);
  });

  it("offers a Hive Parquet table the rewrites only", async () => {
    const body = await get(`${path(hive, "hive.ops.events")}/actions`);
    expect(names(body.supported)).toEqual(["compress", "compact", "improve_layout"]);
    expect(names(body.unsupported)).toEqual(["expire_snapshots", "expire_partitions"]);
  });

  it("answers 404 for a table the catalog does not have, and 422 for a page_size beyond 500", async () => {
    const missing = await admin("GET", `${path(unity, "main.sales.nope")}/actions`);
    expect(missing.status, missing.text).toBe(404);
    expect(missing.text).toContain("GET /api/v1/catalogs lists the catalogs");
    const big = await admin("GET", `${path(unity, "main.sales.events")}/actions?page_size=501`);
    expect(big.status, big.text).toBe(422);
    expect(big.text).toContain("page_size");
  });
});

describe("POST .../actions: refusals", () => {
  it("is a 422 naming `action`, with the reason, for an action the table can't take; nothing is onboarded", async () => {
    const url = path(polaris, "analytics.tpch.lineitem");
    const res = await admin("POST", `${url}/actions`, { action: "expire_snapshots" });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors).toEqual([
      {
        path: "action",
        message: expect.stringContaining(
          "expires snapshots through that catalog, which is not supported yet",
        ),
      },
    ]);
    // Nothing was onboarded: the table has no runs, and no actions.
    expect(await get(`${url}/runs`)).toMatchObject({ items: [], total: 0, next_page_token: null });
    expect(await get(`${url}/actions`)).toMatchObject({ items: [], total: 0 });
    const token = await admin("GET", `${url}/runs?page_token=bm9wZQ`);
    expect(token.status, token.text).toBe(422);
  });

  it("is a 422 naming retention_hours below the format's default unless shorten_retention is sent", async () => {
    const url = path(unity, "main.sales.flat");
    const res = await admin("POST", `${url}/actions`, { action: "expire_snapshots", retention_hours: 24 });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ path: "retention_hours" });
    expect(res.body.errors[0].message).toContain("below the delta default of 168 h");
    const shortened = await post(`${url}/actions`, {
      action: "expire_snapshots",
      retention_hours: 24,
      shorten_retention: true,
    });
    expect(shortened.job).toMatchObject({ kind: "vacuum", trigger: "action" });
    expect(shortened.job.payload).toMatchObject({ retention_hours: 24, keep_table_retention: false });
  });

  it("is a 422 for unknown fields, a Z-order of one column, a schedule too far ahead", async () => {
    const url = `${path(unity, "main.sales.flat")}/actions`;
    for (const body of [
      { action: "compress", retention_hours: 5 },
      { action: "improve_layout", layout: { type: "zorder", columns: ["a"] } },
      { action: "improve_layout", layout: { type: "linear", columns: ["a", "a"] } },
      { action: "explode" },
    ]) {
      const res = await admin("POST", url, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(422);
    }
    const far = await admin("POST", url, { action: "compress", schedule: { at: "2027-06-01T00:00:00Z" } });
    expect(far.status, far.text).toBe(422);
    expect(far.body.errors[0].path).toBe("schedule.at");
  });

  it("needs partition_column for expire_partitions while the table is not onboarded", async () => {
    const res = await admin("POST", `${path(unity, "main.sales.events")}/actions`, {
      action: "expire_partitions",
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors[0].path).toBe("partition_column");
  });

  it("is a 422 naming table_id for a table its connection can't onboard (a Unity MANAGED table)", async () => {
    const res = await admin("POST", `${path(unity, "main.sales.managed")}/actions`, { action: "compress" });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors[0].path).toBe("table_id");
    expect(res.text).toContain("MANAGED");
  });
});

describe("the first action onboards the table and waits for it", () => {
  it("holds the job until onboarding succeeds, then releases it with the recipe; it runs and succeeds", async () => {
    const url = path(unity, "main.sales.held");
    const action = await post(`${url}/actions`, { action: "compress" });
    expect(action).toMatchObject({ action: "compress", status: "SCHEDULED", waiting_for_onboarding: true });
    expect(action.job).toMatchObject({ kind: "crunch", trigger: "action" });
    const table = await plane.services.tables.find(action.lakesmith_table_id);
    expect(table).toMatchObject({
      name: "unity.main.sales.held",
      catalogConnectionId: unity,
      catalogFullName: "main.sales.held",
      onboardingStatus: "pending",
    });
    // Not offered while onboarding is pending, tick or not.
    expect((await plane.services.scheduler.tick()).onboardingHold).toEqual({ released: 0, cancelled: 0 });
    expect(await leased(action.action_id)).toBeUndefined();

    await finish(table?.onboardingJobId as string, { result: { ...RECIPE } });
    expect((await plane.services.scheduler.tick()).onboardingHold).toEqual({ released: 1, cancelled: 0 });
    const released = await get(`${url}/actions/${action.action_id}`);
    expect(released).toMatchObject({ status: "QUEUED", waiting_for_onboarding: false, not_before: null });
    expect(released.job.payload).toMatchObject({ recipe: RECIPE, cluster_columns: ["customer_id"] });

    await finish(action.action_id, { result: { files_before: 10, files_after: 1 } });
    const done = await get(`${url}/actions/${action.action_id}`);
    expect(done).toMatchObject({ status: "SUCCEEDED", result: { files_before: 10, files_after: 1 } });
    const list = await get(`${url}/actions`);
    expect(list.items.map((a: { action_id: string }) => a.action_id)).toEqual([action.action_id]);
  });

  it("cancels the held job with the reason when onboarding fails, and refuses a next action with 409", async () => {
    const url = path(unity, "main.sales.failing");
    const action = await post(`${url}/actions`, { action: "expire_snapshots", retention_hours: 200 });
    // Not shortened on purpose: a table whose own retention is longer keeps it.
    expect(action.job.payload).toMatchObject({ retention_hours: 200, keep_table_retention: true });
    const table = await plane.services.tables.find(action.lakesmith_table_id);
    await finish(table?.onboardingJobId as string, { error: "no Delta log at the location" });
    expect((await plane.services.scheduler.tick()).onboardingHold).toEqual({ released: 0, cancelled: 1 });
    const cancelled = await get(`${url}/actions/${action.action_id}`);
    expect(cancelled.status).toBe("CANCELLED");
    expect(cancelled.error).toContain("no Delta log at the location");
    const next = await admin("POST", `${url}/actions`, { action: "compress" });
    expect(next.status, next.text).toBe(409);
    expect(next.text).toContain(`/api/v1/onboarding/${table?.id}/retry`);
  });
});

describe("actions on an onboarded table", () => {
  it("runs at `schedule.at`: not offered before it, offered after", async () => {
    const url = path(unity, "main.sales.later");
    await onboarded(url);
    const at = new Date(clock.now().getTime() + 3_600_000);
    const action = await post(`${url}/actions`, {
      action: "improve_layout",
      layout: { type: "zorder", columns: ["customer_id", "region"] },
      schedule: { at: at.toISOString() },
    });
    expect(action).toMatchObject({ status: "SCHEDULED", not_before: at.toISOString() });
    expect(action.job.payload).toMatchObject({
      layout: { type: "zorder", columns: ["customer_id", "region"] },
    });
    expect(await leased(action.action_id)).toBeUndefined();
    clock.set(new Date(at.getTime() + 1000));
    expect((await leased(action.action_id))?.id).toBe(action.action_id);
    expect((await get(`${url}/actions/${action.action_id}`)).status).toBe("RUNNING");
  });

  it("retries a failed action as a new job of the same parameters; a running or succeeded one is a 409", async () => {
    const url = path(unity, "main.sales.retried");
    await onboarded(url);
    const action = await post(`${url}/actions`, {
      action: "expire_partitions",
      retention_days: 7,
      dry_run: true,
    });
    expect(action.job.payload).toMatchObject({
      partition_column: "event_date",
      retention_days: 7,
      dry_run: true,
    });
    const early = await admin("POST", `${url}/actions/${action.action_id}`);
    expect(early.status, early.text).toBe(409);
    await finish(action.action_id, { error: "the agent lost its disk" });
    expect((await get(`${url}/actions/${action.action_id}`)).status).toBe("FAILED");

    const retried = await post(`${url}/actions/${action.action_id}`, undefined);
    expect(retried.action_id).not.toBe(action.action_id);
    expect(retried).toMatchObject({ action: "expire_partitions", status: "QUEUED" });
    expect(retried.job.payload).toEqual(action.job.payload);
    await finish(retried.action_id, { result: {} });
    const again = await admin("POST", `${url}/actions/${retried.action_id}`);
    expect(again.status, again.text).toBe(409);
    const list = await get(`${url}/actions?page_size=1`);
    expect(list.items.map((a: { action_id: string }) => a.action_id)).toEqual([retried.action_id]);
    const rest = await get(`${url}/actions?page_size=1&page_token=${list.next_page_token}`);
    expect(rest.items.map((a: { action_id: string }) => a.action_id)).toEqual([action.action_id]);
    // The first action (the onboarding compact) is on the third page.
    expect(list.total).toBe(3);
  });

  it("a linear layout goes to the crunch as its layout, at the file size of the table's policy; unknown action ids are 404", async () => {
    const url = path(unity, "main.sales.retried");
    await post(`${url}/policies`, { actions: { compact: {} }, target_file_size_mb: 32 }, 201);
    const action = await post(`${url}/actions`, {
      action: "improve_layout",
      layout: { type: "linear", columns: ["region", "customer_id"] },
    });
    expect(action.job.payload).toMatchObject({
      layout: { type: "linear", columns: ["region", "customer_id"] },
      // The policy's, not the table's own (512), as the policy's own runs write.
      target_file_size_mb: 32,
    });
    await get(`${url}/actions/job_nope`, 404);
    // A job of another table is not an action of this one.
    await get(`${path(unity, "main.sales.held")}/actions/${action.action_id}`, 404);
  });
});

describe("runs", () => {
  let url: string;
  let tableIdOf: string;
  const ids = (page: { items: { run_id: string }[] }) => page.items.map((r) => r.run_id);

  beforeAll(async () => {
    clock.set(new Date("2026-05-02T10:00:00Z"));
    url = path(unity, "main.sales.runs");
    tableIdOf = await onboarded(url);
  });

  it("lists every job of the table, newest first, with POLICY for schedule runs and ACTION for the rest", async () => {
    const schedule = await admin("POST", `/api/v1/tables/${tableIdOf}/schedule?job_type=crunch`, {
      schedule_type: "daily",
      lookback_start: 3,
      lookback_end: 1,
      run_time_utc: "11:00",
    });
    expect(schedule.status, schedule.text).toBe(201);
    clock.set(new Date("2026-05-02T11:00:00Z"));
    expect((await plane.services.scheduler.tick()).fired).toBe(1);

    const all = await get(`${url}/runs`);
    expect(all.items.map((r: { kind: string; trigger: string }) => [r.kind, r.trigger])).toEqual([
      ["crunch", "POLICY"],
      ["optimize", "ACTION"],
      ["onboarding", "ACTION"],
    ]);
    expect(all.items[0]).toMatchObject({ job_trigger: "schedule", action: "compress", status: "QUEUED" });
    expect(all.items[2]).toMatchObject({ job_trigger: "table_created", action: null, status: "SUCCEEDED" });
    expect(ids(await get(`${url}/runs?trigger=POLICY`))).toEqual([all.items[0].run_id]);
    expect(ids(await get(`${url}/runs?trigger=ACTION`))).toEqual([all.items[1].run_id, all.items[2].run_id]);
    expect(ids(await get(`${url}/runs?status=QUEUED`))).toEqual([all.items[0].run_id]);
    expect(ids(await get(`${url}/runs?status=SUCCEEDED&trigger=ACTION`))).toHaveLength(2);
    expect(ids(await get(`${url}/runs?status=FAILED`))).toEqual([]);
    expect(ids(await get(`${url}/runs?start=2026-05-02T10:30:00Z`))).toEqual([all.items[0].run_id]);
    expect(ids(await get(`${url}/runs?end=2026-05-02T10:30:00Z`))).toEqual([
      all.items[1].run_id,
      all.items[2].run_id,
    ]);
    const first = await get(`${url}/runs?page_size=2`);
    expect(ids(first)).toEqual([all.items[0].run_id, all.items[1].run_id]);
    expect(first.total).toBe(3);
    const second = await get(`${url}/runs?page_size=2&page_token=${first.next_page_token}`);
    expect(ids(second)).toEqual([all.items[2].run_id]);
    expect(second.next_page_token).toBeNull();
  });

  it("answers 422 for page_size beyond 500, an end before start, a bad token or status", async () => {
    for (const query of [
      "page_size=501",
      "start=2026-05-02T10:00:00Z&end=2026-05-01T10:00:00Z",
      "page_token=bm9wZQ",
      "status=DONE",
      "trigger=SCHEDULE",
    ]) {
      const res = await admin("GET", `${url}/runs?${query}`);
      expect(res.status, `${query}: ${res.text}`).toBe(422);
    }
  });

  it("reruns a finished run as a new job of the same payload; an active one is a 409", async () => {
    const [scheduled] = (await get(`${url}/runs?trigger=POLICY`)).items;
    const active = await admin("POST", `${url}/runs/${scheduled.run_id}`);
    expect(active.status, active.text).toBe(409);
    await finish(scheduled.run_id, { result: {} });
    const detail = await get(`${url}/runs/${scheduled.run_id}`);
    expect(detail).toMatchObject({ status: "SUCCEEDED", trigger: "POLICY" });
    const rerun = await post(`${url}/runs/${scheduled.run_id}`, undefined);
    expect(rerun).toMatchObject({
      kind: "crunch",
      trigger: "ACTION",
      job_trigger: "action",
      status: "QUEUED",
    });
    expect(rerun.job.payload).toEqual(detail.job.payload);
    // The rerun of a schedule's crunch is an action of the table now.
    expect((await get(`${url}/actions`)).items[0].action_id).toBe(rerun.run_id);
  });

  it("refuses to rerun an onboarding that succeeded, and answers 404 for a run of another table", async () => {
    const onboarding = (await get(`${url}/runs?trigger=ACTION`)).items.find(
      (r: { kind: string }) => r.kind === "onboarding",
    );
    const res = await admin("POST", `${url}/runs/${onboarding.run_id}`);
    expect(res.status, res.text).toBe(409);
    expect(res.text).toContain("onboarded already");
    await get(`${path(unity, "main.sales.held")}/runs/${onboarding.run_id}`, 404);
  });
});
