/**
 * Optimus ingestion (issue 22, design steps 1, 3 and 5): the tables a run's payload names (linked
 * and unlinked), the analysis's workload parts stored once (re-sent, refused when invalid or of a
 * table the run was not given), one `layout_scoring` job per workload table queued by a succeeded
 * run (none by a failed one) with its payload and routing as the kind derives them (a linked
 * table's job held until the scheduler gives it its catalog reference, whose secret no view shows),
 * the scoring's finish recording a recommendation and per-day rows (newest measurement wins;
 * day rows only without a recommendation; a result that does not parse records nothing), and the
 * submission delete taking all three tables with it; two scorings of a table never run together,
 * a crunch runs beside one. Real libSQL; jobs leased, parted and
 * completed through the job service, as the agent hub does.
 */
import { ManualClock } from "@lakesmith/shared";
import { locationKey } from "@lakesmith/shared/locations";
import {
  LAYOUT_SCORING_KIND,
  type LayoutScoringResult,
  type OptimusFilterSet,
  type OptimusWorkloadPart,
  QUERY_LOG_ANALYSIS_KIND,
  type QueryLogAnalysisPayload,
} from "@lakesmith/shared/optimus";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogId, tableId } from "../src/catalogs/ids.ts";
import {
  type Job,
  jobs,
  optimusRecommendations,
  optimusTableDays,
  optimusWorkloads,
} from "../src/db/schema.ts";
import { runFinishHooks } from "../src/jobs/complete.ts";
import { scoringDedupeKey } from "../src/optimus/scoring-queue.ts";
import { tableRef } from "../src/optimus/table-refs.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  adminJson,
  lease,
  POLARIS,
  POLARIS_SECRET,
  succeed,
  syncedTable,
  syncResult,
} from "./support/catalogs.ts";
import { FAKE_AGENT, RECIPE } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-05-01T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;

const LINEITEM = "analytics.tpch.sf001.lineitem";
const LINEITEM_URI = "s3://lake/warehouse/tpch/lineitem";
const LOG_AGENT = {
  id: "agt_optimus_logs",
  kinds: [QUERY_LOG_ANALYSIS_KIND],
  capabilities: ["s3"],
  allow: [locationKey("s3://logs")],
  endpoints: [] as string[],
};
const SCORING_AGENT = {
  id: "agt_optimus_scoring",
  kinds: [LAYOUT_SCORING_KIND],
  capabilities: ["s3"],
  allow: ["s3://lake/"],
  endpoints: ["https://polaris.example.com:443", "https://auth.example.com:443"],
};
const POLICY_LAYOUT = { type: "zorder", columns: ["l_shipdate", "l_partkey"] };

let polaris: string;
let linked: string;
let plain: string;

async function ok(method: string, path: string, body?: unknown, status = 200) {
  const res = await admin(method, path, body);
  expect(res.status, res.text).toBe(status);
  return res.body;
}

async function onboard(body: Record<string, unknown>) {
  const table = await ok("POST", "/api/v1/tables", body, 201);
  const job = await lease(plane, table.onboarding_job_id, {
    ...FAKE_AGENT,
    endpoints: SCORING_AGENT.endpoints,
  });
  const done = await plane.services.jobs.complete(job.leaseOwner ?? "", job.id, job.fence, "succeeded", {
    result: RECIPE as unknown as Record<string, unknown>,
  });
  expect(done.kind).toBe("done");
  return table.id as string;
}

const filterSet = (column: string, bytes: number, day = "2026-04-29"): OptimusFilterSet => ({
  predicates: [{ column, op: "=", values: ["7"] }],
  columns: [column],
  queries: 2,
  bytes_scanned: bytes,
  days: { [day]: { queries: 2, bytes_scanned: bytes } },
  examples: [`select * from t where ${column} = 7`],
});

const workload = (table: string, fqn: string, sets: OptimusFilterSet[]): OptimusWorkloadPart => ({
  type: "table_workload",
  table_fqn: fqn,
  table_id: table,
  queries: sets.reduce((n, s) => n + s.queries, 0),
  bytes_scanned: sets.reduce((n, s) => n + s.bytes_scanned, 0),
  filter_sets: sets,
  other: { queries: 1, bytes_scanned: 10 },
});

async function submission(name: string): Promise<string> {
  // 23:45: the scheduler's ticks in these tests never fire the daily run. Created paused, so that its
  // create triggers no run, then resumed (a PATCH never triggers one): the tests queue their own.
  const created = await ok(
    "POST",
    "/api/v1/optimus/runs",
    { name, engine: "spark", daily_sync_time_utc: "23:45", query_logs_uri: "s3://logs/spark", active: false },
    201,
  );
  await ok("PATCH", `/api/v1/optimus/runs/${created.id}`, { active: true });
  return created.id;
}

async function runJob(submissionId: string): Promise<Job> {
  const run = await ok("POST", `/api/v1/optimus/runs/${submissionId}/sync-now`, undefined, 202);
  return lease(plane, run.job_id ?? run.latest_run?.job_id ?? run.id, LOG_AGENT);
}

async function part(job: Job, seq: number, body: Record<string, unknown>) {
  return plane.services.jobs.part(LOG_AGENT.id, { job_id: job.id, fence: job.fence, seq, part: body });
}

async function end(job: Job, agent: string, outcome: "succeeded" | "failed", result?: object) {
  const done = await plane.services.jobs.complete(
    agent,
    job.id,
    job.fence,
    outcome,
    outcome === "failed"
      ? { error: "logs unreadable", retryable: false }
      : { result: result as Record<string, unknown> },
  );
  expect(done.kind).toBe("done");
}

const ANALYSIS_RESULT = {
  logs: 1,
  lines: 10,
  malformed_lines: 0,
  queries_read: 4,
  queries_in_window: 4,
  own_queries_skipped: 0,
  scans: 4,
  scans_matched: 4,
  unmatched: [],
  tables: 2,
};

const scoringJobs = (runId: string) =>
  plane.services.db
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, LAYOUT_SCORING_KIND)))
    .then((rows) => rows.filter((j) => (j.payload as { run_id?: string }).run_id === runId));

function scoringResult(extra: Partial<LayoutScoringResult> = {}): LayoutScoringResult {
  return {
    measured_at: clock.now().toISOString(),
    table_version: 3,
    files: 10,
    total_bytes: 1e9,
    sample_rows: 1000,
    pseudo_files: 10,
    method: "sample sorted and cut into 10 pseudo-files",
    current: { layout: null, predicted_skip_fraction: 0.1, measured_skip_fraction: 0.05 },
    candidates: [
      { layout: { type: "linear", columns: ["l_partkey"] }, skip_fraction: 0.8 },
      { layout: null, skip_fraction: 0.1 },
    ],
    recommendation: {
      layout: { type: "linear", columns: ["l_partkey"] },
      expected_skip_fraction: 0.8,
      bytes_saved_per_day: 5e8,
      rewrite_bytes: 2e9,
      reason: "linear on l_partkey skips 80% of the bytes scanned",
    },
    no_recommendation_reason: null,
    days: [
      { day: "2026-04-29", queries: 2, bytes_scanned: 100, measured_skip_fraction: 0.05 },
      { day: "2026-04-30", queries: 1, bytes_scanned: 50, measured_skip_fraction: null },
    ],
    ...extra,
  };
}

beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  polaris = (
    await ok(
      "POST",
      "/api/v1/catalog-connections",
      { name: "polaris", sync_interval_hours: 720, ...POLARIS },
      201,
    )
  ).id;
  const sync = await ok("POST", `/api/v1/catalog-connections/${polaris}/sync`, undefined, 202);
  await succeed(
    plane,
    sync.id,
    syncResult([
      syncedTable(LINEITEM, {
        schema: "tpch.sf001",
        name: "lineitem",
        format: "iceberg",
        location: LINEITEM_URI,
      }),
    ]),
  );
  linked = await onboard({ name: "lineitem_lake", catalog_connection_id: polaris, catalog_table: LINEITEM });
  plain = await onboard({ name: "events", uri: "s3://lake/events", format: "delta" });
  const catalog = catalogId({ connectionId: polaris, catalog: "analytics" });
  await ok(
    "POST",
    `/api/v1/catalogs/${catalog}/tables/${tableId({ connectionId: polaris, catalog: "analytics" }, LINEITEM)}/policies`,
    { actions: { improve_layout: { layout: POLICY_LAYOUT } } },
    201,
  );
});
afterAll(() => plane.close());

describe("the run's tables", () => {
  it("names a linked table by its catalog full name and an unlinked one by its name", async () => {
    const job = await runJob(await submission("tables"));
    const { tables } = job.payload as QueryLogAnalysisPayload;
    expect(tables).toContainEqual({
      table_fqn: LINEITEM,
      table_id: linked,
      names: ["tpch.sf001.lineitem", "lineitem_lake"],
      uris: [LINEITEM_URI],
    });
    expect(tables).toContainEqual({
      table_fqn: "events",
      table_id: plain,
      names: [],
      uris: ["s3://lake/events"],
    });
    await end(job, LOG_AGENT.id, "failed");
  });

  it("derives schema.table from a three-part name when no synced row says it", () => {
    expect(
      tableRef({
        id: "tbl_x",
        name: "x",
        uri: "s3://b/x",
        catalogFullName: "cat.sales.orders",
        syncedSchema: null,
        syncedName: null,
      }),
    ).toEqual({
      table_fqn: "cat.sales.orders",
      table_id: "tbl_x",
      names: ["sales.orders", "x"],
      uris: ["s3://b/x"],
    });
  });
});

describe("workload parts and the scoring jobs", () => {
  let submissionId: string;
  let run: Job;

  beforeAll(async () => {
    submissionId = await submission("ingest");
    run = await runJob(submissionId);
  });

  it("stores a part once, however often it is sent", async () => {
    const sets = [filterSet("l_partkey", 100), filterSet("l_shipdate", 300)];
    const first = await part(run, 1, workload(linked, LINEITEM, sets));
    expect(first.kind).toBe("applied");
    // Sent again (a redelivery), even with other content: answered, not applied.
    expect((await part(run, 1, workload(linked, LINEITEM, [filterSet("other", 1)]))).kind).toBe("applied");
    const rows = await plane.services.db
      .select()
      .from(optimusWorkloads)
      .where(eq(optimusWorkloads.runId, run.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      tableId: linked,
      submissionId,
      queries: 4,
      bytesScanned: 400,
      filterSets: sets,
    });
  });

  it("refuses a part that does not parse, or names a table the run was not given", async () => {
    const bad = await part(run, 2, { type: "table_workload", table_id: plain });
    expect(bad).toMatchObject({ kind: "refused" });
    expect(JSON.stringify(bad)).toContain("table_fqn");
    const stranger = await part(run, 2, workload("tbl_unknown", "x.y", [filterSet("a", 1)]));
    expect(stranger).toMatchObject({ kind: "refused" });
    expect(JSON.stringify(stranger)).toContain("tbl_unknown");
    expect((await part(run, 2, workload(plain, "events", [filterSet("customer_id", 50)]))).kind).toBe(
      "applied",
    );
    const rows = await plane.services.db
      .select()
      .from(optimusWorkloads)
      .where(eq(optimusWorkloads.runId, run.id));
    expect(rows.map((r) => r.tableId).sort()).toEqual([linked, plain].sort());
  });

  it("queues one scoring job per workload table when the run succeeds", async () => {
    await end(run, LOG_AGENT.id, "succeeded", ANALYSIS_RESULT);
    const queued = await scoringJobs(run.id);
    expect(queued).toHaveLength(2);
    const of = (t: string) => queued.find((j) => j.tableId === t) as Job;
    expect(of(plain)).toMatchObject({
      status: "queued",
      dedupeKey: scoringDedupeKey(run.id, plain),
      trigger: "optimus",
      notBefore: clock.now(),
    });
    expect(of(plain).payload).toEqual({
      submission_id: submissionId,
      run_id: run.id,
      table_fqn: "events",
      table_id: plain,
      uri: "s3://lake/events",
      format: "delta",
      // The recipe's cluster columns are no layout the files hold: no policy names one, so none.
      current_layout: null,
      filter_sets: [filterSet("customer_id", 50)],
      sample_max_rows: 1_000_000,
      min_gain: 0.1,
      // The run's window, and the table's own target file size (no policy names one).
      window_start: run.payload.window_start,
      window_end: run.payload.window_end,
      target_file_size_mb: 512,
    });
    // Routing as the kind's declaration derives it.
    const routing = plane.services.jobs.routingOf({
      kind: LAYOUT_SCORING_KIND,
      payload: of(plain).payload,
      tableId: plain,
    });
    expect(of(plain)).toMatchObject(routing);
    // The finish applied again queues nothing more.
    await runFinishHooks(plane.services.jobs.engine, [(await plane.services.jobs.get(run.id)) as Job]);
    expect(await scoringJobs(run.id)).toHaveLength(2);
    // The linked table's job waits for its catalog reference.
    expect(of(linked).notBefore.getTime()).toBeGreaterThan(Date.UTC(9000, 0, 1));
    expect(of(linked).payload).toMatchObject({
      current_layout: POLICY_LAYOUT,
      uri: LINEITEM_URI,
      format: "iceberg",
    });
  });

  it("gives the linked table's job its catalog reference at the next tick, its secret in no view", async () => {
    await plane.services.scheduler.tick(clock.now());
    const job = (await scoringJobs(run.id)).find((j) => j.tableId === linked) as Job;
    expect(job.notBefore.getTime()).toBe(clock.now().getTime());
    expect(job.payload).toMatchObject({
      catalog: { type: "iceberg_rest", table: "lineitem", client_secret: POLARIS_SECRET },
    });
    expect(job).toMatchObject(
      plane.services.jobs.routingOf({ kind: LAYOUT_SCORING_KIND, payload: job.payload, tableId: linked }),
    );
    expect(job.endpoints.length).toBeGreaterThan(0);
    for (const path of [`/api/v1/jobs/${job.id}`, "/api/v1/jobs?limit=1000"])
      expect((await admin("GET", path)).text).not.toContain(POLARIS_SECRET);
  });

  it("queues none when the run fails", async () => {
    const failing = await runJob(await submission("failing"));
    expect((await part(failing, 1, workload(plain, "events", [filterSet("a", 1)]))).kind).toBe("applied");
    await end(failing, LOG_AGENT.id, "failed");
    expect(await scoringJobs(failing.id)).toEqual([]);
  });

  it("records one recommendation and the day rows when a scoring succeeds", async () => {
    const job = await lease(
      plane,
      (await scoringJobs(run.id)).find((j) => j.tableId === linked)?.id ?? "",
      SCORING_AGENT,
    );
    await end(job, SCORING_AGENT.id, "succeeded", scoringResult());
    const recs = await plane.services.db
      .select()
      .from(optimusRecommendations)
      .where(eq(optimusRecommendations.submissionId, submissionId));
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({
      runId: run.id,
      scoringJobId: job.id,
      tableId: linked,
      tableFqn: LINEITEM,
      status: "open",
      layout: { type: "linear", columns: ["l_partkey"] },
      currentLayout: POLICY_LAYOUT,
      expectedSkipFraction: 0.8,
      currentSkipFraction: 0.1,
      measuredSkipFraction: 0.05,
      bytesSavedPerDay: 5e8,
      rewriteBytes: 2e9,
    });
    // The finish applied again inserts no second recommendation.
    await runFinishHooks(plane.services.jobs.engine, [(await plane.services.jobs.get(job.id)) as Job]);
    expect(
      await plane.services.db
        .select()
        .from(optimusRecommendations)
        .where(eq(optimusRecommendations.submissionId, submissionId)),
    ).toHaveLength(1);
    // The evidence's filter sets: the workload's, the largest first.
    expect(recs[0]?.evidence.filter_sets.map((s) => s.bytes_scanned)).toEqual([300, 100]);
    expect(recs[0]?.evidence).toMatchObject({ sample_rows: 1000, pseudo_files: 10, table_version: 3 });
    const days = await daysOf(submissionId, linked);
    expect(days).toEqual([
      expect.objectContaining({
        day: "2026-04-29",
        queries: 2,
        bytesScanned: 100,
        measuredSkipFraction: 0.05,
        predictedSkipFraction: null,
        runId: run.id,
      }),
      expect.objectContaining({
        day: "2026-04-30",
        queries: 1,
        bytesScanned: 50,
        measuredSkipFraction: null,
      }),
    ]);
  });

  it("records day rows only when nothing is recommended, and a newer measurement of a day wins", async () => {
    const job = await lease(
      plane,
      (await scoringJobs(run.id)).find((j) => j.tableId === plain)?.id ?? "",
      SCORING_AGENT,
    );
    await end(
      job,
      SCORING_AGENT.id,
      "succeeded",
      scoringResult({ recommendation: null, no_recommendation_reason: "no gain" }),
    );
    expect(
      await plane.services.db
        .select()
        .from(optimusRecommendations)
        .where(eq(optimusRecommendations.tableId, plain)),
    ).toEqual([]);
    expect((await daysOf(submissionId, plain)).map((d) => d.day)).toEqual(["2026-04-29", "2026-04-30"]);

    // A second run measures the linked table again a day later: its days replace the first run's;
    // the prediction is that of the open recommendation standing.
    clock.advance(86_400_000);
    const second = await runJob(submissionId);
    expect((await part(second, 1, workload(linked, LINEITEM, [filterSet("l_partkey", 70)]))).kind).toBe(
      "applied",
    );
    await end(second, LOG_AGENT.id, "succeeded", ANALYSIS_RESULT);
    await plane.services.scheduler.tick(clock.now());
    const rescore = await lease(plane, (await scoringJobs(second.id))[0]?.id ?? "", SCORING_AGENT);
    const later = scoringResult({
      recommendation: null,
      days: [{ day: "2026-04-30", queries: 9, bytes_scanned: 900, measured_skip_fraction: 0.5 }],
    });
    await end(rescore, SCORING_AGENT.id, "succeeded", later);
    const days = await daysOf(submissionId, linked);
    expect(days.find((d) => d.day === "2026-04-30")).toMatchObject({
      queries: 9,
      bytesScanned: 900,
      measuredSkipFraction: 0.5,
      predictedSkipFraction: 0.8,
      runId: second.id,
    });
    expect(days.find((d) => d.day === "2026-04-29")).toMatchObject({ queries: 2, runId: run.id });
  });

  it("records nothing for a result that does not parse, and the job still succeeds", async () => {
    clock.advance(86_400_000);
    const third = await runJob(submissionId);
    expect((await part(third, 1, workload(plain, "events", [filterSet("customer_id", 5)]))).kind).toBe(
      "applied",
    );
    await end(third, LOG_AGENT.id, "succeeded", ANALYSIS_RESULT);
    const job = await lease(plane, (await scoringJobs(third.id))[0]?.id ?? "", SCORING_AGENT);
    const before = await daysOf(submissionId, plain);
    await end(job, SCORING_AGENT.id, "succeeded", { days: "not a list" });
    expect((await plane.services.jobs.get(job.id))?.status).toBe("succeeded");
    expect(await daysOf(submissionId, plain)).toEqual(before);
  });

  it("the submission's delete removes its workloads, recommendations and day rows", async () => {
    const res = await admin("DELETE", `/api/v1/optimus/runs/${submissionId}`);
    expect(res.status, res.text).toBe(204);
    const { db } = plane.services;
    expect(
      await db.select().from(optimusWorkloads).where(eq(optimusWorkloads.submissionId, submissionId)),
    ).toEqual([]);
    expect(
      await db
        .select()
        .from(optimusRecommendations)
        .where(eq(optimusRecommendations.submissionId, submissionId)),
    ).toEqual([]);
    expect(
      await db.select().from(optimusTableDays).where(eq(optimusTableDays.submissionId, submissionId)),
    ).toEqual([]);
  });
});

describe("exclusivity", () => {
  it("never runs two scorings of one table together, and a crunch runs beside one", async () => {
    const table = await onboard({ name: "exclusive", uri: "s3://lake/exclusive", format: "delta" });
    const payload = {
      submission_id: "opt_x",
      run_id: "job_x",
      table_fqn: "exclusive",
      table_id: table,
      uri: "s3://lake/exclusive",
      format: "delta",
      current_layout: null,
      filter_sets: [],
    };
    const queue = async () =>
      (await plane.services.jobs.enqueue({ kind: LAYOUT_SCORING_KIND, payload, tableId: table })).job.id;
    const first = await queue();
    // Offered oldest first: the second is younger, so the first is offered (and holds the table).
    clock.advance(1);
    const second = await queue();
    await lease(plane, first, SCORING_AGENT);
    await expect(lease(plane, second, SCORING_AGENT)).rejects.toThrow("not offered");
    const crunch = await ok("POST", `/api/v1/tables/${table}/crunch`, { whole_table: true }, 202);
    expect((await lease(plane, crunch.id, FAKE_AGENT)).status).toBe("running");
  });
});

const daysOf = async (submissionId: string, table: string) =>
  (
    await plane.services.db
      .select()
      .from(optimusTableDays)
      .where(and(eq(optimusTableDays.submissionId, submissionId), eq(optimusTableDays.tableId, table)))
  ).sort((a, b) => a.day.localeCompare(b.day));
