/**
 * Crunch jobs as the API shows them: the lists (per table and across tables, filters, paging,
 * newest first), the metrics of a job before and after the agent reports its `CrunchResult`, a
 * crunch that ran as optimize, scheduled runs, and who may read or trigger.
 */
import { ManualClock } from "@lakesmith/shared";
import type { CrunchResult } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall, FAKE_AGENT, leaseJob } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-04-20T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

const RESULT: CrunchResult = {
  job_type: "crunch",
  table_version_before: 7,
  committed_version: 8,
  files_before: 41,
  files_after: 4,
  bytes_before: 4_000_000,
  bytes_after: 1_000_000,
  drr: 75,
  rows_in: 10_000,
  rows_out: 10_000,
  partitions: [
    {
      partition: "event_date=2026-04-10",
      status: "crunched",
      files_before: 40,
      files_after: 4,
      bytes_before: 3_990_000,
      bytes_after: 990_000,
      rows: 9_990,
    },
    {
      partition: "event_date=2026-04-11",
      status: "skipped",
      reason: "already in shape",
      files_before: 1,
      files_after: 1,
      bytes_before: 10_000,
      bytes_after: 10_000,
      rows: 10,
    },
  ],
  partitions_crunched: 1,
  partitions_skipped: 1,
  settings: {
    compression: "zstd",
    compression_level: 9,
    row_group_size: 131_072,
    sort_columns: ["customer_id"],
    parquet_version: "v1",
    reason: "zstd(9) was the smallest of 2 trials",
    trials: [
      { settings: "zstd(9)", bytes: 1_000_000 },
      { settings: "snappy", bytes: 1_600_000 },
    ],
  },
  duration_ms: 12_345,
};

let seq = 0;
const table = () => activeTable(plane, `crunchjobs.t${++seq}`);
// One day: a crunch of one partition is one job (a longer range fans out to one job per day).
const LOOKBACK = { lookback_start: 9, lookback_end: 9 };

async function triggered(tableId: string, body: Record<string, unknown> = LOOKBACK) {
  const res = await admin("POST", `/api/v1/tables/${tableId}/crunch`, body);
  if (res.status !== 202) throw new Error(`trigger: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/** Leases the job to the fake agent and reports `outcome`, as the agent would. */
async function finish(jobId: string, result: Record<string, unknown> | null = { ...RESULT }) {
  const job = await leaseJob(plane, jobId);
  const done = await plane.services.jobs.complete(
    FAKE_AGENT.id,
    job.id,
    job.fence,
    result ? "succeeded" : "failed",
    result ? { result } : { error: "the commit conflicted 5 times", retryable: false },
  );
  expect(done.kind).toBe("done");
}

const get = async (path: string) => {
  const res = await admin("GET", path);
  expect(res.status, path).toBe(200);
  return res.json();
};
const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);

describe("the metrics of a crunch", () => {
  it("are null with a note while the job is queued", async () => {
    const { id } = await triggered((await table()).id);
    const body = await get(`/api/v1/crunch/${id}/metrics`);
    expect(body).toMatchObject({
      job: { id, status: "queued", summary: null },
      metrics: null,
      progress: null,
    });
    expect(body.metrics_note).toContain("queued");
  });

  it("carry the agent's progress while it runs", async () => {
    const { id } = await triggered((await table()).id);
    const job = await leaseJob(plane, id);
    const progress = { phase: "rewrite", partitions_done: 3, partitions_total: 10 };
    await plane.services.jobs.extend(FAKE_AGENT.id, id, job.fence, progress);
    const body = await get(`/api/v1/crunch/${id}/metrics`);
    expect(body).toMatchObject({
      job: { status: "running", started_at: expect.any(String) },
      progress,
      metrics: null,
    });
  });

  it("carry the agent's notes: a range that selected no file, named", async () => {
    const { id } = await triggered((await table()).id);
    const note =
      "no file fell in the range 2026-01-01 to 2026-01-31 (inclusive) of column event_date: nothing to crunch among the table's 41 files";
    await finish(id, { ...RESULT, committed_version: null, notes: [note] });
    const body = await get(`/api/v1/crunch/${id}/metrics`);
    expect(body.metrics.notes).toEqual([note]);
  });

  it("aggregate the agent's result once the job succeeded", async () => {
    const { id } = await triggered((await table()).id);
    clock.advance(60_000);
    await finish(id);
    const body = await get(`/api/v1/crunch/${id}/metrics`);
    expect(body.job).toMatchObject({
      id,
      status: "succeeded",
      job_type: "crunch",
      finished_at: "2026-04-20T10:01:00.000Z",
      summary: {
        drr: 75,
        bytes_before: 4_000_000,
        bytes_after: 1_000_000,
        files_before: 41,
        files_after: 4,
        committed_version: 8,
      },
    });
    expect(body.progress).toBeNull();
    expect(body.metrics_note).toBeNull();
    expect(body.metrics).toEqual({
      job_type: "crunch",
      job_type_reason: null,
      notes: [],
      drr: 75,
      bytes_before: 4_000_000,
      bytes_after: 1_000_000,
      bytes_saved: 3_000_000,
      files_before: 41,
      files_after: 4,
      rows_in: 10_000,
      rows_out: 10_000,
      partitions_crunched: 1,
      partitions_skipped: 1,
      partitions: RESULT.partitions,
      settings: RESULT.settings,
      duration_ms: 12_345,
      table_version_before: 7,
      committed_version: 8,
      validation: { rows_match: true },
    });
  });

  it("say why they are missing when the job failed, or when the result is not a crunch result", async () => {
    const failed = await triggered((await table()).id);
    await finish(failed.id, null);
    const body = await get(`/api/v1/crunch/${failed.id}/metrics`);
    expect(body).toMatchObject({
      job: { status: "failed", error: "the commit conflicted 5 times" },
      metrics: null,
    });
    expect(body.metrics_note).toContain("the commit conflicted 5 times");

    const garbled = await triggered((await table()).id);
    await finish(garbled.id, { job_type: "crunch", drr: "a lot" });
    const odd = await get(`/api/v1/crunch/${garbled.id}/metrics`);
    expect(odd).toMatchObject({ job: { status: "succeeded", summary: null }, metrics: null });
    expect(odd.metrics_note).toContain("not a crunch result");
  });

  it("answer 404 for an unknown id and for a job that is not a crunch", async () => {
    expect((await admin("GET", "/api/v1/crunch/job_nope/metrics")).status).toBe(404);
    const t = await table();
    expect((await admin("GET", `/api/v1/crunch/${t.onboarding_job_id}/metrics`)).status).toBe(404);
  });
});

describe("a crunch that ran as optimize", () => {
  it("shows job_type optimize, and the job_type filter follows what ran", async () => {
    const t = await table();
    const { id } = await triggered(t.id);
    await finish(id, { ...RESULT, job_type: "optimize", job_type_reason: "a commit 3 minutes ago" });
    const [view] = (await get(`/api/v1/tables/${t.id}/crunch`)).items;
    expect(view).toMatchObject({ id, job_type: "optimize", requested_job_type: "crunch" });
    const metrics = await get(`/api/v1/crunch/${id}/metrics`);
    expect(metrics.metrics).toMatchObject({
      job_type: "optimize",
      job_type_reason: "a commit 3 minutes ago",
    });

    const second = await triggered(t.id);
    expect(ids(await get(`/api/v1/tables/${t.id}/crunch?job_type=optimize`))).toEqual([id]);
    expect(ids(await get(`/api/v1/tables/${t.id}/crunch?job_type=crunch`))).toEqual([second.id]);
    expect(ids(await get(`/api/v1/crunch?table_id=${t.id}&job_type=optimize`))).toEqual([id]);
  });

  it("lists a job queued as optimize, and not a job of another kind", async () => {
    const t = await table();
    const { job } = await plane.services.jobs.enqueue({
      kind: "optimize",
      payload: { table_id: t.id, uri: `s3://lake/${t.name}`, format: "delta" },
      tableId: t.id,
    });
    const page = await get(`/api/v1/tables/${t.id}/crunch`);
    expect(ids(page)).toEqual([job.id]);
    expect(page.items[0]).toMatchObject({ job_type: "optimize", date_range: null, cluster_columns: [] });
    expect((await get(`/api/v1/crunch/${job.id}/metrics`)).job.id).toBe(job.id);
  });
});

describe("the crunch lists", () => {
  it("merge crunch and optimize jobs newest first, page by page", async () => {
    const t = await table();
    const made: string[] = [];
    for (const kind of ["crunch", "optimize", "optimize", "crunch", "optimize"]) {
      clock.advance(1000);
      const payload = { table_id: t.id, uri: `s3://lake/${t.name}`, format: "delta" };
      const { job } = await plane.services.jobs.enqueue({ kind, payload, tableId: t.id });
      made.push(job.id);
    }
    const newest = made.reverse();
    for (let offset = 0; offset < newest.length; offset++) {
      const page = await get(`/api/v1/tables/${t.id}/crunch?offset=${offset}&limit=1`);
      expect(page.total).toBe(5);
      expect(ids(page), `offset ${offset}`).toEqual([newest[offset]]);
    }
    expect(ids(await get(`/api/v1/crunch?table_id=${t.id}&offset=1&limit=3`))).toEqual(newest.slice(1, 4));
    expect(ids(await get(`/api/v1/crunch?table_id=${t.id}&offset=4&limit=3`))).toEqual(newest.slice(4));
  });

  let tableId: string;
  let newestFirst: string[];
  beforeAll(async () => {
    tableId = (await table()).id;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      const { id } = await triggered(tableId);
      made.push(id);
      if (i < 2) await finish(id, i === 0 ? { ...RESULT } : null);
    }
    newestFirst = made.reverse();
  });

  it("list a table's crunch jobs newest first as {items, total, offset, limit}", async () => {
    const page = await get(`/api/v1/tables/${tableId}/crunch`);
    expect(Object.keys(page).sort()).toEqual(["items", "limit", "offset", "total"]);
    expect(page).toMatchObject({ total: 3, offset: 0, limit: 100 });
    expect(ids(page)).toEqual(newestFirst);
    expect(page.items.map((i: { status: string }) => i.status)).toEqual(["queued", "failed", "succeeded"]);
  });

  it("page with offset and limit", async () => {
    const page = await get(`/api/v1/tables/${tableId}/crunch?offset=1&limit=1`);
    expect(page).toMatchObject({ total: 3, offset: 1, limit: 1 });
    expect(ids(page)).toEqual([newestFirst[1]]);
  });

  it("filter by status", async () => {
    const page = await get(`/api/v1/tables/${tableId}/crunch?status=succeeded`);
    expect(page.total).toBe(1);
    expect(ids(page)).toEqual([newestFirst[2]]);
  });

  it("list every table's crunches, filtered by table, status and job type", async () => {
    const all = await get("/api/v1/crunch?limit=1000");
    expect(all.total).toBeGreaterThan(3);
    expect(ids(all)).toEqual(expect.arrayContaining(newestFirst));
    const created = all.items.map((i: { created_at: string }) => i.created_at);
    expect(created).toEqual([...created].sort().reverse());
    expect(ids(await get(`/api/v1/crunch?table_id=${tableId}`))).toEqual(newestFirst);
    expect(ids(await get(`/api/v1/crunch?table_id=${tableId}&status=failed`))).toEqual([newestFirst[1]]);
    expect(ids(await get(`/api/v1/crunch?table_id=${tableId}&job_type=crunch`))).toEqual(newestFirst);
    expect((await get("/api/v1/crunch?table_id=tbl_none")).total).toBe(0);
    const onboardingJob = (await plane.services.tables.find(tableId))?.onboardingJobId;
    expect(ids(all)).not.toContain(onboardingJob);
  });

  it.each([
    ["status=done", "status"],
    ["job_type=vacuum", "job_type"],
    ["limit=0", "limit"],
    ["offset=-1", "offset"],
  ])("refuse %s with 422 naming it", async (query, field) => {
    for (const path of [`/api/v1/tables/${tableId}/crunch`, "/api/v1/crunch"]) {
      const res = await admin("GET", `${path}?${query}`);
      expect(res.status, path).toBe(422);
      expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual([field]);
    }
  });

  it("answer 404 for a table that does not exist and never had a crunch", async () => {
    expect((await admin("GET", "/api/v1/tables/tbl_nope/crunch")).status).toBe(404);
  });

  it("keep a deleted table's crunch history", async () => {
    const t = await table();
    const { id } = await triggered(t.id);
    await finish(id);
    expect((await admin("DELETE", `/api/v1/tables/${t.id}`)).status).toBe(204);
    expect(ids(await get(`/api/v1/tables/${t.id}/crunch`))).toEqual([id]);
  });
});

describe("scheduled crunches", () => {
  it("appear in the lists and hold back a manual trigger while they are queued", async () => {
    const t = await table();
    const res = await admin("POST", `/api/v1/tables/${t.id}/schedule?job_type=crunch`, {
      schedule_type: "daily",
      lookback_start: 15,
      lookback_end: 2,
      run_time_utc: "23:00",
    });
    expect(res.status).toBe(201);
    const schedule = await res.json();
    const now = clock.now();
    clock.set(new Date("2026-04-20T23:00:00Z"));
    try {
      await plane.services.scheduler.tick();
    } finally {
      clock.set(now);
    }
    const page = await get(`/api/v1/tables/${t.id}/crunch`);
    expect(page.total).toBe(1);
    const [view] = page.items;
    expect(view).toMatchObject({
      job_type: "crunch",
      status: "queued",
      trigger: "schedule",
      schedule_id: schedule.id,
      date_range: { start: "2026-04-05", end: "2026-04-18" },
      cluster_columns: ["customer_id"],
    });
    expect(ids(await get(`/api/v1/crunch?table_id=${t.id}&status=queued`))).toEqual([view.id]);
    expect((await get(`/api/v1/crunch/${view.id}/metrics`)).job.trigger).toBe("schedule");

    const manual = await admin("POST", `/api/v1/tables/${t.id}/crunch`, LOOKBACK);
    expect(manual.status).toBe(409);
    expect((await manual.json()).detail).toContain(view.id);
  });
});

describe("cancelling a crunch", () => {
  const cancel = (id: string) => admin("POST", `/api/v1/crunch/${id}/cancel`);

  it("ends a queued crunch at once, refuses a second cancel with 409, and frees the table", async () => {
    const t = await table();
    const { id } = await triggered(t.id);
    const res = await cancel(id);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ id, status: "cancelled", finished_at: expect.any(String) });
    const again = await cancel(id);
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain("cancelled");
    expect((await admin("POST", `/api/v1/tables/${t.id}/crunch`, LOOKBACK)).status).toBe(202);
  });

  it("moves a running crunch to cancelling, which still holds back a trigger", async () => {
    const t = await table();
    const { id } = await triggered(t.id);
    await leaseJob(plane, id);
    const res = await cancel(id);
    expect(res.status).toBe(202);
    expect((await res.json()).status).toBe("cancelling");
    const trigger = await admin("POST", `/api/v1/tables/${t.id}/crunch`, LOOKBACK);
    expect(trigger.status).toBe(409);
    expect((await trigger.json()).detail).toContain(`'${id}' cancelling`);
  });

  it("answers 404 for a job that is not a crunch, and leaves it alone", async () => {
    const t = await activeTable(plane, `crunchjobs.t${++seq}`);
    const other = await plane.services.jobs.enqueue({
      kind: "vacuum",
      payload: { table_id: t.id, uri: `s3://lake/${t.name}`, format: "delta" },
      tableId: t.id,
    });
    expect((await cancel(other.job.id)).status).toBe(404);
    expect((await cancel("job_nope")).status).toBe(404);
    expect((await plane.services.jobs.get(other.job.id))?.status).toBe("queued");
  });
});

describe("access to crunch", () => {
  it("lets a Viewer read but not trigger", async () => {
    const t = await table();
    const { id } = await triggered(t.id);
    const viewer = (await plane.userWithRole("Viewer")).token;
    for (const path of [`/api/v1/tables/${t.id}/crunch`, "/api/v1/crunch", `/api/v1/crunch/${id}/metrics`])
      expect((await plane.call("GET", path, { token: viewer })).status, path).toBe(200);
    const other = await table();
    const res = await plane.call("POST", `/api/v1/tables/${other.id}/crunch`, {
      token: viewer,
      body: LOOKBACK,
    });
    expect(res.status).toBe(403);
  });

  it("refuses a key scoped to tables:read, and accepts one scoped to crunch:write", async () => {
    const t = await table();
    const tablesRead = (await plane.apiKey(["tables:read"])).key;
    const denied = await plane.call("POST", `/api/v1/tables/${t.id}/crunch`, {
      token: tablesRead,
      body: LOOKBACK,
    });
    expect(denied.status).toBe(403);
    expect((await plane.call("GET", "/api/v1/crunch", { token: tablesRead })).status).toBe(403);
    expect((await get(`/api/v1/tables/${t.id}/crunch`)).total).toBe(0);

    const crunchWrite = (await plane.apiKey(["crunch:write"])).key;
    const accepted = await plane.call("POST", `/api/v1/tables/${t.id}/crunch`, {
      token: crunchWrite,
      body: LOOKBACK,
    });
    expect(accepted.status).toBe(202);
    const crunchRead = (await plane.apiKey(["crunch:read"])).key;
    expect((await plane.call("GET", "/api/v1/crunch", { token: crunchRead })).status).toBe(200);
  });
});
