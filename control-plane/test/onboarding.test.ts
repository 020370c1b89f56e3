import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminCall, createTable, FAKE_AGENT, finishOnboarding, leaseJob, RECIPE } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-05-01T08:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

const status = async (tableId: string) => {
  const res = await admin("GET", `/api/v1/onboarding/${tableId}/status`);
  expect(res.status).toBe(200);
  return res.json();
};
const retry = (tableId: string) => admin("POST", `/api/v1/onboarding/${tableId}/retry`);

describe("onboarding status", () => {
  it("starts pending with a queued onboarding job", async () => {
    const table = await createTable(plane, "o.new");
    expect(await status(table.id)).toMatchObject({
      table_id: table.id,
      table_name: "o.new",
      status: "pending",
      error: null,
      recipe: null,
      job_id: table.onboarding_job_id,
      job_status: "queued",
      attempt: 0,
      onboarded_at: null,
    });
  });

  it("shows the job running once an agent has leased it", async () => {
    const table = await createTable(plane, "o.running");
    await leaseJob(plane, table.onboarding_job_id);
    expect(await status(table.id)).toMatchObject({ status: "pending", job_status: "running", attempt: 1 });
  });

  it("becomes active with the recipe when the agent reports success, shown in the table too", async () => {
    const table = await createTable(plane, "o.ok");
    const done = await finishOnboarding(plane, table.id);
    expect(done.kind).toBe("done");
    expect(await status(table.id)).toMatchObject({
      status: "active",
      error: null,
      recipe: RECIPE,
      job_status: "succeeded",
      onboarded_at: "2026-05-01T08:00:00.000Z",
    });
    const got = await (await admin("GET", `/api/v1/tables/${table.id}`)).json();
    expect(got).toMatchObject({ onboarding_status: "active", recipe: RECIPE, onboarding_error: null });
  });

  it("fails with the agent's reason on a final failure", async () => {
    const table = await createTable(plane, "o.fail");
    await finishOnboarding(plane, table.id, { error: "s3://lake/o.fail: access denied" });
    expect(await status(table.id)).toMatchObject({
      status: "failed",
      error: "s3://lake/o.fail: access denied",
      job_status: "failed",
      recipe: null,
    });
    const got = await (await admin("GET", `/api/v1/tables/${table.id}`)).json();
    expect(got.onboarding_error).toBe("s3://lake/o.fail: access denied");
  });

  it("stays pending while a retryable failure has attempts left, showing its error and when the next attempt starts", async () => {
    const table = await createTable(plane, "o.flaky");
    const job = await leaseJob(plane, table.onboarding_job_id);
    await plane.services.jobs.complete(FAKE_AGENT.id, job.id, job.fence, "failed", {
      error: "s3://lake/o.flaky: SlowDown (throttled)",
      retryable: true,
    });
    const { retryBaseMs } = plane.services.jobs.timings;
    expect(await status(table.id)).toMatchObject({
      status: "pending",
      job_status: "queued",
      error: "s3://lake/o.flaky: SlowDown (throttled)",
      attempt: 1,
      max_attempts: 3,
      next_attempt_at: new Date(clock.now().getTime() + retryBaseMs).toISOString(),
    });

    // The next attempt runs: the last error stays until it ends, and nothing waits for a backoff.
    clock.advance(retryBaseMs);
    const again = await leaseJob(plane, table.onboarding_job_id);
    expect(await status(table.id)).toMatchObject({
      status: "pending",
      job_status: "running",
      error: "s3://lake/o.flaky: SlowDown (throttled)",
      attempt: 2,
      next_attempt_at: null,
    });
    await plane.services.jobs.complete(FAKE_AGENT.id, again.id, again.fence, "succeeded", { result: RECIPE });
    expect(await status(table.id)).toMatchObject({ status: "active", error: null, next_attempt_at: null });
  });

  it("fails at once with the reason when the first of three attempts fails for good (no Delta log)", async () => {
    const table = await createTable(plane, "o.not-delta");
    const job = await leaseJob(plane, table.onboarding_job_id);
    const reason =
      "s3://lake/o.not-delta is not a Delta table: no Delta log under s3://lake/o.not-delta/_delta_log/ (no commits)";
    await plane.services.jobs.complete(FAKE_AGENT.id, job.id, job.fence, "failed", {
      error: reason,
      retryable: false,
    });
    expect(await status(table.id)).toMatchObject({
      status: "failed",
      error: reason,
      job_status: "failed",
      attempt: 1,
      max_attempts: 3,
      next_attempt_at: null,
    });
  });

  it("fails when the agent's result is not a recipe, saying what is wrong", async () => {
    const table = await createTable(plane, "o.garbled");
    await finishOnboarding(plane, table.id, { recipe: { partition_columns: "event_date" } });
    const now = await status(table.id);
    expect(now.status).toBe("failed");
    expect(now.error).toContain("not a recipe");
    expect(now.error).toContain("partition_columns");
  });

  it("fails when the onboarding job is cancelled", async () => {
    const table = await createTable(plane, "o.cancelled");
    await plane.services.jobs.cancel(table.onboarding_job_id);
    const now = await status(table.id);
    expect(now.status).toBe("failed");
    expect(now.error).toContain("the onboarding job was cancelled");
  });

  it("fails when the lease lapses on the last attempt (the reaper runs the same hook)", async () => {
    const table = await createTable(plane, "o.lapsed");
    const { leaseMs, retryMaxMs } = plane.services.jobs.timings;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await leaseJob(plane, table.onboarding_job_id);
      clock.advance(leaseMs + 1000);
      await plane.services.jobs.reap();
      clock.advance(retryMaxMs + 1000);
    }
    const now = await status(table.id);
    expect(now).toMatchObject({ status: "failed", job_status: "failed" });
    expect(now.error).toContain("lease lapsed");
  });

  it("answers 404 for an unknown table", async () => {
    expect((await admin("GET", "/api/v1/onboarding/tbl_nope/status")).status).toBe(404);
  });
});

describe("retrying onboarding", () => {
  it("moves a failed table to retry with a new queued job, which then onboards it", async () => {
    const table = await createTable(plane, "o.retry");
    await finishOnboarding(plane, table.id, { error: "bucket missing" });
    const res = await retry(table.id);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: "retry", error: null, job_status: "queued", attempt: 0 });
    expect(body.job_id).not.toBe(table.onboarding_job_id);
    expect((await plane.services.jobs.get(body.job_id))?.trigger).toBe("onboarding_retry");
    expect((await (await admin("GET", "/api/v1/tables?status=retry&name=o.retry")).json()).total).toBe(1);

    await finishOnboarding(plane, table.id);
    expect(await status(table.id)).toMatchObject({ status: "active", recipe: RECIPE, job_id: body.job_id });
  });

  it("can fail again after a retry, and be retried again", async () => {
    const table = await createTable(plane, "o.retry-twice");
    await finishOnboarding(plane, table.id, { error: "first" });
    await retry(table.id);
    await finishOnboarding(plane, table.id, { error: "second" });
    expect(await status(table.id)).toMatchObject({ status: "failed", error: "second" });
    expect((await retry(table.id)).status).toBe(200);
  });

  it.each(["pending", "active", "retry"])(
    "answers 409 naming the status when onboarding is %s",
    async (state) => {
      const table = await createTable(plane, `o.not-failed-${state}`);
      if (state === "active") await finishOnboarding(plane, table.id);
      if (state === "retry") {
        await finishOnboarding(plane, table.id, { error: "x" });
        await retry(table.id);
      }
      const res = await retry(table.id);
      expect(res.status).toBe(409);
      expect((await res.json()).detail).toContain(`is '${state}'`);
      expect((await status(table.id)).status).toBe(state);
    },
  );

  it("queues one job when two retries race", async () => {
    const table = await createTable(plane, "o.race");
    await finishOnboarding(plane, table.id, { error: "x" });
    const answers = await Promise.all([retry(table.id), retry(table.id)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const jobs = await plane.services.jobs.list({ tableId: table.id, kinds: ["onboarding"] }, 0, 10);
    expect(jobs.total).toBe(2);
  });

  it("answers 404 for an unknown table", async () => {
    expect((await retry("tbl_nope")).status).toBe(404);
  });
});
