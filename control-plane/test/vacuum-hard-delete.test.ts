/**
 * `POST /api/v1/vacuum/hard-delete`: which records it picks (eligible PENDING_DELETE only, oldest
 * eligible first, up to the limit), a dry run that changes nothing and names exactly what the real
 * call claims, one hard_delete job per table, what the agent's answer does to each record, records
 * going back to PENDING_DELETE when a job fails or is cancelled, and who may call.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { routingOf } from "../src/jobs/enqueue.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  AGENT,
  expired,
  expiredFile,
  fail,
  HOUR_MS,
  hardDeletePayloadOf,
  hardDeleteResult,
  lease,
  type RecordWire,
  succeed,
  tombstone,
  vacuumed,
} from "./support/deletions.ts";
import { activeTable, adminCall } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-05-01T06:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = (extra: Record<string, unknown> = {}) => activeTable(plane, `hard.t${++seq}`, extra);
const hardDelete = (query = "") => admin("POST", `/api/v1/vacuum/hard-delete${query}`);
const record = async (id: string | undefined): Promise<RecordWire> =>
  (await admin("GET", `/api/v1/pending-deletions/${id}`)).json();
const ids = (body: { items: { id: string }[] }) => body.items.map((r) => r.id);
const files = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => tombstone(`${prefix}/${i}.parquet`));

/**
 * Hard-deletes everything eligible now (in calls of 5000), completing each job as the agent would,
 * so every test starts from a plane with nothing eligible.
 */
async function drain() {
  for (;;) {
    const res = await hardDelete("?limit=5000");
    const body = await res.json();
    for (const job of body.jobs)
      await succeed(plane, job.id, hardDeleteResult(await hardDeletePayloadOf(plane, job.id)));
    if (body.records === 0) return;
  }
}
beforeEach(drain);

describe("the query", () => {
  it("refuses a limit above 5000 with 422 naming limit, and other bad values too", async () => {
    for (const [query, field] of [
      ["?limit=5001", "limit"],
      ["?limit=0", "limit"],
      ["?limit=many", "limit"],
      ["?dry_run=yes", "dry_run"],
      ["?table_id=", "table_id"],
    ]) {
      const res = await hardDelete(query);
      expect(res.status, query).toBe(422);
      expect(
        (await res.json()).errors.map((e: { path: string }) => e.path),
        query,
      ).toEqual([field]);
    }
  });

  it("answers 404 for an unknown table_id", async () => {
    const res = await hardDelete("?table_id=tbl_missing");
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain("tbl_missing");
  });
});

describe("which records it picks", () => {
  it("answers 200 with nothing when nothing is eligible, dry run or not", async () => {
    const t = await table();
    await vacuumed(plane, t.id, files("young", 3));
    for (const query of ["?dry_run=true", ""]) {
      const res = await hardDelete(query);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        records: 0,
        bytes: 0,
        jobs: [],
        items: [],
        files_by_table: [],
      });
    }
    clock.advance(24 * HOUR_MS);
    expect((await (await hardDelete("?dry_run=true")).json()).records).toBe(3);
  });

  it("picks 500 by default, up to 5000 with limit, oldest eligible first", async () => {
    const t = await table();
    const older = await vacuumed(plane, t.id, files("older", 300));
    clock.advance(HOUR_MS);
    const newer = await vacuumed(plane, t.id, files("newer", 300));
    clock.advance(25 * HOUR_MS);
    const preview = await (await hardDelete("?dry_run=true")).json();
    expect(preview.records).toBe(500);
    expect(preview.items).toHaveLength(500);
    const olderIds = new Set(older.records.map((r) => r.id));
    expect(preview.items.slice(0, 300).every((r: RecordWire) => olderIds.has(r.id))).toBe(true);
    const eligible = preview.items.map((r: RecordWire) => r.eligible_at);
    expect([...eligible].sort()).toEqual(eligible);
    expect((await (await hardDelete("?dry_run=true&limit=5000")).json()).records).toBe(600);
    expect((await (await hardDelete("?dry_run=true&limit=7")).json()).records).toBe(7);
    expect(newer.records).toHaveLength(300);
  });

  it("never picks RECOVERED, RECOVERING or DELETING records, nor records not yet eligible", async () => {
    const t = await table();
    const vac = await vacuumed(plane, t.id, files("mixed", 3));
    const exp = await expired(plane, t.id, [expiredFile("2025-12-01")], {
      result: { committed_at: clock.now().getTime(), table_retention_hours: 0 },
    });
    clock.advance(25 * HOUR_MS);
    expect(
      (await admin("POST", `/api/v1/pending-deletions/${vac.records[0]?.id}/recover`, { reason: "r" }))
        .status,
    ).toBe(200);
    expect(
      (await admin("POST", `/api/v1/pending-deletions/${exp.records[0]?.id}/recover`, { reason: "r" }))
        .status,
    ).toBe(202);
    const young = await vacuumed(plane, t.id, files("young-again", 2));
    const first = await (await hardDelete(`?table_id=${t.id}`)).json();
    expect(first.records).toBe(2);
    const claimed = new Set(ids(first));
    expect(claimed).toEqual(new Set([vac.records[1]?.id, vac.records[2]?.id]));
    const second = await hardDelete(`?table_id=${t.id}`);
    expect(second.status).toBe(200);
    expect((await second.json()).records).toBe(0);
    expect(young.records.every((r) => !claimed.has(r.id))).toBe(true);
  });

  it("only picks the given table's records with table_id", async () => {
    const [a, b] = [await table(), await table()];
    await vacuumed(plane, a.id, files("a", 2));
    await vacuumed(plane, b.id, files("b", 3));
    clock.advance(25 * HOUR_MS);
    const body = await (await hardDelete(`?dry_run=true&table_id=${b.id}`)).json();
    expect(body.records).toBe(3);
    expect(body.files_by_table).toEqual([{ table_id: b.id, files: 3, bytes: 3000 }]);
  });

  it("never picks the records of a deleted table; they stay PENDING_DELETE", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, files("orphaned-table", 2));
    clock.advance(25 * HOUR_MS);
    expect((await admin("DELETE", `/api/v1/tables/${t.id}`)).status).toBe(204);
    expect((await (await hardDelete()).json()).records).toBe(0);
    expect((await record(records[0]?.id)).status).toBe("PENDING_DELETE");
    const stats = await (await admin("GET", `/api/v1/pending-deletions/stats?table_id=${t.id}`)).json();
    expect(stats).toMatchObject({ counts: { PENDING_DELETE: 2 }, eligible_now: 0 });
  });
});

describe("a dry run", () => {
  it("changes nothing and lists exactly the records the real call claims", async () => {
    const [a, b] = [await table(), await table({ uri: "gs://other-lake/events" })];
    await vacuumed(plane, a.id, files("dry-a", 4));
    clock.advance(HOUR_MS);
    await vacuumed(plane, b.id, files("dry-b", 3));
    await expired(plane, a.id, [expiredFile("2025-11-30")], {
      result: { committed_at: clock.now().getTime(), table_retention_hours: 0 },
    });
    clock.advance(30 * HOUR_MS);
    const statsBefore = await (await admin("GET", "/api/v1/pending-deletions/stats")).json();
    const queued = async () =>
      (await plane.services.jobs.list({ kinds: ["hard_delete"], status: "queued" }, 0, 1)).total;
    const queuedBefore = await queued();
    const dry = await hardDelete("?dry_run=true&limit=6");
    expect(dry.status).toBe(200);
    const preview = await dry.json();
    expect(preview).toMatchObject({ dry_run: true, records: 6, jobs: [] });
    expect(preview.items.every((r: RecordWire) => r.status === "PENDING_DELETE")).toBe(true);
    expect(await (await admin("GET", "/api/v1/pending-deletions/stats")).json()).toEqual(statsBefore);
    expect(await queued()).toBe(queuedBefore);

    const real = await hardDelete("?limit=6");
    expect(real.status).toBe(202);
    const claimed = await real.json();
    expect(claimed).toMatchObject({ dry_run: false, records: 6, bytes: preview.bytes });
    expect(ids(claimed)).toEqual(ids(preview));
    expect(claimed.files_by_table).toEqual(preview.files_by_table);
    expect(claimed.items.every((r: RecordWire) => r.status === "DELETING")).toBe(true);
  });
});

describe("a real call", () => {
  it("claims the records and queues one hard_delete job per table with the claimed files", async () => {
    const [a, b] = [await table(), await table({ uri: "gs://other-lake/hd" })];
    await vacuumed(plane, a.id, files("real-a", 3));
    await vacuumed(plane, b.id, files("real-b", 2));
    clock.advance(25 * HOUR_MS);
    const res = await hardDelete();
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.jobs).toHaveLength(2);
    for (const t of [a, b]) {
      const job = body.jobs.find((j: { table_id: string }) => j.table_id === t.id);
      const mine = body.items.filter((r: RecordWire) => r.table_id === t.id);
      expect(job).toMatchObject({
        status: "queued",
        files: mine.length,
        created_at: clock.now().toISOString(),
      });
      const payload = await hardDeletePayloadOf(plane, job.id);
      expect(payload).toMatchObject({ table_id: t.id, format: "delta" });
      expect(payload.uri).toBe(t.id === a.id ? `s3://lake/${a.name}` : "gs://other-lake/hd");
      expect(new Set(payload.files)).toEqual(
        new Set(mine.map((r: RecordWire) => ({ deletion_id: r.id, path: r.path }))),
      );
      const row = await plane.services.jobs.get(job.id);
      expect(row).toMatchObject({
        kind: "hard_delete",
        requires: [t.id === a.id ? "s3" : "gs"],
        trigger: "manual",
      });
      // The routing columns written in SQL are what the kind's declaration derives from the payload.
      const derived = routingOf(plane.services.jobs.engine, { kind: "hard_delete", payload, tableId: t.id });
      expect(row).toMatchObject({
        requires: derived.requires,
        locations: derived.locations,
        endpoints: derived.endpoints,
        exclusion: derived.exclusion,
        locks: derived.locks,
      });
      for (const r of mine) expect((await record(r.id)).hard_delete_job_id).toBe(job.id);
    }
  });

  it("records what the agent did: deleted and absent are DELETED, retained is RETAINED, failed and unreported are PENDING_DELETE", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, files("outcome", 5));
    clock.advance(25 * HOUR_MS);
    const { jobs } = await (await hardDelete(`?table_id=${t.id}`)).json();
    const payload = await hardDeletePayloadOf(plane, jobs[0].id);
    const path = (i: number) => `outcome/${i}.parquet`;
    clock.advance(60_000);
    await succeed(
      plane,
      jobs[0].id,
      hardDeleteResult(
        payload,
        {
          [path(1)]: { outcome: "absent" },
          [path(2)]: { outcome: "retained", detail: "referenced by table version 51" },
          [path(3)]: { outcome: "failed", detail: "AccessDenied: s3:DeleteObject" },
        },
        (p) => p !== path(4),
      ),
    );
    const byPath = new Map<string, RecordWire>();
    for (const r of records) byPath.set(r.path, await record(r.id));
    const now = clock.now().toISOString();
    expect(byPath.get(path(0))).toMatchObject({ status: "DELETED", deleted_at: now, note: null });
    expect(byPath.get(path(1))).toMatchObject({ status: "DELETED", deleted_at: now, note: "already absent" });
    expect(byPath.get(path(2))).toMatchObject({
      status: "RETAINED",
      deleted_at: null,
      note: "referenced by table version 51",
    });
    expect(byPath.get(path(3))).toMatchObject({
      status: "PENDING_DELETE",
      note: "AccessDenied: s3:DeleteObject",
      hard_delete_job_id: jobs[0].id,
    });
    expect(byPath.get(path(4))?.status).toBe("PENDING_DELETE");
    expect(byPath.get(path(4))?.note).toContain("did not report");

    // The next call picks the two that went back, and never the deleted or retained ones.
    const again = await (await hardDelete(`?dry_run=true&table_id=${t.id}`)).json();
    expect(new Set(again.items.map((r: RecordWire) => r.path))).toEqual(new Set([path(3), path(4)]));
    // A retained or deleted file can't be recovered either.
    const refused = await admin("POST", `/api/v1/pending-deletions/${byPath.get(path(2))?.id}/recover`, {
      reason: "x",
    });
    expect(refused.status).toBe(409);
    expect((await refused.json()).detail).toContain("RETAINED");
  });

  it("returns every record of a failed job to PENDING_DELETE with the error, and of a cancelled one too", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, files("failing", 3));
    clock.advance(25 * HOUR_MS);
    const first = (await (await hardDelete(`?table_id=${t.id}`)).json()).jobs[0];
    expect((await record(records[0]?.id)).status).toBe("DELETING");
    await fail(plane, first.id, "the agent's credentials expired");
    for (const r of records)
      expect(await record(r.id)).toMatchObject({
        status: "PENDING_DELETE",
        note: "the agent's credentials expired",
      });

    const second = (await (await hardDelete(`?table_id=${t.id}`)).json()).jobs[0];
    expect((await admin("POST", `/api/v1/jobs/${second.id}/cancel`)).status).toBe(202);
    for (const r of records)
      expect(await record(r.id)).toMatchObject({
        status: "PENDING_DELETE",
        note: "cancelled before it started",
      });
  });

  it("keeps the records DELETING while a failed attempt is retried", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, files("retry", 2));
    clock.advance(25 * HOUR_MS);
    const { jobs } = await (await hardDelete(`?table_id=${t.id}`)).json();
    const job = await lease(plane, jobs[0].id);
    await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "failed", {
      error: "throttled",
      retryable: true,
    });
    expect((await plane.services.jobs.get(job.id))?.status).toBe("queued");
    expect((await record(records[0]?.id)).status).toBe("DELETING");
    expect((await (await hardDelete(`?table_id=${t.id}`)).json()).records).toBe(0);
    const recover = await admin("POST", `/api/v1/pending-deletions/${records[0]?.id}/recover`, {
      reason: "x",
    });
    expect(recover.status).toBe(409);
    expect((await recover.json()).detail).toContain("DELETING");
  });

  it("races a recover of the same record: exactly one of them gets it", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await table();
      const { records } = await vacuumed(plane, t.id, files(`race-${round}`, 1));
      clock.advance(25 * HOUR_MS);
      const [recover, hard] = await Promise.all([
        admin("POST", `/api/v1/pending-deletions/${records[0]?.id}/recover`, { reason: "race" }),
        hardDelete(`?table_id=${t.id}`),
      ]);
      const claimed = (await hard.json()).records;
      const status = (await record(records[0]?.id)).status;
      if (recover.status === 200) {
        expect([claimed, status]).toEqual([0, "RECOVERED"]);
        expect(hard.status).toBe(200);
      } else {
        expect([recover.status, claimed, status]).toEqual([409, 1, "DELETING"]);
      }
    }
  });
});

describe("who may hard-delete", () => {
  it("needs an Editor, or a key with deletions:write; vacuum:write does not do", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const editor = await plane.userWithRole("Editor");
    const call = (token: string) => plane.call("POST", "/api/v1/vacuum/hard-delete?dry_run=true", { token });
    expect((await call(viewer.token)).status).toBe(403);
    expect((await call(editor.token)).status).toBe(200);
    expect((await call((await plane.apiKey(["vacuum:write", "deletions:read"])).key)).status).toBe(403);
    expect((await call((await plane.apiKey(["deletions:write"])).key)).status).toBe(200);
  });
});
