/**
 * `POST/GET /api/v1/tables/{table_id}/vacuum`: the trigger's validation, the table formats vacuum
 * takes, the payload the agent parses (with the paths recovered records keep), a table's vacuums
 * never overlapping, the per-table list, and who may call.
 */
import { ManualClock } from "@lakesmith/shared";
import { VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  AGENT,
  expired,
  expiredFile,
  fail,
  lease,
  recoverPayloadOf,
  recoverResult,
  succeed,
  tombstone,
  vacuumed,
} from "./support/deletions.ts";
import { activeTable, adminCall, createTable } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-03-01T08:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = (extra: Record<string, unknown> = {}) => activeTable(plane, `vacuum.t${++seq}`, extra);
const trigger = (tableId: string, body: unknown = {}) =>
  admin("POST", `/api/v1/tables/${tableId}/vacuum`, body);
const list = async (tableId: string, query = "") => {
  const res = await admin("GET", `/api/v1/tables/${tableId}/vacuum${query}`);
  expect(res.status).toBe(200);
  return res.json();
};
const payloadOf = async (jobId: string) =>
  VacuumPayloadSchema.parse((await plane.services.jobs.get(jobId))?.payload);

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
    ["an unknown mode", { mode: "deep" }, ["mode"]],
    ["a negative retention", { retention_hours: -1 }, ["retention_hours"]],
    ["a retention as a string", { retention_hours: "24" }, ["retention_hours"]],
    ["a dry_run that is not a boolean", { dry_run: "yes" }, ["dry_run"]],
  ])("refuses %s with 422 naming the field", async (_name, body, fields) => {
    expect(await invalidFields(await trigger(tableId, body))).toEqual(fields);
  });

  it("refuses an unknown field with 422 naming it", async () => {
    const res = await trigger(tableId, { retention_days: 7 });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toContain("retention_days");
  });

  it("queues nothing for a refused trigger", async () => {
    expect((await list(tableId)).total).toBe(0);
  });
});

describe("the table", () => {
  it("answers 404 for an unknown table", async () => {
    const res = await trigger("tbl_missing");
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain("tbl_missing");
  });

  it("queues a vacuum of an Iceberg table (snapshot expiry and orphans)", async () => {
    const res = await trigger((await table({ format: "iceberg" })).id);
    expect(res.status).toBe(202);
    expect((await res.json()).status).toBe("queued");
  });

  it("refuses a Hive table with 422 naming format", async () => {
    const res = await trigger((await table({ format: "hive" })).id);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.detail).toContain("vacuum works on Delta and Iceberg tables");
    expect(JSON.stringify(body)).toContain("format");
  });

  it("takes a Delta table whose onboarding has not finished: vacuum needs no recipe", async () => {
    const pending = await createTable(plane, `vacuum.pending${++seq}`);
    expect((await trigger(pending.id)).status).toBe(202);
  });
});

describe("the payload", () => {
  it("defaults to a lite, real run with the table's own retention and nothing kept", async () => {
    const t = await table({ priority: "P1" });
    const res = await trigger(t.id);
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view).toMatchObject({
      table_id: t.id,
      status: "queued",
      trigger: "manual",
      schedule_id: null,
      priority: "P1",
      mode: "lite",
      dry_run: false,
      retention_hours: null,
      keep_count: 0,
      summary: null,
      created_at: "2026-03-01T08:00:00.000Z",
    });
    expect(view.result_note).toContain("queued");
    const job = await plane.services.jobs.get(view.id);
    expect(job).toMatchObject({ kind: "vacuum", requires: ["s3"], priority: "P1", trigger: "manual" });
    expect(job?.payload).toEqual({
      table_id: t.id,
      uri: `s3://lake/${t.name}`,
      format: "delta",
      mode: "lite",
      // A manual trigger's retention is what it asked for: a policy's never shortens unasked.
      keep_table_retention: false,
      dry_run: false,
      keep: [],
    });
  });

  it("carries the mode, an explicit retention (zero included) and a dry run", async () => {
    const t = await table();
    const view = await (await trigger(t.id, { mode: "full", retention_hours: 0, dry_run: true })).json();
    expect(view).toMatchObject({ mode: "full", retention_hours: 0, dry_run: true });
    expect(await payloadOf(view.id)).toMatchObject({ mode: "full", retention_hours: 0, dry_run: true });
  });

  it("keeps the paths of the table's RECOVERED vacuum records, and not those of recovered expirations", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, [
      tombstone("a/kept.parquet"),
      tombstone("a/gone.parquet"),
    ]);
    const kept = records.find((r) => r.path === "a/kept.parquet");
    expect(
      (await admin("POST", `/api/v1/pending-deletions/${kept?.id}/recover`, { reason: "audit" })).status,
    ).toBe(200);
    const exp = await expired(plane, t.id, [expiredFile("2025-12-01")]);
    const recovering = await (
      await admin("POST", `/api/v1/pending-deletions/${exp.records[0]?.id}/recover`, { reason: "needed" })
    ).json();
    await succeed(
      plane,
      recovering.recover_job_id,
      recoverResult(await recoverPayloadOf(plane, recovering.recover_job_id)),
    );
    const view = await (await trigger(t.id)).json();
    expect(view.keep_count).toBe(1);
    expect((await payloadOf(view.id)).keep).toEqual(["a/kept.parquet"]);
  });
});

describe("overlapping vacuums", () => {
  it("refuses a second trigger while the first is queued or running with 409 naming it, and accepts one after it ends", async () => {
    const t = await table();
    const first = await (await trigger(t.id)).json();
    const again = await trigger(t.id, { dry_run: true });
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain(`'${first.id}' queued`);
    const leased = await lease(plane, first.id);
    const running = await trigger(t.id, { mode: "full" });
    expect(running.status).toBe(409);
    expect((await running.json()).detail).toContain(`'${first.id}' running`);
    await plane.services.jobs.complete(AGENT.id, leased.id, leased.fence, "failed", {
      error: "listing failed",
      retryable: false,
    });
    expect((await trigger(t.id)).status).toBe(202);
  });

  it("counts a scheduled vacuum of the table, and holds back no other table", async () => {
    const t = await table();
    await plane.services.jobs.enqueue({
      kind: "vacuum",
      tableId: t.id,
      payload: { table_id: t.id, uri: `s3://lake/${t.name}`, format: "delta", schedule_id: "sch_x" },
      trigger: "schedule",
      scheduleId: "sch_x",
    });
    expect((await trigger(t.id)).status).toBe(409);
    expect((await trigger((await table()).id)).status).toBe(202);
  });

  it("queues exactly one job when two triggers race", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await table();
      const answers = await Promise.all([trigger(t.id), trigger(t.id, { mode: "full" })]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 409]);
      const accepted = await answers.find((r) => r.status === 202)?.json();
      const refused = await answers.find((r) => r.status === 409)?.json();
      expect(refused.detail).toContain(accepted.id);
      const page = await list(t.id);
      expect(page.total).toBe(1);
      expect(page.items[0].id).toBe(accepted.id);
    }
  });
});

describe("the list of a table's vacuum jobs", () => {
  let t: { id: string; name: string };
  const ids: string[] = [];
  beforeAll(async () => {
    t = await table();
    for (let i = 0; i < 4; i++) {
      clock.advance(60_000);
      const { id } = await (await trigger(t.id, { dry_run: i % 2 === 0 })).json();
      ids.unshift(id);
      if (i < 3) await fail(plane, id, `attempt ${i} failed`);
    }
    // An expiration of the same table is not a vacuum job.
    await admin("POST", `/api/v1/tables/${t.id}/partition-expiration`, {});
  });

  it("is newest first, with offset and limit", async () => {
    const all = await list(t.id);
    expect(all).toMatchObject({ total: 4, offset: 0, limit: 100 });
    expect(all.items.map((j: { id: string }) => j.id)).toEqual(ids);
    const page = await list(t.id, "?offset=1&limit=2");
    expect(page).toMatchObject({ total: 4, offset: 1, limit: 2 });
    expect(page.items.map((j: { id: string }) => j.id)).toEqual(ids.slice(1, 3));
    const past = await list(t.id, "?offset=10");
    expect(past).toMatchObject({ total: 4, items: [] });
  });

  it("filters by status", async () => {
    const failed = await list(t.id, "?status=failed");
    expect(failed.total).toBe(3);
    expect(failed.items[0]).toMatchObject({ status: "failed", error: "attempt 2 failed" });
    expect(failed.items[0].result_note).toContain("attempt 2 failed");
    expect((await list(t.id, "?status=queued")).items.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
  });

  it("refuses a limit above 1000, a limit of 0 and an unknown status with 422", async () => {
    expect(await invalidFields(await admin("GET", `/api/v1/tables/${t.id}/vacuum?limit=1001`))).toEqual([
      "limit",
    ]);
    expect(await invalidFields(await admin("GET", `/api/v1/tables/${t.id}/vacuum?limit=0`))).toEqual([
      "limit",
    ]);
    expect(await invalidFields(await admin("GET", `/api/v1/tables/${t.id}/vacuum?status=done`))).toEqual([
      "status",
    ]);
  });

  it("answers 404 for a table that never existed, and still lists a deleted table's jobs", async () => {
    expect((await admin("GET", "/api/v1/tables/tbl_never/vacuum")).status).toBe(404);
    const gone = await table();
    const { jobId } = await vacuumed(plane, gone.id, [tombstone("x.parquet")]);
    expect((await admin("DELETE", `/api/v1/tables/${gone.id}`)).status).toBe(204);
    expect((await list(gone.id)).items.map((j: { id: string }) => j.id)).toEqual([jobId]);
    const empty = await table();
    expect((await admin("DELETE", `/api/v1/tables/${empty.id}`)).status).toBe(204);
    expect((await admin("GET", `/api/v1/tables/${empty.id}/vacuum`)).status).toBe(404);
  });
});

describe("who may vacuum", () => {
  it("lets a Viewer list but not trigger; an Editor triggers", async () => {
    const t = await table();
    const viewer = await plane.userWithRole("Viewer");
    const editor = await plane.userWithRole("Editor");
    expect((await plane.call("GET", `/api/v1/tables/${t.id}/vacuum`, { token: viewer.token })).status).toBe(
      200,
    );
    expect(
      (await plane.call("POST", `/api/v1/tables/${t.id}/vacuum`, { token: viewer.token, body: {} })).status,
    ).toBe(403);
    expect(
      (await plane.call("POST", `/api/v1/tables/${t.id}/vacuum`, { token: editor.token, body: {} })).status,
    ).toBe(202);
  });

  it("needs vacuum:read to list and vacuum:write to trigger; deletions and tables scopes do not do", async () => {
    const t = await table();
    const call = (key: string, method: string) =>
      plane.call(method, `/api/v1/tables/${t.id}/vacuum`, {
        token: key,
        ...(method === "POST" ? { body: {} } : {}),
      });
    const read = (await plane.apiKey(["vacuum:read"])).key;
    const write = (await plane.apiKey(["vacuum:write"])).key;
    const deletions = (await plane.apiKey(["deletions:write", "tables:write"])).key;
    expect((await call(read, "GET")).status).toBe(200);
    expect((await call(read, "POST")).status).toBe(403);
    expect((await call(deletions, "GET")).status).toBe(403);
    expect((await call(deletions, "POST")).status).toBe(403);
    expect((await call(write, "GET")).status).toBe(200);
    expect((await call(write, "POST")).status).toBe(202);
  });
});
