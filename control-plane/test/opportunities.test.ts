/**
 * Table opportunities: `GET /api/v1/tables/{table_id}/opportunities` before and after a measurement,
 * `POST .../opportunities:scan` (202, 409 beside an active scan, the payload the agent parses), the
 * finish hook that keeps each table's latest measurement, and `enqueueIfStale`: a scan when never
 * measured, older than 7 days or behind a committed version, deduplicated per table, day and version.
 */
import { ManualClock } from "@lakesmith/shared";
import type { CrunchResult } from "@lakesmith/shared/jobs";
import { OpportunityScanPayloadSchema, type OpportunityScanResult } from "@lakesmith/shared/opportunities";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Job, lakeTables } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall, FAKE_AGENT, leaseJob } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-03-01T08:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = () => activeTable(plane, `opportunities.t${++seq}`);
const read = async (tableId: string) => {
  const res = await admin("GET", `/api/v1/tables/${tableId}/opportunities`);
  expect(res.status).toBe(200);
  return res.json();
};
const scan = (tableId: string) => admin("POST", `/api/v1/tables/${tableId}/opportunities:scan`);

function measured(overrides: Partial<OpportunityScanResult> = {}): OpportunityScanResult {
  return {
    measured_at: clock.now().toISOString(),
    table_version: 3,
    method: "rewrite of 16 sampled files / 4000000 bytes with the crunch settings tuner (zstd level 3)",
    files: 48,
    total_bytes: 12_000_000,
    target_file_size_bytes: 1_048_576,
    small_files: 48,
    small_files_bytes: 12_000_000,
    small_file_share: 1,
    lone_small_files: 0,
    crunch_candidates: 48,
    crunch_candidate_bytes: 12_000_000,
    sample: {
      files: 16,
      bytes: 4_000_000,
      rows: 192_000,
      bytes_after: 2_400_000,
      files_after: 2,
      settings: "zstd",
    },
    potential_drr_percent: 40,
    ordering: { columns: ["customer_id"], source: "recipe", files_checked: 16, files_sorted: 0 },
    missing_ordering: true,
    suggested_columns: ["customer_id"],
    notes: [],
    duration_ms: 300,
    ...overrides,
  };
}

/** Leases the job as the fake agent and ends it. */
async function finish(jobId: string, outcome: { result: object } | { error: string }): Promise<Job> {
  const job = await leaseJob(plane, jobId);
  const done = await plane.services.jobs.complete(
    FAKE_AGENT.id,
    job.id,
    job.fence,
    "result" in outcome ? "succeeded" : "failed",
    "result" in outcome
      ? { result: outcome.result as Record<string, unknown> }
      : { error: outcome.error, retryable: false },
  );
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  return done.job;
}

/** A succeeded crunch of the table that committed `version`, as an agent would report it. */
async function crunchCommitted(tableId: string, version: number) {
  const res = await admin("POST", `/api/v1/tables/${tableId}/crunch`, { whole_table: true });
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  const result: CrunchResult = {
    job_type: "crunch",
    table_version_before: version - 1,
    committed_version: version,
    files_before: 48,
    files_after: 7,
    bytes_before: 12_000_000,
    bytes_after: 7_000_000,
    drr: 41.7,
    rows_in: 576_000,
    rows_out: 576_000,
    partitions: [],
    partitions_crunched: 2,
    partitions_skipped: 0,
    settings: null,
    duration_ms: 1000,
  };
  await finish(id, { result });
}

describe("GET and POST", () => {
  it("answers 404 for an unknown table, on both routes", async () => {
    expect((await admin("GET", "/api/v1/tables/tbl_missing/opportunities")).status).toBe(404);
    expect((await scan("tbl_missing")).status).toBe(404);
  });

  it("shows not_measured before the first scan, then the scan in progress", async () => {
    const { id } = await table();
    expect(await read(id)).toEqual({ table_id: id, status: "not_measured", measurement: null, scan: null });
    const res = await scan(id);
    expect(res.status).toBe(202);
    const job = await res.json();
    expect(job).toMatchObject({ table_id: id, status: "queued", trigger: "manual" });
    expect((await read(id)).scan).toMatchObject({ job_id: job.job_id, status: "queued" });
    const payload = OpportunityScanPayloadSchema.parse((await plane.services.jobs.get(job.job_id))?.payload);
    expect(payload).toMatchObject({
      table_id: id,
      uri: `s3://lake/opportunities.t${seq}`,
      format: "delta",
      target_file_size_mb: 512,
      recipe: { cluster_columns: ["customer_id"] },
      sample_max_files: 16,
      sample_max_bytes: 256 * 2 ** 20,
    });
  });

  it("refuses a second scan of the table while one is active with 409 naming it", async () => {
    const { id } = await table();
    const first = await (await scan(id)).json();
    const second = await scan(id);
    expect(second.status).toBe(409);
    expect((await second.json()).detail).toContain(first.job_id);
  });

  it("routes only the custom method's own spelling", async () => {
    const { id } = await table();
    expect((await admin("POST", `/api/v1/tables/${id}/opportunitiesXscan`)).status).toBe(404);
    expect((await admin("POST", `/api/v1/tables/${id}/opportunities:scanner`)).status).toBe(404);
  });
});

describe("the finish hook", () => {
  it("stores a succeeded scan's measurement as the table's latest", async () => {
    const { id } = await table();
    const job = await (await scan(id)).json();
    await finish(job.job_id, { result: measured() });
    const view = await read(id);
    expect(view.status).toBe("measured");
    expect(view.scan).toBeNull();
    expect(view.measurement).toEqual({ ...measured(), job_id: job.job_id });
    const latest = await plane.services.opportunities.latest(id);
    expect(latest).toMatchObject({
      tableVersion: 3,
      potentialDrrPercent: 40,
      smallFiles: 48,
      missingOrdering: true,
    });
  });

  it("keeps the last measurement when a scan fails, and a newer one over an older", async () => {
    const { id } = await table();
    const first = await (await scan(id)).json();
    await finish(first.job_id, { result: measured({ table_version: 5 }) });
    const failed = await (await scan(id)).json();
    await finish(failed.job_id, { error: "the agent lost its disk" });
    expect((await read(id)).measurement).toMatchObject({ job_id: first.job_id, table_version: 5 });
    // A scan that measured earlier but ends later does not hide the newer measurement.
    const late = await (await scan(id)).json();
    await finish(late.job_id, {
      result: measured({
        table_version: 4,
        measured_at: new Date(clock.now().getTime() - 60_000).toISOString(),
      }),
    });
    expect((await read(id)).measurement).toMatchObject({ job_id: first.job_id, table_version: 5 });
  });

  it("records nothing for a table deleted while its scan ran", async () => {
    const { id } = await table();
    const job = await (await scan(id)).json();
    const leased = await leaseJob(plane, job.job_id);
    expect((await admin("DELETE", `/api/v1/tables/${id}`)).status).toBe(204);
    const done = await plane.services.jobs.complete(FAKE_AGENT.id, leased.id, leased.fence, "succeeded", {
      result: measured() as unknown as Record<string, unknown>,
    });
    expect(done.kind).toBe("done");
    expect(await plane.services.opportunities.latest(id)).toBeUndefined();
  });

  it("records nothing for a result that is not a measurement", async () => {
    const { id } = await table();
    const job = await (await scan(id)).json();
    await finish(job.job_id, { result: { potential_drr_percent: "a lot" } });
    expect((await read(id)).status).toBe("not_measured");
  });
});

describe("enqueueIfStale", () => {
  const check = async (tableId: string) => {
    const row = await plane.services.tables.find(tableId);
    if (!row) throw new Error(`no table ${tableId}`);
    return plane.services.opportunities.enqueueIfStale(row, clock.now());
  };

  it("queues a scan of a table never measured, with trigger policy, and none beside it", async () => {
    const { id } = await table();
    const first = await check(id);
    expect(first).toMatchObject({ reason: "never_measured", created: true });
    expect(first.job).toMatchObject({ kind: "opportunity_scan", trigger: "policy", tableId: id });
    expect(await check(id)).toMatchObject({
      reason: "scan_active",
      created: false,
      job: { id: first.job?.id },
    });
  });

  it("answers unavailable, never throws, for a table whose catalog link is gone", async () => {
    const { id } = await table();
    await plane.services.db
      .update(lakeTables)
      .set({ catalogConnectionId: "conn_gone", catalogFullName: "main.sales.orders" })
      .where(eq(lakeTables.id, id));
    const result = await check(id);
    expect(result).toMatchObject({ reason: "unavailable", job: null, created: false });
    expect(result.detail).toContain("belongs to a deleted catalog connection");
  });

  it("queues nothing while the measurement is fresh, and again once it is older than 7 days", async () => {
    const { id } = await table();
    const first = await check(id);
    await finish(first.job?.id as string, { result: measured() });
    expect(await check(id)).toEqual({ reason: "fresh", job: null, created: false });
    clock.advance(7 * 86_400_000 + 1000);
    const again = await check(id);
    expect(again).toMatchObject({ reason: "older_than_7_days", created: true });
    await finish(again.job?.id as string, { result: measured() });
  });

  it("re-queues when a job committed a newer version, once per day and version", async () => {
    const { id } = await table();
    const first = await check(id);
    await finish(first.job?.id as string, { result: measured({ table_version: 3 }) });
    // A commit at or below the measured version changes nothing.
    await crunchCommitted(id, 3);
    expect((await check(id)).reason).toBe("fresh");
    await crunchCommitted(id, 4);
    const changed = await check(id);
    expect(changed).toMatchObject({ reason: "table_changed", created: true });
    expect(changed.job?.dedupeKey).toBe(
      `opportunity_scan:${id}:${clock.now().toISOString().slice(0, 10)}:v4`,
    );
    // The scan fails: the same day and version name the same job, never a second one.
    await finish(changed.job?.id as string, { error: "the agent lost its disk" });
    const same = await check(id);
    expect(same).toMatchObject({ reason: "table_changed", created: false, job: { id: changed.job?.id } });
    clock.advance(86_400_000);
    const nextDay = await check(id);
    expect(nextDay).toMatchObject({ reason: "table_changed", created: true });
    await finish(nextDay.job?.id as string, {
      result: measured({ table_version: 4, measured_at: clock.now().toISOString() }),
    });
    expect((await check(id)).reason).toBe("fresh");
  });
});
