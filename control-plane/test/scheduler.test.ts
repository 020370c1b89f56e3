/**
 * The scheduler tick, scenario by scenario, on a manual clock: daily slots and their date ranges,
 * midnight UTC, missed ticks, disabled schedules, backfills, concurrent ticks, priority and the reaper.
 */
import { ManualClock } from "@lakesmith/shared";
import {
  backfillSlot,
  CrunchPayloadSchema,
  SCHEDULED_JOB_KINDS,
  scheduleDedupeKey,
  uriScheme,
} from "@lakesmith/shared/jobs";
import { PartitionExpirationPayloadSchema, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { routingOf } from "../src/jobs/enqueue.ts";
import { Scheduler } from "../src/scheduler/scheduler.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall, FAKE_AGENT, leaseJob, RECIPE } from "./support/tables.ts";

const clock = new ManualClock();
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
// A fresh control plane per scenario, so a tick's counts are about that scenario's schedules only.
beforeEach(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterEach(() => plane.close());

const at = (iso: string) => clock.set(new Date(iso));
const tick = () => plane.services.scheduler.tick();
const jobsOf = async (tableId: string) =>
  (await plane.services.jobs.list({ tableId, kinds: SCHEDULED_JOB_KINDS }, 0, 100)).items.reverse();
let seq = 0;

/** An onboarded table with one schedule; returns the table id and the schedule. */
async function scheduled(
  body: Record<string, unknown>,
  options: { jobType?: string; table?: Record<string, unknown> } = {},
) {
  const table = await activeTable(plane, `sched.${++seq}`, options.table);
  const res = await admin(
    "POST",
    `/api/v1/tables/${table.id}/schedule?job_type=${options.jobType ?? "crunch"}`,
    body,
  );
  if (res.status !== 201) throw new Error(`schedule: ${res.status} ${await res.text()}`);
  return { tableId: table.id, schedule: await res.json() };
}
const daily = (run_time_utc: string, lookback_start = 15, lookback_end = 2) => ({
  schedule_type: "daily",
  lookback_start,
  lookback_end,
  run_time_utc,
});
const scheduleOf = async (tableId: string, jobType = "crunch") =>
  (await admin("GET", `/api/v1/tables/${tableId}/schedule?job_type=${jobType}`)).json();

const pick = (r: ReturnType<typeof routingOf>) => ({
  requires: r.requires,
  locations: r.locations,
  exclusion: r.exclusion,
  locks: r.locks,
});

describe("a daily schedule", () => {
  it("fires once its run time passes, over [date - lookback_start, date - lookback_end], and not again that day", async () => {
    at("2026-03-10T10:00:00Z");
    const { tableId, schedule } = await scheduled(daily("02:30"), {
      table: { priority: "P1", target_file_size_mb: 256 },
    });

    at("2026-03-11T02:29:59Z");
    await tick();
    expect(await jobsOf(tableId)).toHaveLength(0);

    at("2026-03-11T02:30:00Z");
    expect((await tick()).fired).toBe(1);
    const [job] = await jobsOf(tableId);
    expect(job).toMatchObject({
      kind: "crunch",
      status: "queued",
      priority: "P1",
      trigger: "schedule",
      scheduleId: schedule.id,
      dedupeKey: scheduleDedupeKey(schedule.id, "2026-03-11"),
      requires: [uriScheme(`s3://lake/sched.${seq}`)],
      payload: {
        table_id: tableId,
        uri: `s3://lake/sched.${seq}`,
        format: "delta",
        schedule_id: schedule.id,
        date_range: { start: "2026-02-24", end: "2026-03-09" },
        slot: "2026-03-11",
        target_file_size_mb: 256,
        recipe: RECIPE,
      },
    });
    // The routing columns written in SQL are what the kind's declaration derives from the payload.
    const { requires, locations, exclusion, locks } = job as NonNullable<typeof job>;
    expect({ requires, locations, exclusion, locks }).toEqual(
      pick(routingOf(plane.services.jobs.engine, { kind: "crunch", payload: job?.payload ?? {}, tableId })),
    );
    expect(await scheduleOf(tableId)).toMatchObject({
      last_slot: "2026-03-11",
      next_run_at: "2026-03-12T02:30:00.000Z",
    });

    at("2026-03-11T18:00:00Z");
    expect((await tick()).fired).toBe(0);
    expect(await jobsOf(tableId)).toHaveLength(1);
  });

  it("fires the vacuum or partition expiration job its job_type names", async () => {
    at("2026-03-10T00:00:00Z");
    const vacuum = await scheduled(daily("00:10", 1, 0), { jobType: "vacuum" });
    const expiration = await scheduled(daily("00:10", 1, 0), { jobType: "partition_expiration" });
    at("2026-03-10T00:10:00Z");
    await tick();
    expect((await jobsOf(vacuum.tableId)).map((j) => j.kind)).toEqual(["vacuum"]);
    expect((await jobsOf(expiration.tableId)).map((j) => j.kind)).toEqual(["partition_expiration"]);
    expect((await jobsOf(vacuum.tableId))[0]?.payload.date_range).toEqual({
      start: "2026-03-09",
      end: "2026-03-10",
    });
    // What the agent parses: a lite, non-dry vacuum; an expiration with the platform's retention,
    // counted back from the slot's date.
    expect(VacuumPayloadSchema.parse((await jobsOf(vacuum.tableId))[0]?.payload)).toMatchObject({
      mode: "lite",
      dry_run: false,
      schedule_id: vacuum.schedule.id,
    });
    expect(
      PartitionExpirationPayloadSchema.parse((await jobsOf(expiration.tableId))[0]?.payload),
    ).toMatchObject({ retention_days: 30, as_of: "2026-03-10", dry_run: false, validate: false });
  });

  it("puts the platform's settings into the payloads it fires: mutation interval, expiration retention", async () => {
    at("2026-03-10T00:00:00Z");
    const put = await admin("PUT", "/api/v1/config", {
      mutation_interval_threshold_minutes: 30,
      default_partition_expiration_days: 90,
    });
    expect(put.status).toBe(200);
    const crunch = await scheduled(daily("00:10", 1, 0));
    const expiration = await scheduled(daily("00:10", 1, 0), { jobType: "partition_expiration" });
    at("2026-03-10T00:10:00Z");
    await tick();
    expect(CrunchPayloadSchema.parse((await jobsOf(crunch.tableId))[0]?.payload)).toMatchObject({
      mutation_interval_minutes: 30,
    });
    expect((await jobsOf(expiration.tableId))[0]?.payload).toMatchObject({ retention_days: 90 });
    expect((await jobsOf(expiration.tableId))[0]?.payload).not.toHaveProperty("mutation_interval_minutes");
  });

  it("puts the table's Parquet v2 choice into crunch payloads only", async () => {
    at("2026-03-10T00:00:00Z");
    const plain = await scheduled(daily("00:10", 1, 0));
    const v2 = await scheduled(daily("00:10", 1, 0), { table: { parquet_v2: true } });
    const vacuum = await scheduled(daily("00:10", 1, 0), { jobType: "vacuum", table: { parquet_v2: true } });
    at("2026-03-10T00:10:00Z");
    await tick();
    expect(CrunchPayloadSchema.parse((await jobsOf(plain.tableId))[0]?.payload).parquet_v2).toBe(false);
    expect(CrunchPayloadSchema.parse((await jobsOf(v2.tableId))[0]?.payload).parquet_v2).toBe(true);
    expect((await jobsOf(vacuum.tableId))[0]?.payload).not.toHaveProperty("parquet_v2");
  });
});

describe("across midnight UTC", () => {
  it("fires on each UTC date, with ranges that cross the month boundary", async () => {
    at("2026-03-31T23:00:00Z");
    const { tableId } = await scheduled(daily("23:50", 3, 1));
    at("2026-03-31T23:55:00Z");
    await tick();
    at("2026-04-01T00:05:00Z");
    await tick();
    at("2026-04-01T23:50:00Z");
    await tick();
    const jobs = await jobsOf(tableId);
    expect(jobs.map((j) => j.payload.slot)).toEqual(["2026-03-31", "2026-04-01"]);
    expect(jobs.map((j) => j.payload.date_range)).toEqual([
      { start: "2026-03-28", end: "2026-03-30" },
      { start: "2026-03-29", end: "2026-03-31" },
    ]);
  });

  it("fires yesterday's slot late when the tick before midnight was missed, then today's on time", async () => {
    at("2026-06-30T12:00:00Z");
    const { tableId } = await scheduled(daily("23:58", 2, 1));
    at("2026-07-01T00:03:00Z");
    expect((await tick()).fired).toBe(1);
    expect((await jobsOf(tableId)).map((j) => j.payload.slot)).toEqual(["2026-06-30"]);
    expect((await scheduleOf(tableId)).next_run_at).toBe("2026-07-01T23:58:00.000Z");
    at("2026-07-01T23:58:00Z");
    await tick();
    expect((await jobsOf(tableId)).map((j) => j.payload.slot)).toEqual(["2026-06-30", "2026-07-01"]);
  });
});

describe("a missed tick", () => {
  it("fires the latest due slot once after the scheduler was down for days, not one job per missed day", async () => {
    at("2026-08-01T00:00:00Z");
    const { tableId } = await scheduled(daily("06:00"));
    at("2026-08-04T09:00:00Z");
    expect((await tick()).fired).toBe(1);
    const jobs = await jobsOf(tableId);
    expect(jobs.map((j) => j.payload.slot)).toEqual(["2026-08-04"]);
    expect(await scheduleOf(tableId)).toMatchObject({ next_run_at: "2026-08-05T06:00:00.000Z" });
  });

  it("fires a late tick on the same day for that day", async () => {
    at("2026-08-10T00:00:00Z");
    const { tableId } = await scheduled(daily("01:00"));
    at("2026-08-10T13:37:00Z");
    await tick();
    expect((await jobsOf(tableId)).map((j) => j.payload.slot)).toEqual(["2026-08-10"]);
  });
});

describe("a disabled schedule", () => {
  it("never fires while disabled, and resumes at its next run time once enabled", async () => {
    at("2026-09-01T00:00:00Z");
    const { tableId } = await scheduled(daily("03:00"));
    await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { enabled: false });
    at("2026-09-03T04:00:00Z");
    await tick();
    expect(await jobsOf(tableId)).toHaveLength(0);

    const enabled = await (
      await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { enabled: true })
    ).json();
    expect(enabled.next_run_at).toBe("2026-09-04T03:00:00.000Z");
    await tick();
    expect(await jobsOf(tableId)).toHaveLength(0);
    at("2026-09-04T03:00:00Z");
    await tick();
    expect((await jobsOf(tableId)).map((j) => j.payload.slot)).toEqual(["2026-09-04"]);
  });

  it("does not fire a disabled backfill until it is enabled", async () => {
    at("2026-09-10T00:00:00Z");
    const { tableId } = await scheduled({
      schedule_type: "backfill",
      backfill_col: "d",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-05",
      enabled: false,
    });
    await tick();
    expect(await jobsOf(tableId)).toHaveLength(0);
    await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { enabled: true });
    await tick();
    expect(await jobsOf(tableId)).toHaveLength(1);
  });
});

describe("a backfill schedule", () => {
  it("enqueues its range once, and again only when the range changes", async () => {
    at("2026-10-01T12:00:00Z");
    const { tableId, schedule } = await scheduled({
      schedule_type: "backfill",
      backfill_col: "event_date",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-31",
    });
    expect((await tick()).fired).toBe(1);
    at("2026-10-05T12:00:00Z");
    expect((await tick()).fired).toBe(0);
    const [job] = await jobsOf(tableId);
    expect(job?.payload).toMatchObject({
      date_range: { start: "2026-01-01", end: "2026-01-31" },
      backfill_col: "event_date",
      slot: backfillSlot("event_date", "2026-01-01", "2026-01-31"),
    });
    expect(await scheduleOf(tableId)).toMatchObject({ next_run_at: null, last_slot: job?.payload.slot });
    expect(job?.dedupeKey).toBe(
      scheduleDedupeKey(schedule.id, backfillSlot("event_date", "2026-01-01", "2026-01-31")),
    );

    // Toggling it off and on does not re-run the same range.
    await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { enabled: false });
    await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { enabled: true });
    expect((await tick()).fired).toBe(0);

    await admin("PUT", `/api/v1/tables/${tableId}/schedule`, { backfill_end_date: "2026-02-28" });
    expect((await tick()).fired).toBe(1);
    expect((await jobsOf(tableId)).map((j) => j.payload.date_range)).toEqual([
      { start: "2026-01-01", end: "2026-01-31" },
      { start: "2026-01-01", end: "2026-02-28" },
    ]);
  });
});

describe("concurrent ticks", () => {
  it("enqueue each slot once when two ticks run at the same time", async () => {
    at("2026-11-01T00:00:00Z");
    const tables = await Promise.all([1, 2, 3].map(() => scheduled(daily("00:30"))));
    at("2026-11-01T00:31:00Z");
    const second = new Scheduler(plane.services.db, clock, plane.services.jobs, plane.services.config, {
      chunkSize: 1,
    });
    const [a, b] = await Promise.all([tick(), second.tick()]);
    expect(a.fired + b.fired).toBe(3);
    for (const { tableId } of tables) expect(await jobsOf(tableId)).toHaveLength(1);
  });

  it("enqueue each slot once when a tick repeats after the schedule row was left behind", async () => {
    at("2026-11-02T00:00:00Z");
    const { tableId, schedule } = await scheduled(daily("00:30"));
    at("2026-11-02T00:31:00Z");
    await tick();
    // As if the tick's update of next_run_at had been lost: the dedupe key still holds.
    await plane.services.db.run(
      (await import("drizzle-orm"))
        .sql`update schedules set next_run_at = 0, last_slot = null where id = ${schedule.id}`,
    );
    expect((await tick()).fired).toBe(0);
    expect(await jobsOf(tableId)).toHaveLength(1);
    expect((await scheduleOf(tableId)).next_run_at).toBe("2026-11-03T00:30:00.000Z");
  });

  it("reads due schedules in chunks until none is left", async () => {
    at("2026-11-03T00:00:00Z");
    const tables = await Promise.all([1, 2, 3, 4, 5].map(() => scheduled(daily("00:45"))));
    at("2026-11-03T01:00:00Z");
    const small = new Scheduler(plane.services.db, clock, plane.services.jobs, plane.services.config, {
      chunkSize: 2,
    });
    const result = await small.tick();
    expect(result.fired).toBe(5);
    for (const { tableId } of tables) expect(await jobsOf(tableId)).toHaveLength(1);
  });
});

describe("priority and the reaper", () => {
  it("hands P1 jobs out before P2 jobs, whatever their order", async () => {
    at("2026-12-01T00:00:00Z");
    const p2 = await scheduled(daily("00:20"), { table: { priority: "P2" } });
    const p1 = await scheduled(daily("00:20"), { table: { priority: "P1" } });
    at("2026-12-01T00:20:00Z");
    await tick();
    const agent = { ...FAKE_AGENT, id: "agt_priority", kinds: ["crunch"] };
    const first = await plane.services.jobs.offerNext(agent);
    const second = await plane.services.jobs.offerNext(agent);
    expect(first?.tableId).toBe(p1.tableId);
    expect(second?.tableId).toBe(p2.tableId);
    for (const job of [first, second]) if (job) await plane.services.jobs.reject(agent.id, job.id, job.fence);
  });

  it("returns lapsed leases to the queue on each tick", async () => {
    at("2026-12-02T00:00:00Z");
    const { tableId } = await scheduled(daily("00:05"));
    at("2026-12-02T00:05:00Z");
    await tick();
    const [job] = await jobsOf(tableId);
    await leaseJob(plane, job?.id as string);
    clock.advance(plane.services.jobs.timings.leaseMs + 1);
    const result = await tick();
    expect(result.reaped.leases).toBeGreaterThanOrEqual(1);
    expect((await plane.services.jobs.get(job?.id as string))?.status).toBe("queued");
  });

  it("stops firing a deleted schedule or a deleted table", async () => {
    at("2026-12-03T00:00:00Z");
    const gone = await scheduled(daily("00:10"));
    const dropped = await scheduled(daily("00:10"));
    await admin("DELETE", `/api/v1/tables/${gone.tableId}/schedule`);
    await admin("DELETE", `/api/v1/tables/${dropped.tableId}`);
    at("2026-12-03T00:10:00Z");
    await tick();
    expect(await jobsOf(gone.tableId)).toHaveLength(0);
    expect(await jobsOf(dropped.tableId)).toHaveLength(0);
  });
});
