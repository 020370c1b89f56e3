import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall, createTable, finishOnboarding } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-03-10T10:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

const DAILY = { schedule_type: "daily", lookback_start: 15, lookback_end: 2, run_time_utc: "02:30" };
const BACKFILL = {
  schedule_type: "backfill",
  backfill_col: "event_date",
  backfill_start_date: "2026-01-01",
  backfill_end_date: "2026-01-31",
};
const schedulePath = (id: string, jobType?: string) =>
  `/api/v1/tables/${id}/schedule${jobType ? `?job_type=${jobType}` : ""}`;
const paths = async (res: Response) => ((await res.json()).errors ?? []).map((e: { path: string }) => e.path);

describe("creating schedules", () => {
  it("creates a daily crunch schedule when job_type is omitted, first due at the next run time", async () => {
    const table = await activeTable(plane, "s.daily");
    const res = await admin("POST", schedulePath(table.id), DAILY);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      table_id: table.id,
      job_type: "crunch",
      schedule_type: "daily",
      lookback_start: 15,
      lookback_end: 2,
      run_time_utc: "02:30",
      backfill_col: null,
      backfill_start_date: null,
      backfill_end_date: null,
      enabled: true,
      // Created at 10:00, so 02:30 comes next tomorrow.
      next_run_at: "2026-03-11T02:30:00.000Z",
      last_slot: null,
    });
  });

  it("creates a backfill schedule due at once", async () => {
    const table = await activeTable(plane, "s.backfill");
    const res = await admin("POST", schedulePath(table.id, "vacuum"), BACKFILL);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      job_type: "vacuum",
      schedule_type: "backfill",
      backfill_col: "event_date",
      run_time_utc: null,
      lookback_start: null,
      next_run_at: "2026-03-10T10:00:00.000Z",
    });
  });

  it("keeps one schedule per table and job type: 409 for a second, others side by side", async () => {
    const table = await activeTable(plane, "s.unique");
    expect((await admin("POST", schedulePath(table.id, "crunch"), DAILY)).status).toBe(201);
    const dup = await admin("POST", schedulePath(table.id, "crunch"), BACKFILL);
    expect(dup.status).toBe(409);
    expect((await dup.json()).detail).toContain(`PUT /api/v1/tables/${table.id}/schedule?job_type=crunch`);
    expect((await admin("POST", schedulePath(table.id, "vacuum"), DAILY)).status).toBe(201);
    expect((await admin("POST", schedulePath(table.id, "partition_expiration"), BACKFILL)).status).toBe(201);
    const got = await (await admin("GET", `/api/v1/tables/${table.id}`)).json();
    expect(Object.values(got.schedule).map((s) => (s as { job_type: string }).job_type)).toEqual([
      "crunch",
      "vacuum",
      "partition_expiration",
    ]);
  });

  it("accepts job_type in the body, and refuses a body that disagrees with the query", async () => {
    const table = await activeTable(plane, "s.body-type");
    const res = await admin("POST", schedulePath(table.id), { ...DAILY, job_type: "vacuum" });
    expect(res.status).toBe(201);
    expect((await res.json()).job_type).toBe("vacuum");
    const clash = await admin("POST", schedulePath(table.id, "crunch"), {
      ...DAILY,
      job_type: "partition_expiration",
    });
    expect(clash.status).toBe(422);
    expect(await paths(clash)).toEqual(["job_type"]);
  });

  it("rejects a schedule while onboarding is pending with 409 that says why", async () => {
    const table = await createTable(plane, "s.pending");
    const res = await admin("POST", schedulePath(table.id), DAILY);
    expect(res.status).toBe(409);
    const detail = (await res.json()).detail;
    expect(detail).toContain("'pending'");
    expect(detail).toContain("only once onboarding is active");
  });

  it("rejects a schedule while onboarding is failed or retrying with 409", async () => {
    const table = await createTable(plane, "s.failed");
    await finishOnboarding(plane, table.id, { error: "access denied" });
    const failed = await admin("POST", schedulePath(table.id), DAILY);
    expect(failed.status).toBe(409);
    expect((await failed.json()).detail).toContain("'failed'");
    await admin("POST", `/api/v1/onboarding/${table.id}/retry`);
    const retrying = await admin("POST", schedulePath(table.id), DAILY);
    expect(retrying.status).toBe(409);
    expect((await retrying.json()).detail).toContain("'retry'");
  });

  it("answers 404 for an unknown table", async () => {
    expect((await admin("POST", schedulePath("tbl_nope"), DAILY)).status).toBe(404);
  });

  it("refuses vacuum on a hive table and partition expiration on an iceberg table (422 on job_type)", async () => {
    const hive = await activeTable(plane, "s.hive", { format: "hive" });
    const vacuum = await admin("POST", schedulePath(hive.id, "vacuum"), DAILY);
    expect(vacuum.status).toBe(422);
    expect(await paths(vacuum)).toEqual(["job_type"]);
    expect((await admin("POST", schedulePath(hive.id, "crunch"), DAILY)).status).toBe(201);
    const iceberg = await activeTable(plane, "s.iceberg", { format: "iceberg" });
    expect((await admin("POST", schedulePath(iceberg.id, "partition_expiration"), DAILY)).status).toBe(422);
    expect((await admin("POST", schedulePath(iceberg.id, "vacuum"), DAILY)).status).toBe(201);
  });

  describe("validation", () => {
    let tableId: string;
    beforeAll(async () => {
      tableId = (await activeTable(plane, "s.validation")).id;
    });

    it.each([
      [{ ...DAILY, schedule_type: undefined }, ["schedule_type"]],
      [{ ...DAILY, schedule_type: "weekly" }, ["schedule_type"]],
      [{ schedule_type: "daily" }, ["lookback_start", "lookback_end", "run_time_utc"]],
      [{ ...DAILY, run_time_utc: "24:00" }, ["run_time_utc"]],
      [{ ...DAILY, run_time_utc: "2:30" }, ["run_time_utc"]],
      [{ ...DAILY, run_time_utc: "02:60" }, ["run_time_utc"]],
      [{ ...DAILY, lookback_start: 2, lookback_end: 15 }, ["lookback_start"]],
      [{ ...DAILY, lookback_start: 3, lookback_end: 3 }, ["lookback_start"]],
      [{ ...DAILY, lookback_end: -1 }, ["lookback_end"]],
      [{ ...DAILY, lookback_start: 1.5 }, ["lookback_start"]],
      [{ ...DAILY, backfill_col: "d" }, ["backfill_col"]],
      [{ ...DAILY, backfill_start_date: "2026-01-01" }, ["backfill_start_date"]],
      [{ schedule_type: "backfill" }, ["backfill_col", "backfill_start_date", "backfill_end_date"]],
      [{ ...BACKFILL, run_time_utc: "02:00" }, ["run_time_utc"]],
      [{ ...BACKFILL, lookback_start: 5 }, ["lookback_start"]],
      [{ ...BACKFILL, backfill_start_date: "2026-02-01" }, ["backfill_start_date"]],
      [{ ...BACKFILL, backfill_end_date: "2026-02-30" }, ["backfill_end_date"]],
      [{ ...BACKFILL, backfill_start_date: "01/01/2026" }, ["backfill_start_date"]],
      [{ ...BACKFILL, backfill_col: "" }, ["backfill_col"]],
      [{ ...DAILY, surprise: 1 }, ["(body)"]],
    ])("answers 422 naming the wrong fields for %j", async (body, fields) => {
      const res = await admin("POST", schedulePath(tableId), body);
      expect(res.status).toBe(422);
      expect(await paths(res)).toEqual(fields);
    });

    it("answers 422 for an unknown job_type", async () => {
      const res = await admin("POST", schedulePath(tableId, "optimize"), DAILY);
      expect(res.status).toBe(422);
      expect(await paths(res)).toEqual(["job_type"]);
    });
  });
});

describe("reading, updating and deleting schedules", () => {
  it("gets a schedule by job type (crunch by default) and 404s a missing one with a hint", async () => {
    const table = await activeTable(plane, "s.get");
    await admin("POST", schedulePath(table.id), DAILY);
    const got = await admin("GET", schedulePath(table.id));
    expect(got.status).toBe(200);
    expect((await got.json()).job_type).toBe("crunch");
    const missing = await admin("GET", schedulePath(table.id, "vacuum"));
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toContain("has no vacuum schedule");
    expect((await admin("GET", schedulePath("tbl_nope"))).status).toBe(404);
    expect((await admin("GET", schedulePath(table.id, "bogus"))).status).toBe(422);
  });

  it("updates the daily fields and moves next_run_at with the run time", async () => {
    const table = await activeTable(plane, "s.put");
    await admin("POST", schedulePath(table.id), DAILY);
    const res = await admin("PUT", schedulePath(table.id), { lookback_start: 30, run_time_utc: "22:00" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      lookback_start: 30,
      lookback_end: 2,
      run_time_utc: "22:00",
      next_run_at: "2026-03-10T22:00:00.000Z",
    });
  });

  it("disables and enables a schedule; enabling resumes at the next run time", async () => {
    const table = await activeTable(plane, "s.enable");
    await admin("POST", schedulePath(table.id), { ...DAILY, run_time_utc: "12:00" });
    const off = await admin("PUT", schedulePath(table.id), { enabled: false });
    expect(await off.json()).toMatchObject({ enabled: false });
    clock.advance(3 * 86_400_000);
    const on = await (await admin("PUT", schedulePath(table.id), { enabled: true })).json();
    expect(on).toMatchObject({ enabled: true, next_run_at: "2026-03-13T12:00:00.000Z" });
    clock.advance(-3 * 86_400_000);
  });

  it("refuses fields of the other type, a reversed range and an empty body on update with 422", async () => {
    const table = await activeTable(plane, "s.put-bad");
    await admin("POST", schedulePath(table.id), DAILY);
    await admin("POST", schedulePath(table.id, "vacuum"), BACKFILL);
    const foreign = await admin("PUT", schedulePath(table.id), { backfill_col: "x", enabled: false });
    expect(foreign.status).toBe(422);
    expect(await paths(foreign)).toEqual(["backfill_col"]);
    const reversed = await admin("PUT", schedulePath(table.id), { lookback_end: 20 });
    expect(reversed.status).toBe(422);
    expect(await paths(reversed)).toEqual(["lookback_start"]);
    expect((await admin("PUT", schedulePath(table.id), {})).status).toBe(422);
    const daily = await admin("PUT", schedulePath(table.id, "vacuum"), { run_time_utc: "01:00" });
    expect(daily.status).toBe(422);
    expect(await paths(daily)).toEqual(["run_time_utc"]);
    const late = await admin("PUT", schedulePath(table.id, "vacuum"), { backfill_start_date: "2026-03-01" });
    expect(await paths(late)).toEqual(["backfill_start_date"]);
    expect((await admin("PUT", schedulePath(table.id, "vacuum"), { schedule_type: "daily" })).status).toBe(
      422,
    );
    // Nothing changed.
    expect((await (await admin("GET", schedulePath(table.id))).json()).enabled).toBe(true);
  });

  it("updates a backfill's range, which arms it to fire again", async () => {
    const table = await activeTable(plane, "s.put-backfill");
    await admin("POST", schedulePath(table.id), BACKFILL);
    const res = await admin("PUT", schedulePath(table.id), { backfill_end_date: "2026-02-15" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      backfill_end_date: "2026-02-15",
      next_run_at: "2026-03-10T10:00:00.000Z",
    });
  });

  it("answers 404 to PUT and DELETE of a missing schedule or table", async () => {
    const table = await activeTable(plane, "s.missing");
    expect((await admin("PUT", schedulePath(table.id), { enabled: false })).status).toBe(404);
    expect((await admin("DELETE", schedulePath(table.id))).status).toBe(404);
    expect((await admin("PUT", schedulePath("tbl_nope"), { enabled: false })).status).toBe(404);
    expect((await admin("DELETE", schedulePath("tbl_nope"))).status).toBe(404);
  });

  it("deletes only the schedule of the given job type with 204", async () => {
    const table = await activeTable(plane, "s.delete");
    await admin("POST", schedulePath(table.id), DAILY);
    await admin("POST", schedulePath(table.id, "vacuum"), DAILY);
    expect((await admin("DELETE", schedulePath(table.id, "vacuum"))).status).toBe(204);
    expect((await admin("GET", schedulePath(table.id, "vacuum"))).status).toBe(404);
    expect((await admin("GET", schedulePath(table.id))).status).toBe(200);
    expect((await admin("DELETE", schedulePath(table.id))).status).toBe(204);
    expect((await (await admin("GET", `/api/v1/tables/${table.id}`)).json()).schedule).toEqual({
      crunch: null,
      vacuum: null,
      partition_expiration: null,
    });
  });
});

describe("schedule access", () => {
  it("lets a schedules:read key read schedules but not write them", async () => {
    // Access tokens are checked against the wall clock, so this clocked suite uses API keys.
    const table = await activeTable(plane, "s.access");
    await admin("POST", schedulePath(table.id), DAILY);
    const reader = await plane.apiKey(["schedules:read"]);
    expect((await plane.call("GET", schedulePath(table.id), { token: reader.key })).status).toBe(200);
    const put = await plane.call("PUT", schedulePath(table.id), {
      token: reader.key,
      body: { enabled: false },
    });
    expect(put.status).toBe(403);
  });

  it("needs schedules:write for an API key to create a schedule", async () => {
    const table = await activeTable(plane, "s.key");
    const tablesKey = await plane.apiKey(["tables:write"]);
    const refused = await plane.call("POST", schedulePath(table.id), { token: tablesKey.key, body: DAILY });
    expect(refused.status).toBe(403);
    const scheduleKey = await plane.apiKey(["schedules:write"]);
    const ok = await plane.call("POST", schedulePath(table.id), { token: scheduleKey.key, body: DAILY });
    expect(ok.status).toBe(201);
  });
});
