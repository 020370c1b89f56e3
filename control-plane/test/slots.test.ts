import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall } from "./support/tables.ts";

let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane();
  admin = adminCall(plane);
});
afterAll(() => plane.close());

const daily = (run_time_utc: string, extra: Record<string, unknown> = {}) => ({
  schedule_type: "daily",
  lookback_start: 3,
  lookback_end: 1,
  run_time_utc,
  ...extra,
});
const slot = async (time: string) => {
  const res = await admin("GET", `/api/v1/slots/${time}`);
  expect(res.status).toBe(200);
  return res.json();
};

describe("slots", () => {
  it("reports an empty slot with the default capacity", async () => {
    expect(await slot("04:45")).toEqual({
      run_time_utc: "04:45",
      capacity: 100,
      scheduled: 0,
      remaining: 100,
      by_job_type: { crunch: 0, vacuum: 0, partition_expiration: 0 },
    });
  });

  it("counts enabled daily schedules at that minute only", async () => {
    const a = await activeTable(plane, "slot.a");
    const b = await activeTable(plane, "slot.b");
    await admin("POST", `/api/v1/tables/${a.id}/schedule`, daily("05:00"));
    await admin("POST", `/api/v1/tables/${a.id}/schedule?job_type=vacuum`, daily("05:00"));
    await admin("POST", `/api/v1/tables/${b.id}/schedule`, daily("05:00", { enabled: false }));
    await admin("POST", `/api/v1/tables/${b.id}/schedule?job_type=vacuum`, daily("05:01"));
    await admin("POST", `/api/v1/tables/${b.id}/schedule?job_type=partition_expiration`, {
      schedule_type: "backfill",
      backfill_col: "d",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-02",
    });
    expect(await slot("05:00")).toMatchObject({
      scheduled: 2,
      remaining: 98,
      by_job_type: { crunch: 1, vacuum: 1, partition_expiration: 0 },
    });
    expect((await slot("05:01")).scheduled).toBe(1);
    expect((await admin("GET", "/api/v1/slots/05%3A00")).status).toBe(200);
  });

  it("takes its capacity from the schedules_per_slot setting and refuses schedules beyond it with 409", async () => {
    const config = await admin("PUT", "/api/v1/config", { schedules_per_slot: 2 });
    expect(config.status).toBe(200);
    const t = await activeTable(plane, "slot.full");
    const u = await activeTable(plane, "slot.other");
    await admin("POST", `/api/v1/tables/${t.id}/schedule`, daily("06:00"));
    await admin("POST", `/api/v1/tables/${t.id}/schedule?job_type=vacuum`, daily("06:00"));
    expect(await slot("06:00")).toMatchObject({ capacity: 2, scheduled: 2, remaining: 0 });

    const full = await admin("POST", `/api/v1/tables/${u.id}/schedule`, daily("06:00"));
    expect(full.status).toBe(409);
    const problem = await full.json();
    expect(problem.detail).toContain("06:00 UTC slot is full");
    expect(problem.errors).toEqual([{ path: "run_time_utc", message: "slot is full" }]);

    // Disabled schedules take no place, but enabling or moving one into the full slot is refused.
    expect(
      (await admin("POST", `/api/v1/tables/${u.id}/schedule`, daily("06:00", { enabled: false }))).status,
    ).toBe(201);
    expect((await admin("PUT", `/api/v1/tables/${u.id}/schedule`, { enabled: true })).status).toBe(409);
    await admin("POST", `/api/v1/tables/${u.id}/schedule?job_type=vacuum`, daily("07:00"));
    expect(
      (await admin("PUT", `/api/v1/tables/${u.id}/schedule?job_type=vacuum`, { run_time_utc: "06:00" }))
        .status,
    ).toBe(409);
    // A schedule already in the slot can still be edited.
    expect((await admin("PUT", `/api/v1/tables/${t.id}/schedule`, { lookback_start: 9 })).status).toBe(200);
    // Freeing a place lets the next one in.
    await admin("DELETE", `/api/v1/tables/${t.id}/schedule?job_type=vacuum`);
    expect((await admin("PUT", `/api/v1/tables/${u.id}/schedule`, { enabled: true })).status).toBe(200);
    await admin("PUT", "/api/v1/config", { schedules_per_slot: 100 });
  });

  it.each(["24:00", "2:30", "12:60", "noon", "02:30:00", "0230"])(
    "answers 422 for the time %s",
    async (time) => {
      const res = await admin("GET", `/api/v1/slots/${time}`);
      expect(res.status).toBe(422);
      expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual(["run_time_utc"]);
    },
  );
});
