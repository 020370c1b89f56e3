/**
 * `POST/GET /api/v1/tables/{table_id}/partition-expiration` and `POST .../validate`: the column rules
 * against the table's recipe, the retention default from the configuration, `as_of` from the
 * control plane's clock, validates that write nothing and never overlap, the validate's answers
 * (200 with the answer, 202 with the job, 503 with nobody to ask), the list, and who may call.
 * Agents are a connected row and the job service, not sockets (`agents-hub.test.ts` has those).
 */
import { ManualClock } from "@lakesmith/shared";
import { PartitionExpirationPayloadSchema } from "@lakesmith/shared/maintenance";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lakeTables } from "../src/db/schema.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { type ConnectedAgent, connectedAgent } from "./support/connected-agent.ts";
import { expirationResult, expiredFile, fail, lease, succeed } from "./support/deletions.ts";
import { activeTable, adminCall, createTable, RECIPE } from "./support/tables.ts";

// Late in the UTC day, so a local-time mistake would shift as_of.
const clock = new ManualClock(new Date("2026-03-01T23:30:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
let agent: ConnectedAgent;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
  agent = await connectedAgent(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = (extra: Record<string, unknown> = {}) => activeTable(plane, `expire.t${++seq}`, extra);
const base = (tableId: string) => `/api/v1/tables/${tableId}/partition-expiration`;
const trigger = (tableId: string, body: unknown = {}) => admin("POST", base(tableId), body);
/** A validate, while the suite's agent is connected (the clock moves; it says it is alive first). */
const validate = async (tableId: string, body: unknown = {}) => {
  await agent.seen();
  return admin("POST", `${base(tableId)}/validate`, body);
};
const list = async (tableId: string, query = "") => {
  const res = await admin("GET", `${base(tableId)}${query}`);
  expect(res.status).toBe(200);
  return res.json();
};
const payloadOf = async (jobId: string) =>
  PartitionExpirationPayloadSchema.parse((await plane.services.jobs.get(jobId))?.payload);

/** A table whose onboarding found `recipe` instead of the usual one. */
async function tableWithRecipe(recipe: Record<string, unknown>) {
  const t = await table();
  await plane.services.db
    .update(lakeTables)
    .set({ recipe: { ...RECIPE, ...recipe } })
    .where(eq(lakeTables.id, t.id));
  return t;
}

async function invalid(res: Response): Promise<{ fields: string[]; detail: string }> {
  expect(res.status).toBe(422);
  const body = (await res.json()) as { errors: { path: string }[]; detail: string };
  return { fields: [...new Set(body.errors.map((e) => e.path))].sort(), detail: body.detail };
}

describe("validation", () => {
  let tableId: string;
  beforeAll(async () => {
    tableId = (await table()).id;
  });

  it.each([
    ["a retention of 0 days", { retention_days: 0 }, ["retention_days"]],
    ["a fractional retention", { retention_days: 1.5 }, ["retention_days"]],
    ["a retention as a string", { retention_days: "30" }, ["retention_days"]],
    ["an empty column", { partition_column: "" }, ["partition_column"]],
    ["a dry_run that is not a boolean", { dry_run: 1 }, ["dry_run"]],
  ])("refuses %s with 422 naming the field, on the trigger and on validate", async (_name, body, fields) => {
    expect((await invalid(await trigger(tableId, body))).fields).toEqual(fields);
    expect((await invalid(await validate(tableId, body))).fields).toEqual(fields);
  });

  it("refuses an unknown field with 422 naming it", async () => {
    expect((await invalid(await trigger(tableId, { retention_hours: 5 }))).detail).toContain(
      "retention_hours",
    );
  });

  it("refuses a column that is not one of the recipe's partition columns with 422 on partition_column", async () => {
    const res = await invalid(await trigger(tableId, { partition_column: "customer_id" }));
    expect(res.fields).toEqual(["partition_column"]);
    expect(res.detail).toContain("'customer_id' is not a partition column");
    expect(res.detail).toContain("event_date");
    expect((await invalid(await validate(tableId, { partition_column: "customer_id" }))).fields).toEqual([
      "partition_column",
    ]);
  });

  it("refuses a missing column when the recipe has no date filter column with 422 on partition_column", async () => {
    const t = await tableWithRecipe({ date_filter_column: null });
    const res = await invalid(await trigger(t.id));
    expect(res.fields).toEqual(["partition_column"]);
    expect(res.detail).toContain("no date filter column");
    expect((await trigger(t.id, { partition_column: "event_date" })).status).toBe(202);
  });

  it("refuses a defaulted date filter column that is not a partition column with 422", async () => {
    const t = await tableWithRecipe({ partition_columns: ["region"], date_filter_column: "event_date" });
    const res = await invalid(await trigger(t.id));
    expect(res.fields).toEqual(["partition_column"]);
    expect(res.detail).toContain("is not a partition column");
  });

  it("needs a named column while onboarding has not produced the recipe, and takes any then", async () => {
    const pending = await createTable(plane, `expire.pending${++seq}`);
    const res = await invalid(await trigger(pending.id));
    expect(res.fields).toEqual(["partition_column"]);
    expect(res.detail).toContain("'pending'");
    const view = await (await trigger(pending.id, { partition_column: "day" })).json();
    expect(view).toMatchObject({ partition_column: "day", status: "queued" });
    expect((await payloadOf(view.id)).recipe).toBeNull();
  });

  it("queues nothing for a refused trigger", async () => {
    expect((await list(tableId)).total).toBe(0);
  });
});

describe("the table", () => {
  it("answers 404 for an unknown table, on the trigger and on validate", async () => {
    expect((await trigger("tbl_missing")).status).toBe(404);
    expect((await validate("tbl_missing")).status).toBe(404);
  });

  it.each(["iceberg", "hive"])("refuses a %s table with 422 on format: Delta tables only", async (format) => {
    const t = await table({ format });
    for (const res of [await trigger(t.id), await validate(t.id)]) {
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(JSON.stringify(body)).toContain("Delta tables only");
      expect(JSON.stringify(body)).toContain("format");
    }
  });
});

describe("the payload", () => {
  it("defaults to the recipe's date column and the configured retention, as of today UTC", async () => {
    const t = await table({ priority: "P1" });
    const res = await trigger(t.id);
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({
      table_id: t.id,
      status: "queued",
      trigger: "manual",
      priority: "P1",
      partition_column: "event_date",
      retention_days: 30,
      as_of: "2026-03-01",
      dry_run: false,
      validate: false,
      summary: null,
    });
    const job = await plane.services.jobs.get(view.id);
    expect(job).toMatchObject({ kind: "partition_expiration", requires: ["s3"], priority: "P1" });
    expect(job?.payload).toEqual({
      table_id: t.id,
      uri: `s3://lake/${t.name}`,
      format: "delta",
      partition_column: "event_date",
      retention_days: 30,
      as_of: "2026-03-01",
      dry_run: false,
      validate: false,
      recipe: RECIPE,
    });
  });

  it("takes the retention from default_partition_expiration_days unless the trigger names one", async () => {
    const set = (days: number) =>
      plane.call("PUT", "/api/v1/config", {
        token: ADMIN_KEY,
        body: { default_partition_expiration_days: days },
      });
    expect((await set(45)).status).toBe(200);
    try {
      const defaulted = await (await trigger((await table()).id)).json();
      expect((await payloadOf(defaulted.id)).retention_days).toBe(45);
      const named = await (await trigger((await table()).id, { retention_days: 7, dry_run: true })).json();
      expect(await payloadOf(named.id)).toMatchObject({ retention_days: 7, dry_run: true, validate: false });
    } finally {
      expect((await set(30)).status).toBe(200);
    }
  });

  it("makes a validate a job that writes nothing: validate and dry_run set", async () => {
    const t = await table();
    const res = await validate(t.id, { partition_column: "event_date", retention_days: 90 });
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({ validate: true, dry_run: true, retention_days: 90, status: "queued" });
    expect(await payloadOf(view.id)).toMatchObject({
      validate: true,
      dry_run: true,
      partition_column: "event_date",
    });
  });
});

describe("validates and overlapping expirations", () => {
  it("refuses a second real or dry run while one is active with 409 naming it, and accepts one after it ends", async () => {
    const t = await table();
    const first = await (await trigger(t.id)).json();
    const again = await trigger(t.id, { dry_run: true });
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain(`'${first.id}' queued`);
    const leased = await lease(plane, first.id);
    expect((await trigger(t.id)).status).toBe(409);
    // A validate is neither held back by the running expiration nor holds back the next one.
    const preflight = await validate(t.id);
    expect(preflight.status).toBe(202);
    await succeed(plane, leased, expirationResult([expiredFile("2025-12-01")]));
    expect((await trigger(t.id)).status).toBe(202);
  });

  it("counts a scheduled expiration of the table (its payload has no validate)", async () => {
    const t = await table();
    await plane.services.jobs.enqueue({
      kind: "partition_expiration",
      tableId: t.id,
      payload: { table_id: t.id, uri: `s3://lake/${t.name}`, format: "delta", schedule_id: "sch_y" },
      trigger: "schedule",
    });
    expect((await trigger(t.id)).status).toBe(409);
    expect((await validate(t.id)).status).toBe(202);
  });

  it("queues exactly one job when two triggers race", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await table();
      const answers = await Promise.all([trigger(t.id), trigger(t.id, { dry_run: true })]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 409]);
      expect((await list(t.id)).total).toBe(1);
    }
  });
});

describe("the validate's answer", () => {
  /** The id of the table's only expiration job, once the request has queued it. */
  async function queuedJobOf(p: TestPlane, tableId: string): Promise<string> {
    for (;;) {
      const page = await p.services.jobs.list({ tableId, kinds: ["partition_expiration"] }, 0, 1);
      if (page.items[0]) return page.items[0].id;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it("answers 202 with the queued job when no agent answers within the wait (poll GET /jobs/{id})", async () => {
    const t = await table();
    const res = await validate(t.id);
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({ status: "queued", validate: true, summary: null });
    expect(view.result_note).toContain("queued");
    const job = await admin("GET", `/api/v1/jobs/${view.id}`);
    expect(job.status).toBe(200);
    expect((await job.json()).status).toBe("queued");
  });

  describe("when the agent answers within the wait", () => {
    let waiting: TestPlane;
    beforeAll(async () => {
      waiting = await startTestPlane({ clock, leaseTimings: { preflightWaitMs: 60_000 } });
      await connectedAgent(waiting);
    });
    afterAll(() => waiting.close());

    it("answers 200 with the answer as the summary", async () => {
      const t = await activeTable(waiting, "expire.answered");
      const asked = adminCall(waiting)("POST", `${base(t.id)}/validate`, { retention_days: 60 });
      const id = await queuedJobOf(waiting, t.id);
      const answer = expirationResult([expiredFile("2025-12-01")], {
        validate: true,
        dry_run: true,
        retention_days: 60,
        committed_version: null,
        committed_at: null,
      });
      await succeed(waiting, id, answer);
      const res = await asked;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id,
        status: "succeeded",
        validate: true,
        retention_days: 60,
        summary: { can_run: true, files_count: 1, committed_version: null },
        result_note: null,
      });
    });

    it("answers 200 with the error when the job fails within the wait", async () => {
      const t = await activeTable(waiting, "expire.answered-failed");
      const asked = adminCall(waiting)("POST", `${base(t.id)}/validate`, {});
      const id = await queuedJobOf(waiting, t.id);
      await fail(waiting, id, "the table's log can't be read: access denied");
      const res = await asked;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id,
        status: "failed",
        summary: null,
        error: "the table's log can't be read: access denied",
      });
    });
  });

  describe("when no connected agent may run it", () => {
    const lonelyClock = new ManualClock(new Date("2026-03-01T12:00:00Z"));
    let lonely: TestPlane;
    let ask: ReturnType<typeof adminCall>;
    beforeAll(async () => {
      lonely = await startTestPlane({ clock: lonelyClock });
      ask = adminCall(lonely);
    });
    afterAll(() => lonely.close());

    const jobsOf = async (tableId: string) =>
      (await lonely.services.jobs.list({ tableId, kinds: ["partition_expiration"] }, 0, 1)).total;
    /** Asks, expects a 503 that queued nothing, and returns its detail. */
    const refused = async (tableId: string) => {
      const before = await jobsOf(tableId);
      const res = await ask("POST", `${base(tableId)}/validate`, {});
      expect(res.status).toBe(503);
      expect(await jobsOf(tableId)).toBe(before);
      return (await res.json()).detail as string;
    };

    it("answers 503 at once while no agent is connected, and queues nothing", async () => {
      const t = await activeTable(lonely, "expire.nobody");
      const detail = await refused(t.id);
      expect(detail).toContain("no connected agent runs partition expiration");
      expect(detail).toContain("s3://lake/expire.nobody");
      expect(detail).toContain("nothing was queued");
    });

    it("answers 503 naming what the connected agents allow when none covers the table, and 202 once one does", async () => {
      const t = await activeTable(lonely, "expire.outside");
      await connectedAgent(lonely, { name: "other-bucket", allow: ["s3://other/"] });
      await connectedAgent(lonely, { name: "vacuum-only", kinds: ["vacuum"] });
      const detail = await refused(t.id);
      expect(detail).toContain("other-bucket: s3://other");
      expect(detail).not.toContain("vacuum-only");
      await connectedAgent(lonely, { name: "lake-bucket", allow: ["s3://lake/expire.outside"] });
      expect((await ask("POST", `${base(t.id)}/validate`, {})).status).toBe(202);
    });

    it("answers 503 when the only allowed agent is draining or has gone silent", async () => {
      const t = await activeTable(lonely, "expire.silent", { uri: "gs://other-lake/silent" });
      await connectedAgent(lonely, { name: "draining", allow: ["gs://other-lake/"], draining: true });
      expect(await refused(t.id)).not.toContain("draining");
      await connectedAgent(lonely, { name: "silent", allow: ["gs://other-lake/"] });
      expect((await ask("POST", `${base(t.id)}/validate`, {})).status).toBe(202);
      // Three heartbeats without a sign of life: the plane no longer counts it (nor any other).
      lonelyClock.advance(lonely.services.jobs.timings.heartbeatMs * 3 + 1000);
      expect(await refused(t.id)).toContain("no connected agent runs partition expiration");
    });
  });
});

describe("the list of a table's expiration jobs", () => {
  let t: { id: string };
  const ids: string[] = [];
  beforeAll(async () => {
    t = await table();
    clock.advance(60_000);
    const v = await (await validate(t.id)).json();
    ids.unshift(v.id);
    await succeed(
      plane,
      v.id,
      expirationResult([], {
        validate: true,
        dry_run: true,
        can_run: false,
        reason: "event_date is not a date column",
        committed_version: null,
        committed_at: null,
      }),
    );
    clock.advance(60_000);
    const failed = await (await trigger(t.id)).json();
    ids.unshift(failed.id);
    await fail(plane, failed.id, "the commit conflicted 5 times");
    clock.advance(60_000);
    ids.unshift((await (await trigger(t.id, { dry_run: true })).json()).id);
    // A vacuum of the same table is not an expiration job.
    await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {});
  });

  it("is newest first with offset and limit, and shows each job's answer", async () => {
    const all = await list(t.id);
    expect(all.total).toBe(3);
    expect(all.items.map((j: { id: string }) => j.id)).toEqual(ids);
    expect(all.items[2]).toMatchObject({
      validate: true,
      status: "succeeded",
      summary: {
        can_run: false,
        reason: "event_date is not a date column",
        files_count: 0,
        committed_at: null,
      },
      result_note: null,
    });
    expect(all.items[1]).toMatchObject({
      status: "failed",
      summary: null,
      error: "the commit conflicted 5 times",
    });
    const page = await list(t.id, "?offset=1&limit=1");
    expect(page).toMatchObject({ total: 3, offset: 1, limit: 1 });
    expect(page.items.map((j: { id: string }) => j.id)).toEqual([ids[1]]);
  });

  it("filters by status, and refuses bad paging with 422", async () => {
    expect((await list(t.id, "?status=queued")).items.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect((await admin("GET", `${base(t.id)}?limit=1001`)).status).toBe(422);
    expect((await admin("GET", `${base(t.id)}?offset=-1`)).status).toBe(422);
  });

  it("answers 404 for a table that never existed", async () => {
    expect((await admin("GET", base("tbl_never"))).status).toBe(404);
  });
});

describe("who may expire partitions", () => {
  it("lets a Viewer list but neither trigger nor validate", async () => {
    const t = await table();
    const { token } = await plane.userWithRole("Viewer");
    expect((await plane.call("GET", base(t.id), { token })).status).toBe(200);
    expect((await plane.call("POST", base(t.id), { token, body: {} })).status).toBe(403);
    expect((await plane.call("POST", `${base(t.id)}/validate`, { token, body: {} })).status).toBe(403);
  });

  it("needs vacuum:write to trigger or validate; deletions:write does not do", async () => {
    const t = await table();
    const write = (await plane.apiKey(["vacuum:write"])).key;
    const read = (await plane.apiKey(["vacuum:read"])).key;
    const deletions = (await plane.apiKey(["deletions:write"])).key;
    expect((await plane.call("POST", `${base(t.id)}/validate`, { token: read, body: {} })).status).toBe(403);
    expect((await plane.call("POST", base(t.id), { token: deletions, body: {} })).status).toBe(403);
    expect((await plane.call("GET", base(t.id), { token: read })).status).toBe(200);
    await agent.seen();
    expect((await plane.call("POST", `${base(t.id)}/validate`, { token: write, body: {} })).status).toBe(202);
    expect((await plane.call("POST", base(t.id), { token: write, body: {} })).status).toBe(202);
  });
});
