/**
 * `POST /api/v1/tables/{table_id}/crunch`: the trigger's two modes and their validation, the
 * recipe check, the payload the agent will parse, and a table's crunches never overlapping.
 */
import { ManualClock } from "@lakesmith/shared";
import { CrunchPayloadSchema } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import {
  activeTable,
  adminCall,
  createTable,
  FAKE_AGENT,
  finishOnboarding,
  leaseJob,
  RECIPE,
} from "./support/tables.ts";

// Late in the UTC day, so a local-time mistake would shift every date.
const clock = new ManualClock(new Date("2026-03-01T23:30:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = (extra: Record<string, unknown> = {}) => activeTable(plane, `crunch.t${++seq}`, extra);
/** A table whose recipe has no partitions (its date column is a data column): a crunch stays one job. */
const UNPARTITIONED = { ...RECIPE, partition_columns: [], partition_pattern: null };
async function unpartitioned() {
  const t = await createTable(plane, `crunch.t${++seq}`);
  await finishOnboarding(plane, t.id, { recipe: UNPARTITIONED });
  return t;
}
const days = (view: { jobs: { date_range: { start: string } }[] }) =>
  view.jobs.map((j) => j.date_range.start);
const trigger = (tableId: string, body: unknown, query = "") =>
  admin("POST", `/api/v1/tables/${tableId}/crunch${query}`, body);
const LOOKBACK = { lookback_start: 15, lookback_end: 2 };
const BACKFILL = { backfill_start_date: "2026-01-01", backfill_end_date: "2026-01-31" };
const MODE_FIELDS = [
  "backfill_end_date",
  "backfill_start_date",
  "lookback_end",
  "lookback_start",
  "whole_table",
];

/** The field paths a 422 names. */
async function invalidFields(res: Response): Promise<string[]> {
  expect(res.status).toBe(422);
  const body = (await res.json()) as { errors: { path: string }[] };
  return [...new Set(body.errors.map((e) => e.path))].sort();
}

describe("trigger validation", () => {
  let tableId: string;
  beforeAll(async () => {
    tableId = (await table()).id;
  });

  it.each([
    ["neither mode", {}, MODE_FIELDS],
    ["neither mode, priority only", { priority: "P1" }, MODE_FIELDS],
    [
      "both modes",
      { ...LOOKBACK, ...BACKFILL },
      ["backfill_end_date", "backfill_start_date", "lookback_end", "lookback_start"],
    ],
    [
      "whole table and lookback",
      { ...LOOKBACK, whole_table: true },
      ["lookback_end", "lookback_start", "whole_table"],
    ],
    [
      "whole table and backfill, partly",
      { whole_table: true, backfill_start_date: "2026-01-01" },
      ["backfill_start_date", "whole_table"],
    ],
    ["all three modes", { ...LOOKBACK, ...BACKFILL, whole_table: true }, MODE_FIELDS],
    ["whole_table false", { whole_table: false }, ["whole_table"]],
    ["whole_table as a string", { whole_table: "true" }, ["whole_table"]],
    [
      "both modes, partly",
      { lookback_start: 3, backfill_end_date: "2026-01-31" },
      ["backfill_end_date", "lookback_start"],
    ],
    ["lookback without its end", { lookback_start: 3 }, ["lookback_end"]],
    ["backfill without its start", { backfill_end_date: "2026-01-31" }, ["backfill_start_date"]],
    ["lookback_start after lookback_end", { lookback_start: 2, lookback_end: 15 }, ["lookback_start"]],
    ["a negative lookback", { lookback_start: 3, lookback_end: -1 }, ["lookback_end"]],
    ["a fractional lookback", { lookback_start: 3.5, lookback_end: 1 }, ["lookback_start"]],
    [
      "a backfill start after its end",
      { backfill_start_date: "2026-02-01", backfill_end_date: "2026-01-31" },
      ["backfill_start_date"],
    ],
    [
      "a date that is not YYYY-MM-DD",
      { backfill_start_date: "01/01/2026", backfill_end_date: "2026-01-31" },
      ["backfill_start_date"],
    ],
    [
      "a date that does not exist",
      { backfill_start_date: "2026-01-01", backfill_end_date: "2026-02-30" },
      ["backfill_end_date"],
    ],
    [
      "cluster columns in lookback mode",
      { ...LOOKBACK, cluster_columns: "customer_id" },
      ["cluster_columns"],
    ],
    [
      "an empty cluster column",
      { ...BACKFILL, cluster_columns: "customer_id, ,region" },
      ["cluster_columns"],
    ],
    ["an empty cluster column list", { ...BACKFILL, cluster_columns: "" }, ["cluster_columns"]],
    ["a cluster column with a space", { ...BACKFILL, cluster_columns: "customer id" }, ["cluster_columns"]],
    ["a cluster column named twice", { ...BACKFILL, cluster_columns: "region,region" }, ["cluster_columns"]],
    ["cluster columns as an array", { ...BACKFILL, cluster_columns: ["region"] }, ["cluster_columns"]],
    ["an unknown priority", { ...LOOKBACK, priority: "P3" }, ["priority"]],
  ])("refuses %s with 422 naming the fields", async (_name, body, fields) => {
    expect(await invalidFields(await trigger(tableId, body))).toEqual(fields);
  });

  it("refuses an unknown field with 422", async () => {
    const res = await trigger(tableId, { ...LOOKBACK, target_file_size_mb: 64 });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toContain("target_file_size_mb");
  });

  it("refuses a skip_recipe_check that is not a boolean with 422", async () => {
    expect(await invalidFields(await trigger(tableId, LOOKBACK, "?skip_recipe_check=yes"))).toEqual([
      "skip_recipe_check",
    ]);
  });

  it("queues nothing for a refused trigger", async () => {
    const list = await (await admin("GET", `/api/v1/tables/${tableId}/crunch`)).json();
    expect(list.total).toBe(0);
  });
});

describe("the recipe check", () => {
  it("answers 404 for an unknown table", async () => {
    const res = await trigger("tbl_missing", LOOKBACK);
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain("tbl_missing");
  });

  it("refuses a table whose onboarding is pending with 409", async () => {
    const pending = await createTable(plane, `crunch.pending${++seq}`);
    const res = await trigger(pending.id, LOOKBACK);
    expect(res.status).toBe(409);
    const detail = (await res.json()).detail as string;
    expect(detail).toContain("Onboarding has not produced the table's recipe");
    expect(detail).toContain("'pending'");
  });

  it("refuses a table whose onboarding failed with 409", async () => {
    const failed = await createTable(plane, `crunch.failed${++seq}`);
    await finishOnboarding(plane, failed.id, { error: "access denied" });
    const res = await trigger(failed.id, LOOKBACK);
    expect(res.status).toBe(409);
    expect((await res.json()).detail).toContain("'failed'");
  });

  it("queues a crunch without a recipe when skip_recipe_check=true", async () => {
    const pending = await createTable(plane, `crunch.skip${++seq}`);
    expect((await trigger(pending.id, LOOKBACK, "?skip_recipe_check=false")).status).toBe(409);
    const res = await trigger(pending.id, LOOKBACK, "?skip_recipe_check=true");
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({ table_id: pending.id, status: "queued", cluster_columns: [] });
    const job = await plane.services.jobs.get(view.id);
    const payload = CrunchPayloadSchema.parse(job?.payload);
    expect(payload.recipe).toBeNull();
    expect(payload.backfill_col).toBeUndefined();
  });
});

describe("a lookback trigger", () => {
  it("queues one crunch job per day of [today - lookback_start, today - lookback_end] UTC, each payload parsing", async () => {
    const t = await table({ target_file_size_mb: 256, priority: "P2" });
    const res = await trigger(t.id, LOOKBACK);
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(days(view)).toEqual(
      Array.from({ length: 14 }, (_, i) => `2026-02-${String(14 + i).padStart(2, "0")}`),
    );
    expect(view.jobs[0]).toEqual({ ...view, jobs: undefined });
    expect(view).toMatchObject({
      table_id: t.id,
      job_type: "crunch",
      requested_job_type: "crunch",
      status: "queued",
      trigger: "manual",
      schedule_id: null,
      priority: "P2",
      date_range: { start: "2026-02-14", end: "2026-02-14" },
      backfill_col: null,
      partition: "event_date=2026-02-14",
      cluster_columns: RECIPE.cluster_columns,
      target_file_size_mb: 256,
      summary: null,
      created_at: "2026-03-01T23:30:00.000Z",
      started_at: null,
      finished_at: null,
    });
    const job = await plane.services.jobs.get(view.id);
    expect(job).toMatchObject({ kind: "crunch", requires: ["s3"], priority: "P2", trigger: "manual" });
    expect(CrunchPayloadSchema.parse(job?.payload)).toEqual({
      table_id: t.id,
      uri: `s3://lake/${t.name}`,
      format: "delta",
      date_range: { start: "2026-02-14", end: "2026-02-14" },
      target_file_size_mb: 256,
      cluster_columns: RECIPE.cluster_columns,
      recipe: RECIPE,
      mutation_interval_minutes: null,
      parquet_v2: false,
      partition: { column: "event_date", value: "2026-02-14" },
    });
  });

  it("queues one job over the whole range of a table without date partitions", async () => {
    const t = await unpartitioned();
    const view = await (await trigger(t.id, LOOKBACK)).json();
    expect(view).toMatchObject({ date_range: { start: "2026-02-14", end: "2026-02-27" }, partition: null });
    expect(view.jobs.map((j: { id: string }) => j.id)).toEqual([view.id]);
    expect(
      CrunchPayloadSchema.parse((await plane.services.jobs.get(view.id))?.payload).partition,
    ).toBeUndefined();
  });

  it("carries the table's Parquet v2 choice to the agent", async () => {
    const view = await (await trigger((await table({ parquet_v2: true })).id, LOOKBACK)).json();
    expect(CrunchPayloadSchema.parse((await plane.services.jobs.get(view.id))?.payload).parquet_v2).toBe(
      true,
    );
  });

  it("covers today alone with 0 and 0, across a year boundary with larger values", async () => {
    const today = await trigger((await table()).id, { lookback_start: 0, lookback_end: 0 });
    expect(days(await today.json())).toEqual(["2026-03-01"]);
    const long = await (await trigger((await table()).id, { lookback_start: 70, lookback_end: 60 })).json();
    expect(days(long)).toHaveLength(11);
    expect([days(long)[0], days(long)[10]]).toEqual(["2025-12-21", "2025-12-31"]);
    const whole = await trigger((await unpartitioned()).id, { lookback_start: 70, lookback_end: 60 });
    expect((await whole.json()).date_range).toEqual({ start: "2025-12-21", end: "2025-12-31" });
  });

  it("takes the trigger's priority over the table's", async () => {
    const t = await table({ priority: "P2" });
    const view = await (await trigger(t.id, { ...LOOKBACK, priority: "P1" })).json();
    expect(view.priority).toBe("P1");
    expect((await plane.services.jobs.get(view.id))?.priority).toBe("P1");
  });

  it("carries the mutation interval setting to the agent", async () => {
    const set = (minutes: number | null) =>
      plane.call("PUT", "/api/v1/config", {
        token: ADMIN_KEY,
        body: { mutation_interval_threshold_minutes: minutes },
      });
    expect((await set(30)).status).toBe(200);
    try {
      const view = await (await trigger((await table()).id, LOOKBACK)).json();
      const job = await plane.services.jobs.get(view.id);
      expect(CrunchPayloadSchema.parse(job?.payload).mutation_interval_minutes).toBe(30);
    } finally {
      expect((await set(null)).status).toBe(200);
    }
  });
});

describe("a backfill trigger", () => {
  it("queues the given dates on the recipe's date column, sorted by the trigger's cluster columns", async () => {
    const t = await table();
    const res = await trigger(t.id, {
      ...BACKFILL,
      cluster_columns: " region , customer_id",
      priority: "P1",
    });
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(days(view)).toHaveLength(31);
    expect(view).toMatchObject({
      date_range: { start: "2026-01-01", end: "2026-01-01" },
      backfill_col: "event_date",
      partition: "event_date=2026-01-01",
      cluster_columns: ["region", "customer_id"],
      priority: "P1",
    });
    const payload = CrunchPayloadSchema.parse((await plane.services.jobs.get(view.jobs[30].id))?.payload);
    expect(payload).toMatchObject({
      date_range: { start: "2026-01-31", end: "2026-01-31" },
      partition: { column: "event_date", value: "2026-01-31" },
      backfill_col: "event_date",
      cluster_columns: ["region", "customer_id"],
      recipe: RECIPE,
    });
  });

  it("queues a whole-table crunch without a date range, sorted by the trigger's cluster columns", async () => {
    const t = await table();
    const res = await trigger(t.id, { whole_table: true, cluster_columns: "region" });
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({ date_range: null, backfill_col: null, cluster_columns: ["region"] });
    const payload = CrunchPayloadSchema.parse((await plane.services.jobs.get(view.id))?.payload);
    expect(payload.date_range).toBeUndefined();
    expect(payload.backfill_col).toBeUndefined();
    expect(payload.cluster_columns).toEqual(["region"]);
    // Without cluster columns, the recipe's.
    const plain = await (await trigger((await table()).id, { whole_table: true })).json();
    expect(plain).toMatchObject({ date_range: null, cluster_columns: RECIPE.cluster_columns });
  });

  it("names the three modes in the 422 of a body with none, and two in one with two", async () => {
    const tableId = (await table()).id;
    const none = (await (await trigger(tableId, {})).json()) as { errors: { message: string }[] };
    expect(none.errors[0]?.message).toMatch(/or whole_table: true/);
    const two = (await (await trigger(tableId, { ...BACKFILL, whole_table: true })).json()) as {
      errors: { message: string }[];
    };
    expect(two.errors[0]?.message).toMatch(/^backfill mode and whole-table mode are exclusive/);
  });

  it("defaults the cluster columns to the recipe's and takes a single day", async () => {
    const view = await (
      await trigger((await table()).id, {
        backfill_start_date: "2026-01-05",
        backfill_end_date: "2026-01-05",
      })
    ).json();
    expect(view).toMatchObject({
      date_range: { start: "2026-01-05", end: "2026-01-05" },
      cluster_columns: RECIPE.cluster_columns,
    });
  });
});

describe("overlapping crunches", () => {
  // Tables without date partitions: each crunch holds the whole table.
  it("refuses a second trigger while the first is queued or running with 409 naming it, and accepts one after it ends", async () => {
    const t = await unpartitioned();
    const first = await (await trigger(t.id, LOOKBACK)).json();
    const again = await trigger(t.id, LOOKBACK);
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain(`'${first.id}' queued`);

    const other = await trigger(t.id, { ...BACKFILL, priority: "P1" });
    expect(other.status).toBe(409);

    const leased = await leaseJob(plane, first.id);
    const running = await trigger(t.id, LOOKBACK);
    expect(running.status).toBe(409);
    expect((await running.json()).detail).toContain(`'${first.id}' running`);

    await plane.services.jobs.complete("agt_fake_for_tests", leased.id, leased.fence, "failed", {
      error: "boom",
      retryable: false,
    });
    const after = await trigger(t.id, LOOKBACK);
    expect(after.status).toBe(202);
    expect((await after.json()).id).not.toBe(first.id);
  });

  it("holds a scheduled crunch of the table queued while another runs, and offers it once that ends", async () => {
    const { jobs } = plane.services;
    const t = await unpartitioned();
    const manual = await (await trigger(t.id, LOOKBACK)).json();
    const leased = await leaseJob(plane, manual.id);
    // A schedule's run of the same table arrives (the scheduler does not ask the trigger).
    const { job: scheduled } = await jobs.enqueue({
      kind: "crunch",
      tableId: t.id,
      payload: { table_id: t.id, uri: t.uri, format: "delta" },
      trigger: "schedule",
    });
    /** Every job the fake agent is offered now; all handed back. */
    const offeredNow = async () => {
      const offered = [];
      for (let job = await jobs.offerNext(FAKE_AGENT); job; job = await jobs.offerNext(FAKE_AGENT))
        offered.push(job);
      for (const job of offered) await jobs.reject(FAKE_AGENT.id, job.id, job.fence);
      return offered.map((j) => j.id);
    };
    expect(await offeredNow()).not.toContain(scheduled.id);

    await jobs.complete(FAKE_AGENT.id, leased.id, leased.fence, "succeeded", { result: {} });
    expect(await offeredNow()).toContain(scheduled.id);
  });

  it("offers other work behind many crunches that wait for the table's running one", async () => {
    const { jobs } = plane.services;
    const t = await unpartitioned();
    const manual = await (await trigger(t.id, LOOKBACK)).json();
    await leaseJob(plane, manual.id);
    const waiting: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { job } = await jobs.enqueue({
        kind: "crunch",
        tableId: t.id,
        payload: { table_id: t.id, uri: t.uri, format: "delta" },
        trigger: "schedule",
        priority: "P1",
      });
      waiting.push(job.id);
    }
    const other = await table();
    const { job: vacuum } = await jobs.enqueue({
      kind: "vacuum",
      tableId: other.id,
      payload: { table_id: other.id, uri: other.uri, format: "delta" },
    });
    const offered = [];
    for (let job = await jobs.offerNext(FAKE_AGENT); job; job = await jobs.offerNext(FAKE_AGENT))
      offered.push(job);
    for (const job of offered) await jobs.reject(FAKE_AGENT.id, job.id, job.fence);
    const ids = offered.map((j) => j.id);
    expect(ids).toContain(vacuum.id);
    expect(ids.filter((id) => waiting.includes(id))).toEqual([]);
  });

  it("offers one of two queued crunches of a table when two agents ask at once", async () => {
    const { jobs } = plane.services;
    const t = await unpartitioned();
    const first = await (await trigger(t.id, LOOKBACK)).json();
    const { job: second } = await jobs.enqueue({
      kind: "crunch",
      tableId: t.id,
      payload: { table_id: t.id, uri: t.uri, format: "delta" },
      trigger: "schedule",
      priority: "P1",
    });
    const agents = ["agt_a", "agt_b"].map((id) => ({ ...FAKE_AGENT, id, kinds: ["crunch"] }));
    const held = async () => {
      const mine = await Promise.all(agents.map((a) => jobs.heldBy(a.id)));
      return mine.flat().filter((j) => j.id === first.id || j.id === second.id);
    };
    // Both agents ask at the same time until nothing is left to offer either of them.
    for (;;) {
      const offers = await Promise.all(agents.map((a) => jobs.offerNext(a)));
      if (offers.every((o) => o === undefined)) break;
    }
    expect(await held()).toHaveLength(1);
  });

  it("does not hold back a crunch of another table", async () => {
    expect((await trigger((await table()).id, LOOKBACK)).status).toBe(202);
    expect((await trigger((await table()).id, LOOKBACK)).status).toBe(202);
  });

  it("queues exactly one job when two triggers race", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await unpartitioned();
      const answers = await Promise.all([trigger(t.id, LOOKBACK), trigger(t.id, { ...BACKFILL })]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 409]);
      const accepted = await answers.find((r) => r.status === 202)?.json();
      const refused = await answers.find((r) => r.status === 409)?.json();
      expect(refused.detail).toContain(accepted.id);
      const list = await (await admin("GET", `/api/v1/tables/${t.id}/crunch`)).json();
      expect(list.total).toBe(1);
      expect(list.items[0].id).toBe(accepted.id);
    }
  });
});

describe("overlapping partitions", () => {
  const backfill = (start: string, end: string) => ({ backfill_start_date: start, backfill_end_date: end });

  it("queues crunches of disjoint days side by side, and refuses one that shares a day with 409 naming its job", async () => {
    const t = await table();
    const first = await (await trigger(t.id, backfill("2026-01-01", "2026-01-03"))).json();
    const disjoint = await trigger(t.id, backfill("2026-01-04", "2026-01-05"));
    expect(disjoint.status).toBe(202);
    expect(days(await disjoint.json())).toEqual(["2026-01-04", "2026-01-05"]);

    const shared = await trigger(t.id, backfill("2026-01-03", "2026-01-04"));
    expect(shared.status).toBe(409);
    expect((await shared.json()).detail).toMatch(/has crunch job 'job_\w+' queued/);
    // Nothing of the refused set was queued: the table still has the five days' jobs.
    const list = await (await admin("GET", `/api/v1/tables/${t.id}/crunch`)).json();
    expect(list.total).toBe(5);
    expect(first.jobs).toHaveLength(3);
  });

  it("queues exactly one of two racing sets that share a day, whole", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await table();
      const answers = await Promise.all([
        trigger(t.id, backfill("2026-01-01", "2026-01-04")),
        trigger(t.id, backfill("2026-01-04", "2026-01-06")),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 409]);
      const accepted = await answers.find((r) => r.status === 202)?.json();
      const list = await (await admin("GET", `/api/v1/tables/${t.id}/crunch`)).json();
      expect(list.total).toBe(accepted.jobs.length);
    }
  });

  it("refuses a whole-table crunch while a day's job is active, and a day while a whole-table crunch is", async () => {
    const t = await table();
    const day = await (await trigger(t.id, backfill("2026-01-02", "2026-01-02"))).json();
    const whole = await trigger(t.id, { whole_table: true });
    expect(whole.status).toBe(409);
    expect((await whole.json()).detail).toContain(`'${day.id}' queued`);

    const other = await table();
    const wholeJob = await (await trigger(other.id, { whole_table: true })).json();
    const refused = await trigger(other.id, backfill("2026-01-02", "2026-01-02"));
    expect(refused.status).toBe(409);
    expect((await refused.json()).detail).toContain(`'${wholeJob.id}' queued`);
  });

  it("offers every day of a fanned-out crunch to agents at once, but not a whole-table crunch beside them", async () => {
    const { jobs } = plane.services;
    const t = await table();
    const set = await (await trigger(t.id, backfill("2026-01-01", "2026-01-03"))).json();
    // Queued after the days, at their priority: the offer comes to the days first.
    clock.advance(1000);
    const { job: whole } = await jobs.enqueue({
      kind: "crunch",
      tableId: t.id,
      payload: { table_id: t.id, uri: t.uri, format: "delta" },
      trigger: "schedule",
    });
    const agents = ["agt_p1", "agt_p2", "agt_p3", "agt_p4"].map((id) => ({
      ...FAKE_AGENT,
      id,
      kinds: ["crunch"],
    }));
    // The agents ask in turn until nothing is left to offer any of them (other suites' jobs too).
    const offered = [];
    for (let more = true; more; ) {
      more = false;
      for (const agent of agents) {
        const job = await jobs.offerNext(agent);
        if (job) offered.push({ agent: agent.id, job });
        more ||= job !== undefined;
      }
    }
    const ofTable = offered.filter((o) => o.job.tableId === t.id).map((o) => o.job.id);
    expect(ofTable.sort()).toEqual(set.jobs.map((j: { id: string }) => j.id).sort());
    expect(ofTable).not.toContain(whole.id);
    for (const { agent, job } of offered) await jobs.reject(agent, job.id, job.fence);
  });
});
