/**
 * Optimus submissions (issue 22, "API behaviour"), on a manual clock: validation, CRUD, an active
 * create triggering its first run (trigger `created`) and an inactive one queuing nothing, the
 * 15-minute check and once-a-day firing across a restart (a second control plane over the same
 * database), paused never fires, sync-now and its 409, retry's 422 and retry of a failed run, and
 * the delete cascade.
 */
import { ManualClock } from "@lakesmith/shared";
import { locationKey } from "@lakesmith/shared/locations";
import { QUERY_LOG_ANALYSIS_KIND } from "@lakesmith/shared/optimus";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { jobs, optimusRuns, optimusSubmissions } from "../src/db/schema.ts";
import { Keyring } from "../src/secrets/keyring.ts";
import { createServices } from "../src/services.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { lease } from "./support/catalogs.ts";

const clock = new ManualClock(new Date("2026-04-01T09:00:00Z"));
const AGENT = {
  id: "agt_optimus_for_tests",
  kinds: [QUERY_LOG_ANALYSIS_KIND],
  capabilities: ["s3"],
  allow: [locationKey("s3://logs")],
  endpoints: [] as string[],
};
let plane: TestPlane;

beforeAll(async () => {
  plane = await startTestPlane({ clock });
});
afterAll(() => plane.close());

const BASE = "/api/v1/optimus/runs";
const body = (extra: Record<string, unknown> = {}) => ({
  name: "spark prod",
  engine: "spark",
  daily_sync_time_utc: "10:07",
  query_logs_uri: "s3://logs/spark-events",
  ...extra,
});

async function create(extra: Record<string, unknown> = {}) {
  const res = await plane.call("POST", BASE, { token: ADMIN_KEY, body: body(extra) });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; status: string; lookback_days: number; active: boolean };
}

async function detail(id: string) {
  const res = await plane.call("GET", `${BASE}/${id}`, { token: ADMIN_KEY });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    status: string;
    last_run_status: string | null;
    last_run_error: string | null;
    latest_run: { job_id: string; trigger: string; status: string; result: unknown } | null;
    runs: { job_id: string; trigger: string; status: string; window_start: string; window_end: string }[];
  };
}

const runRows = (submissionId: string) =>
  plane.services.db.select().from(optimusRuns).where(eq(optimusRuns.submissionId, submissionId));
const scheduledRuns = async (submissionId: string) =>
  (await runRows(submissionId)).filter((r) => r.trigger === "schedule");

/** A submission that has not run yet: created paused (which queues nothing), then resumed (PATCH never queues). */
async function idle(extra: Record<string, unknown> = {}) {
  const { id } = await create({ ...extra, active: false });
  const resumed = await plane.call("PATCH", `${BASE}/${id}`, { token: ADMIN_KEY, body: { active: true } });
  expect(resumed.status).toBe(200);
  expect(await resumed.json()).toMatchObject({ active: true, status: "pending" });
  return id;
}

describe("validation", () => {
  it.each([
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ engine: "presto" }, "engine"],
    [{ lookback_days: 0 }, "lookback_days"],
    [{ lookback_days: 366 }, "lookback_days"],
    [{ daily_sync_time_utc: "24:00" }, "daily_sync_time_utc"],
    [{ daily_sync_time_utc: "7:30" }, "daily_sync_time_utc"],
    [{ query_logs_uri: "http://logs/x" }, "query_logs_uri"],
    [{ query_logs_uri: "/var/log/spark" }, "query_logs_uri"],
    [{ query_logs_uri: "gs://A/x" }, "query_logs_uri"],
    [{ query_logs_uri: "file://remote-host/x" }, "query_logs_uri"],
    [{ active: "yes" }, "active"],
  ])("refuses %j with a 422 naming %s", async (extra, field) => {
    const res = await plane.call("POST", BASE, { token: ADMIN_KEY, body: body(extra) });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { errors: { path: string }[] };
    expect(problem.errors.map((e) => e.path)).toContain(field);
  });

  it("takes every supported store and defaults lookback to 7 days and active to true", async () => {
    for (const uri of [
      "gs://logs-bucket/trino",
      "abfs://logs@acct1.dfs.core.windows.net/sql",
      "azure://acct1/logs/sql",
      "file:///var/log/spark",
    ]) {
      const created = await create({ query_logs_uri: uri });
      expect(created).toMatchObject({ lookback_days: 7, active: true, status: "running" });
      await plane.call("DELETE", `${BASE}/${created.id}`, { token: ADMIN_KEY });
    }
  });

  it("refuses a PATCH with a bad field, and answers 404 for an unknown id", async () => {
    const { id } = await create();
    const bad = await plane.call("PATCH", `${BASE}/${id}`, {
      token: ADMIN_KEY,
      body: { lookback_days: 400 },
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain("lookback_days");
    expect((await plane.call("GET", `${BASE}/opt_nope`, { token: ADMIN_KEY })).status).toBe(404);
    expect((await plane.call("POST", `${BASE}/opt_nope/sync-now`, { token: ADMIN_KEY })).status).toBe(404);
    await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY });
  });
});

describe("CRUD", () => {
  it("creates, lists by page, updates, pauses and deletes", async () => {
    const a = await create({ name: "a" });
    const b = await create({ name: "b", active: false, lookback_days: 30 });
    expect(b.status).toBe("paused");
    const page = await plane.call("GET", `${BASE}?limit=1`, { token: ADMIN_KEY });
    const first = (await page.json()) as { items: { id: string }[]; total: number; limit: number };
    expect(first.total).toBe(2);
    expect(first.items).toHaveLength(1);
    const second = (await (
      await plane.call("GET", `${BASE}?limit=1&offset=1`, { token: ADMIN_KEY })
    ).json()) as {
      items: { id: string }[];
    };
    expect(new Set([first.items[0]?.id, second.items[0]?.id])).toEqual(new Set([a.id, b.id]));

    const patched = await plane.call("PATCH", `${BASE}/${a.id}`, {
      token: ADMIN_KEY,
      body: { name: "renamed", daily_sync_time_utc: "23:45", active: false },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      name: "renamed",
      daily_sync_time_utc: "23:45",
      status: "paused",
    });
    // Pausing keeps the run its create queued; the status says paused all the same.
    expect(await detail(a.id)).toMatchObject({
      status: "paused",
      runs: [{ trigger: "created", status: "running" }],
      latest_run: { trigger: "created", status: "running" },
    });
    expect(await detail(b.id)).toMatchObject({ status: "paused", runs: [], latest_run: null });

    for (const id of [a.id, b.id])
      expect((await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY })).status).toBe(204);
    expect((await plane.call("GET", `${BASE}/${a.id}`, { token: ADMIN_KEY })).status).toBe(404);
  });
});

describe("the daily schedule", () => {
  it("fires at the first 15-minute check at or after the daily time, once a day across a restart; a paused submission never", async () => {
    // Created the day before: the run its create queued stands in for that day, not for this one.
    clock.set(new Date("2026-03-31T23:00:00Z"));
    const active = await create({ name: "daily", daily_sync_time_utc: "10:07", lookback_days: 3 });
    const paused = await create({ name: "paused", daily_sync_time_utc: "10:07", active: false });
    clock.set(new Date("2026-04-01T09:00:00Z"));
    expect((await plane.services.scheduler.tick()).optimus).toBe(0);

    // Before the check that follows 10:07 (10:15), nothing fires, however many ticks come.
    for (const at of ["10:00:00", "10:07:00", "10:14:59"]) {
      clock.set(new Date(`2026-04-01T${at}Z`));
      expect((await plane.services.scheduler.tick()).optimus).toBe(0);
    }
    clock.set(new Date("2026-04-01T10:15:00Z"));
    expect((await plane.services.scheduler.tick()).optimus).toBe(1);
    const fired = await detail(active.id);
    expect(fired.status).toBe("running");
    expect(fired.runs).toMatchObject([
      { trigger: "schedule", window_start: "2026-03-29", window_end: "2026-03-31" },
      { trigger: "created", window_start: "2026-03-28", window_end: "2026-03-30" },
    ]);

    // A restart: a second control plane over the same database fires nothing more that day.
    const database = await openNodeDatabase(plane.dbUrl);
    try {
      const restarted = createServices({ db: database.db, clock, secrets: Keyring.random() });
      for (const at of ["10:16:00", "12:30:00", "23:59:00"]) {
        clock.set(new Date(`2026-04-01T${at}Z`));
        expect((await restarted.scheduler.tick()).optimus).toBe(0);
      }
      // The next UTC day fires once more, at its own check.
      clock.set(new Date("2026-04-02T10:05:00Z"));
      expect((await restarted.scheduler.tick()).optimus).toBe(0);
      clock.set(new Date("2026-04-02T10:20:00Z"));
      const [a, b] = await Promise.all([restarted.scheduler.tick(), plane.services.scheduler.tick()]);
      expect(a.optimus + b.optimus).toBe(1);
    } finally {
      database.close();
    }
    expect(await scheduledRuns(active.id)).toHaveLength(2);
    expect((await scheduledRuns(active.id)).map((r) => r.slotDay).sort()).toEqual([
      "2026-04-01",
      "2026-04-02",
    ]);
    expect(await runRows(paused.id)).toHaveLength(0);
    expect((await detail(paused.id)).status).toBe("paused");

    // Resumed, it fires at the day's next check.
    await plane.call("PATCH", `${BASE}/${paused.id}`, { token: ADMIN_KEY, body: { active: true } });
    clock.set(new Date("2026-04-02T10:31:00Z"));
    expect((await plane.services.scheduler.tick()).optimus).toBe(1);
    for (const id of [active.id, paused.id])
      await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY });
  });

  it("does not read a window twice: created before its time, it first fires the next day", async () => {
    clock.set(new Date("2026-04-03T09:00:00Z"));
    const early = await create({ name: "early", daily_sync_time_utc: "10:07", lookback_days: 2 });
    for (const at of ["10:15:00", "23:45:00"]) {
      clock.set(new Date(`2026-04-03T${at}Z`));
      expect((await plane.services.scheduler.tick()).optimus).toBe(0);
    }
    clock.set(new Date("2026-04-04T10:15:00Z"));
    expect((await plane.services.scheduler.tick()).optimus).toBe(1);
    expect((await detail(early.id)).runs).toMatchObject([
      { trigger: "schedule", window_start: "2026-04-02", window_end: "2026-04-03" },
      { trigger: "created", window_start: "2026-04-01", window_end: "2026-04-02" },
    ]);
    await plane.call("DELETE", `${BASE}/${early.id}`, { token: ADMIN_KEY });
  });
});

describe("sync-now and retry", () => {
  it("queues a run out of cycle, 409 while it is active; retry is 422 unless failed and queues a new run of a failed one", async () => {
    clock.set(new Date("2026-04-03T08:00:00Z"));
    const id = await idle({ name: "manual" });
    const retryPending = await plane.call("POST", `${BASE}/${id}/retry`, { token: ADMIN_KEY });
    expect(retryPending.status).toBe(422);
    expect(JSON.stringify(await retryPending.json())).toContain("pending");

    const synced = await plane.call("POST", `${BASE}/${id}/sync-now`, { token: ADMIN_KEY });
    expect(synced.status).toBe(202);
    const run = (await synced.json()) as {
      job_id: string;
      trigger: string;
      status: string;
      submission_id: string;
    };
    expect(run).toMatchObject({ trigger: "sync_now", status: "running", submission_id: id });
    expect((await plane.call("POST", `${BASE}/${id}/sync-now`, { token: ADMIN_KEY })).status).toBe(409);
    expect((await plane.call("POST", `${BASE}/${id}/retry`, { token: ADMIN_KEY })).status).toBe(422);

    await end(run.job_id, "failed", { error: "the log folder is empty", retryable: false });
    const failed = await detail(id);
    expect(failed).toMatchObject({
      status: "failed",
      last_run_status: "failed",
      last_run_error: "the log folder is empty",
    });

    const retried = await plane.call("POST", `${BASE}/${id}/retry`, { token: ADMIN_KEY });
    expect(retried.status).toBe(202);
    const again = (await retried.json()) as { job_id: string; trigger: string };
    expect(again.trigger).toBe("retry");
    expect(again.job_id).not.toBe(run.job_id);
    expect((await detail(id)).status).toBe("running");

    await end(again.job_id, "succeeded", { result: { tables: 3 } });
    const done = await detail(id);
    expect(done).toMatchObject({ status: "succeeded", last_run_status: "succeeded", last_run_error: null });
    expect(done.latest_run).toMatchObject({
      job_id: again.job_id,
      status: "succeeded",
      result: { tables: 3 },
    });
    expect(done.runs.map((r) => r.trigger)).toEqual(["retry", "sync_now"]);
    expect((await plane.call("POST", `${BASE}/${id}/retry`, { token: ADMIN_KEY })).status).toBe(422);
    await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY });
  });
});

describe("create", () => {
  it("triggers the first run of an active submission over the lookback; an inactive one queues nothing", async () => {
    clock.set(new Date("2026-04-05T08:00:00Z"));
    const active = await create({ name: "triggered", lookback_days: 5, daily_sync_time_utc: "23:45" });
    expect(active.status).toBe("running");
    const shown = await detail(active.id);
    expect(shown.runs).toMatchObject([
      { trigger: "created", status: "running", window_start: "2026-03-31", window_end: "2026-04-04" },
    ]);
    expect(shown.latest_run).toMatchObject({ job_id: shown.runs[0]?.job_id, trigger: "created" });
    const job = await plane.services.jobs.get(shown.runs[0]?.job_id ?? "");
    expect(job).toMatchObject({
      kind: QUERY_LOG_ANALYSIS_KIND,
      status: "queued",
      payload: {
        submission_id: active.id,
        engine: "spark",
        query_logs_uri: "s3://logs/spark-events",
        window_start: "2026-03-31",
        window_end: "2026-04-04",
      },
    });
    // It is a run like sync-now's: another is a 409 while it is active.
    expect((await plane.call("POST", `${BASE}/${active.id}/sync-now`, { token: ADMIN_KEY })).status).toBe(
      409,
    );

    const inactive = await create({ name: "not yet", active: false });
    expect(inactive.status).toBe("paused");
    expect(await detail(inactive.id)).toMatchObject({ status: "paused", runs: [], latest_run: null });
    const queuedFor = (
      await plane.services.db.select().from(jobs).where(eq(jobs.kind, QUERY_LOG_ANALYSIS_KIND))
    ).filter((j) => (j.payload as { submission_id?: string }).submission_id === inactive.id);
    expect(queuedFor).toHaveLength(0);
    for (const id of [active.id, inactive.id])
      await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY });
  });

  it("creates an active submission with its first run or not at all", async () => {
    const db = plane.services.db;
    // The database refuses the run's job: the submission must not be left behind without its run.
    await db.run(
      sql.raw(`create trigger refuse_analysis before insert on jobs when new.kind = '${QUERY_LOG_ANALYSIS_KIND}'
        begin select raise(abort, 'no analysis jobs today'); end`),
    );
    try {
      const res = await plane.call("POST", BASE, { token: ADMIN_KEY, body: body({ name: "half made" }) });
      expect(res.status).toBe(500);
    } finally {
      await db.run(sql.raw("drop trigger refuse_analysis"));
    }
    const list = await plane.call("GET", `${BASE}?limit=100`, { token: ADMIN_KEY });
    const names = ((await list.json()) as { items: { name: string }[] }).items.map((i) => i.name);
    expect(names).not.toContain("half made");
    expect(
      await db.select().from(optimusSubmissions).where(eq(optimusSubmissions.name, "half made")),
    ).toEqual([]);
  });
});

describe("delete", () => {
  it("takes its runs with it and cancels the active one", async () => {
    const { id } = await create({ name: "doomed" });
    const first = (await detail(id)).runs[0]?.job_id ?? "";
    await end(first, "succeeded", { result: { tables: 1 } });
    const synced = (await (
      await plane.call("POST", `${BASE}/${id}/sync-now`, { token: ADMIN_KEY })
    ).json()) as {
      job_id: string;
    };
    expect((await runRows(id)).map((r) => r.trigger).sort()).toEqual(["created", "sync_now"]);
    expect((await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY })).status).toBe(204);
    expect(await runRows(id)).toHaveLength(0);
    expect((await plane.services.jobs.get(synced.job_id))?.status).toBe("cancelled");
    expect((await plane.services.jobs.get(first))?.status).toBe("succeeded");
    expect((await plane.call("DELETE", `${BASE}/${id}`, { token: ADMIN_KEY })).status).toBe(404);
  });
});

/** Leases the job to the Optimus agent and ends it as `outcome`. */
async function end(jobId: string, outcome: "succeeded" | "failed", detail: Record<string, unknown>) {
  const job = await lease(plane, jobId, AGENT);
  const done = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, outcome, detail);
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
}
