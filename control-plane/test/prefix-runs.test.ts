/**
 * A managed prefix's actions and runs through the API (document 1), without an agent: an action
 * queues its job and run row (202), refused with 422 on an inactive prefix or a step the policy
 * lacks and 409 beside an active job; the policy's convert schedule fires at its run time (daily,
 * and weekly on Mondays) once per slot on a manual clock, a removal beside it, nothing for a
 * paused prefix; runs list both triggers newest first.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextSlot } from "../src/object-maintenance/conversion/slots.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson } from "./support/catalogs.ts";

const BASE = "/api/v1/object-maintenance";
const START = Date.parse("2026-03-02T10:00:00Z"); // a Monday
const HOUR = 3_600_000;
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let clock: ManualClock;
let seq = 0;

beforeAll(async () => {
  clock = new ManualClock(new Date(START));
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
});
afterAll(() => plane.close());

async function prefixWith(policy?: Record<string, unknown>) {
  const n = ++seq;
  const location = await admin("POST", `${BASE}/locations`, { name: `runs-${n}`, uri: `s3://lake/raw/${n}` });
  expect(location.status, location.text).toBe(201);
  const prefix = (await admin("GET", `${BASE}/locations/${location.body.id}/managed-prefixes`)).body.items[0];
  if (policy) {
    const put = await admin("PUT", `${BASE}/prefixes/${prefix.id}/policy`, policy);
    expect(put.status, put.text).toBe(200);
  }
  return { locationId: location.body.id as string, prefixId: prefix.id as string, n };
}

const convert = (n: number, extra: Record<string, unknown> = {}) => ({
  convert: { target_prefix: `s3://lake/curated/${n}`, run_time_utc: "12:30", ...extra },
});

describe("slots", () => {
  it("is the next run time after a moment: today's if still ahead, else tomorrow's; weekly on Mondays", () => {
    const at = new Date("2026-03-04T12:00:00Z"); // a Wednesday
    expect(nextSlot({ cadence: "daily", run_time_utc: "12:30" }, at).toISOString()).toBe(
      "2026-03-04T12:30:00.000Z",
    );
    expect(nextSlot({ cadence: "daily", run_time_utc: "02:00" }, at).toISOString()).toBe(
      "2026-03-05T02:00:00.000Z",
    );
    expect(nextSlot({ cadence: "weekly", run_time_utc: "02:00" }, at).toISOString()).toBe(
      "2026-03-09T02:00:00.000Z",
    );
    expect(nextSlot({ cadence: "daily", run_time_utc: "12:00" }, at).toISOString()).toBe(
      "2026-03-05T12:00:00.000Z",
    );
  });
});

describe("actions", () => {
  it("queues a conversion with the policy's settings and lists it newest first, as a run too", async () => {
    const { prefixId, n } = await prefixWith({ ...convert(seq + 1, { target_file_size_mb: 64 }) });
    const first = await admin("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "convert" });
    expect(first.status, first.text).toBe(202);
    expect(first.body).toMatchObject({
      prefix_id: prefixId,
      action: "convert",
      status: "queued",
      policy_version: 1,
    });
    const job = (await admin("GET", `/api/v1/jobs/${first.body.job_id}`)).body;
    expect(job).toMatchObject({ kind: "prefix_convert" });
    expect(job.payload).toMatchObject({
      source_uri: `s3://lake/raw/${n}`,
      target_uri: `s3://lake/curated/${n}`,
      target_file_size_mb: 64,
      skip_age_days: 2,
    });
    // The same prefix's conversion is active: a second action waits for nobody, it is refused.
    const second = await admin("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "convert" });
    expect(second.status).toBe(409);
    expect(second.text).toContain(first.body.job_id);
    await admin("POST", `/api/v1/jobs/${first.body.job_id}/cancel`);
    const third = await admin("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "convert" });
    expect(third.status, third.text).toBe(202);
    const actions = (await admin("GET", `${BASE}/prefixes/${prefixId}/actions`)).body;
    expect(actions.items.map((a: { job_id: string }) => a.job_id)).toEqual([
      third.body.job_id,
      first.body.job_id,
    ]);
    expect(actions.items[1].status).toBe("cancelled");
    const runs = (await admin("GET", `${BASE}/prefixes/${prefixId}/runs`)).body;
    expect(runs.items[0]).toMatchObject({ trigger: "action", metrics: null, error: null });
  });

  it("answers 422 naming the field for an unmanaged prefix or a step the policy lacks, 404 for no prefix", async () => {
    const bare = await prefixWith();
    const unmanaged = await admin("POST", `${BASE}/prefixes/${bare.prefixId}/actions`, { action: "convert" });
    expect(unmanaged.status).toBe(422);
    expect(unmanaged.text).toContain("management_state");
    const { prefixId } = await prefixWith(convert(seq + 1));
    const missing = await admin("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "remove_inputs" });
    expect(missing.status).toBe(422);
    expect(missing.text).toContain("remove_inputs.retention_days");
    const wrong = await admin("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "compact" });
    expect(wrong.status).toBe(422);
    expect(wrong.text).toContain("action");
    expect((await admin("POST", `${BASE}/prefixes/pfx_nope/actions`, { action: "convert" })).status).toBe(
      404,
    );
    expect((await admin("GET", `${BASE}/prefixes/pfx_nope/runs`)).status).toBe(404);
  });
});

describe("the convert schedule", () => {
  it("fires at its run time once per slot, with a removal beside it, and not for a paused prefix", async () => {
    clock.set(new Date(START));
    const daily = await prefixWith({
      ...convert(seq + 1, { run_time_utc: "12:45" }),
      remove_inputs: { retention_days: 7 },
    });
    const weekly = await prefixWith(convert(seq + 1, { cadence: "weekly", run_time_utc: "09:00" }));
    const paused = await prefixWith(convert(seq + 1));
    await admin("PATCH", `${BASE}/locations/${paused.locationId}`, { status: "Archived" });
    const runsOf = async (prefixId: string) =>
      (await admin("GET", `${BASE}/prefixes/${prefixId}/runs`)).body.items;

    // 12:30: the earlier tests' policies' slot, not this one's.
    clock.set(new Date(START + 2.5 * HOUR));
    await plane.services.scheduler.tick(clock.now());
    expect(await runsOf(daily.prefixId)).toEqual([]);
    clock.set(new Date(START + 2.75 * HOUR)); // 12:45 Monday
    const fired = await plane.services.scheduler.tick(clock.now());
    expect(fired.conversions).toBe(2);
    const runs = await runsOf(daily.prefixId);
    expect(runs.map((r: { action: string; trigger: string }) => [r.action, r.trigger]).sort()).toEqual([
      ["convert", "schedule"],
      ["remove_inputs", "schedule"],
    ]);
    const removal = (
      await admin(
        "GET",
        `/api/v1/jobs/${runs.find((r: { action: string }) => r.action === "remove_inputs").job_id}`,
      )
    ).body;
    expect(removal.payload).toMatchObject({ retention_days: 7, keep: [] });
    // A second tick in the same slot queues nothing more.
    expect((await plane.services.scheduler.tick(clock.now())).conversions).toBe(0);
    expect(await runsOf(paused.prefixId)).toEqual([]);
    // Weekly at 09:00 on Mondays: the first slot after the policy was written is next Monday.
    expect(await runsOf(weekly.prefixId)).toEqual([]);
    clock.set(new Date(START + 7 * 24 * HOUR));
    await plane.services.scheduler.tick(clock.now());
    expect((await runsOf(weekly.prefixId)).map((r: { action: string }) => r.action)).toEqual(["convert"]);
    expect(await runsOf(paused.prefixId)).toEqual([]);
  });
});
