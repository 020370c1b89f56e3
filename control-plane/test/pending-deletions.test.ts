/**
 * `GET /api/v1/pending-deletions` (paging, filters, order), `.../stats`, `.../{deletion_id}` and
 * `POST .../{deletion_id}/recover`: a vacuum record is RECOVERED at once, an expiration record goes
 * through a recover job (RECOVERING, then RECOVERED, or PENDING_DELETE again when the job fails or
 * is cancelled); only PENDING_DELETE records recover, and of two racing recovers exactly one wins.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PENDING_DELETION_STATUSES } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  expired,
  expiredFile,
  fail,
  HOUR_MS,
  lease,
  type RecordWire,
  recoverPayloadOf,
  recoverResult,
  succeed,
  tombstone,
  vacuumed,
} from "./support/deletions.ts";
import { activeTable, adminCall } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-04-01T12:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = () => activeTable(plane, `pending.t${++seq}`);
const get = async (path: string) => {
  const res = await admin("GET", path);
  expect(res.status, path).toBe(200);
  return res.json();
};
const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);
const recover = (id: string | undefined, reason: unknown = "legal hold") =>
  admin("POST", `/api/v1/pending-deletions/${id}/recover`, { reason });
const record = (id: string | undefined): Promise<RecordWire> => get(`/api/v1/pending-deletions/${id}`);

describe("the list", () => {
  // Two tables: a lite vacuum (25 files), a full vacuum (5 files) and an expiration (3 files), one minute apart.
  let a: { id: string };
  let b: { id: string };
  let lite: RecordWire[];
  let full: RecordWire[];
  let expiration: RecordWire[];
  beforeAll(async () => {
    a = await table();
    b = await table();
    clock.advance(60_000);
    lite = (
      await vacuumed(
        plane,
        a.id,
        Array.from({ length: 25 }, (_, i) => tombstone(`lite/${i}.parquet`)),
      )
    ).records;
    clock.advance(60_000);
    full = (
      await vacuumed(
        plane,
        b.id,
        Array.from({ length: 5 }, (_, i) => tombstone(`full/${i}.parquet`)),
        { trigger: { mode: "full" }, result: { mode: "full" } },
      )
    ).records;
    clock.advance(60_000);
    expiration = (
      await expired(
        plane,
        a.id,
        [1, 2, 3].map((n) => expiredFile("2025-12-01", n)),
      )
    ).records;
  });
  const scoped = () => `table_id=${a.id}`;

  it("pages 20 records by default, newest first, and within a job the last reported file first", async () => {
    const page = await get(`/api/v1/pending-deletions?${scoped()}`);
    expect(page).toMatchObject({ total: 28, offset: 0, limit: 20 });
    expect(page.items).toHaveLength(20);
    expect(ids(page).slice(0, 3)).toEqual(ids({ items: expiration }));
    expect(page.items[3].path).toBe("lite/24.parquet");
    expect(page.items[19].path).toBe("lite/8.parquet");
    const rest = await get(`/api/v1/pending-deletions?${scoped()}&offset=20`);
    expect(rest.items.map((r: RecordWire) => r.path)).toEqual(
      Array.from({ length: 8 }, (_, i) => `lite/${7 - i}.parquet`),
    );
  });

  it("takes limits up to 100, and answers an offset past the end with no items", async () => {
    expect((await get(`/api/v1/pending-deletions?${scoped()}&limit=100`)).items).toHaveLength(28);
    expect(await get(`/api/v1/pending-deletions?${scoped()}&offset=28`)).toMatchObject({
      total: 28,
      items: [],
    });
    for (const bad of ["limit=101", "limit=0", "offset=-1", "limit=ten"]) {
      const res = await admin("GET", `/api/v1/pending-deletions?${bad}`);
      expect(res.status, bad).toBe(422);
      expect((await res.json()).errors[0].path).toBe(bad.split("=")[0]);
    }
  });

  it("filters by table, action type, vacuum mode, status and source job, combined", async () => {
    const count = async (query: string) => (await get(`/api/v1/pending-deletions?${query}`)).total;
    expect(await count(`table_id=${b.id}`)).toBe(5);
    expect(await count(`${scoped()}&action_type=vacuum`)).toBe(25);
    expect(await count(`${scoped()}&action_type=partition_expiration`)).toBe(3);
    expect(await count(`${scoped()}&vacuum_mode=lite`)).toBe(25);
    expect(await count(`${scoped()}&vacuum_mode=full`)).toBe(0);
    expect(await count(`table_id=${b.id}&vacuum_mode=full&action_type=vacuum`)).toBe(5);
    expect(await count(`source_job_id=${full[0]?.source_job_id}`)).toBe(5);
    expect(await count(`${scoped()}&status=PENDING_DELETE`)).toBe(28);
    expect(await recover(lite[0]?.id)).toHaveProperty("status", 200);
    const recovered = await get(`/api/v1/pending-deletions?${scoped()}&status=RECOVERED`);
    expect(ids(recovered)).toEqual([lite[0]?.id]);
    expect(await count("table_id=tbl_unknown")).toBe(0);
  });

  it("refuses unknown filter values with 422 naming the filter", async () => {
    for (const bad of ["status=pending", "action_type=compaction", "vacuum_mode=deep"]) {
      const res = await admin("GET", `/api/v1/pending-deletions?${bad}`);
      expect(res.status, bad).toBe(422);
      expect((await res.json()).errors[0].path).toBe(bad.split("=")[0]);
    }
  });
});

describe("one record", () => {
  it("is read by id, and an unknown id is a 404", async () => {
    const { records } = await vacuumed(plane, (await table()).id, [tombstone("one.parquet")]);
    expect(await record(records[0]?.id)).toEqual(records[0]);
    const res = await admin("GET", "/api/v1/pending-deletions/del_missing");
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toContain("del_missing");
  });
});

describe("the stats", () => {
  it("count records and bytes per status, every status present, and what hard-delete would pick now", async () => {
    const t = await table();
    const empty = await get(`/api/v1/pending-deletions/stats?table_id=${t.id}`);
    expect(empty.table_id).toBe(t.id);
    expect(Object.keys(empty.counts).sort()).toEqual([...PENDING_DELETION_STATUSES].sort());
    expect(Object.values(empty.counts)).toEqual(PENDING_DELETION_STATUSES.map(() => 0));
    expect(empty).toMatchObject({ total: 0, eligible_now: 0 });

    const { records } = await vacuumed(plane, t.id, [
      tombstone("s1.parquet", 100),
      tombstone("s2.parquet", 250),
    ]);
    await recover(records[0]?.id);
    const stats = await get(`/api/v1/pending-deletions/stats?table_id=${t.id}`);
    expect(stats).toMatchObject({
      counts: { PENDING_DELETE: 1, RECOVERED: 1, RECOVERING: 0, DELETING: 0, DELETED: 0, RETAINED: 0 },
      total: 2,
      eligible_now: 0,
    });
    const pendingBytes = records[1]?.size_bytes;
    expect(stats.bytes.PENDING_DELETE).toBe(pendingBytes);
    expect(stats.bytes.RECOVERED).toBe(350 - (pendingBytes ?? 0));
    clock.advance(25 * HOUR_MS);
    expect((await get(`/api/v1/pending-deletions/stats?table_id=${t.id}`)).eligible_now).toBe(1);
  });

  it("cover every table without table_id", async () => {
    const all = await get("/api/v1/pending-deletions/stats");
    expect(all.table_id).toBeNull();
    const listed = await get("/api/v1/pending-deletions?limit=1");
    expect(all.total).toBe(listed.total);
  });
});

describe("recovering a vacuum record", () => {
  it("makes it RECOVERED at once (200), with who asked and why", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, [tombstone("r.parquet")]);
    const editor = await plane.userWithRole("Editor");
    const res = await plane.call("POST", `/api/v1/pending-deletions/${records[0]?.id}/recover`, {
      token: editor.token,
      body: { reason: "  needed by the audit  " },
    });
    expect(res.status).toBe(200);
    const now = clock.now().toISOString();
    expect(await res.json()).toMatchObject({
      id: records[0]?.id,
      status: "RECOVERED",
      recoverable: false,
      recover_reason: "needed by the audit",
      recovered_by: editor.id,
      recovered_at: now,
      updated_at: now,
      recover_job_id: null,
    });
    expect((await plane.services.jobs.list({ kinds: ["recover"], tableId: t.id }, 0, 10)).total).toBe(0);
  });

  it("is refused with 409 naming the status once it is RECOVERED", async () => {
    const { records } = await vacuumed(plane, (await table()).id, [tombstone("twice.parquet")]);
    expect((await recover(records[0]?.id)).status).toBe(200);
    const again = await recover(records[0]?.id);
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toContain("is RECOVERED");
  });

  it("lets exactly one of two racing recovers win", async () => {
    for (let round = 0; round < 5; round++) {
      const { records } = await vacuumed(plane, (await table()).id, [tombstone(`race-${round}.parquet`)]);
      const answers = await Promise.all([
        recover(records[0]?.id, "first"),
        recover(records[0]?.id, "second"),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = await answers.find((r) => r.status === 200)?.json();
      expect((await record(records[0]?.id)).recover_reason).toBe(winner.recover_reason);
    }
  });
});

describe("recovering an expiration record", () => {
  it("makes it RECOVERING (202) and queues a recover job with the file, which makes it RECOVERED", async () => {
    const t = await table();
    const file = expiredFile("2025-12-24", 7, 1234);
    const { records } = await expired(plane, t.id, [file]);
    const res = await recover(records[0]?.id, "the partition is still queried");
    expect(res.status).toBe(202);
    const recovering = await res.json();
    expect(recovering).toMatchObject({
      status: "RECOVERING",
      recoverable: false,
      recover_reason: "the partition is still queried",
      recovered_at: null,
      recover_job_id: expect.stringMatching(/^job_/),
    });
    const payload = await recoverPayloadOf(plane, recovering.recover_job_id);
    expect(payload).toEqual({
      table_id: t.id,
      uri: `s3://lake/${t.name}`,
      format: "delta",
      files: [{ ...file, deletion_id: records[0]?.id }],
      folders: [],
    });
    const job = await plane.services.jobs.get(recovering.recover_job_id);
    expect(job).toMatchObject({ kind: "recover", tableId: t.id, requires: ["s3"], status: "queued" });

    // While the job runs, the record can't be recovered again.
    const busy = await recover(records[0]?.id);
    expect(busy.status).toBe(409);
    expect((await busy.json()).detail).toContain(`is RECOVERING`);

    clock.advance(30_000);
    await succeed(plane, recovering.recover_job_id, recoverResult(payload));
    expect(await record(records[0]?.id)).toMatchObject({
      status: "RECOVERED",
      recovered_at: clock.now().toISOString(),
      note: "restored in table version 42",
    });
  });

  it("notes a file that was live in the table already", async () => {
    const { records } = await expired(plane, (await table()).id, [expiredFile("2025-12-25")]);
    const { recover_job_id } = await (await recover(records[0]?.id)).json();
    await succeed(
      plane,
      recover_job_id,
      recoverResult(await recoverPayloadOf(plane, recover_job_id), "already_live"),
    );
    expect(await record(records[0]?.id)).toMatchObject({
      status: "RECOVERED",
      note: "the file was live in the table already",
    });
  });

  it("returns it to PENDING_DELETE with the error when the recover job fails, and a later recover can try again", async () => {
    const { records } = await expired(plane, (await table()).id, [expiredFile("2025-12-26")]);
    const first = await (await recover(records[0]?.id)).json();
    await fail(plane, first.recover_job_id, "the commit conflicted 5 times");
    expect(await record(records[0]?.id)).toMatchObject({
      status: "PENDING_DELETE",
      recoverable: true,
      note: "the commit conflicted 5 times",
      recover_job_id: first.recover_job_id,
    });
    const second = await recover(records[0]?.id);
    expect(second.status).toBe(202);
    const retried = await second.json();
    expect(retried.recover_job_id).not.toBe(first.recover_job_id);
    expect(retried.note).toBeNull();
  });

  it("keeps it RECOVERING while a failed attempt is retried", async () => {
    const { records } = await expired(plane, (await table()).id, [expiredFile("2025-12-28")]);
    const { recover_job_id } = await (await recover(records[0]?.id)).json();
    const job = await lease(plane, recover_job_id);
    await plane.services.jobs.complete("agt_deletions_for_tests", job.id, job.fence, "failed", {
      error: "store timed out",
      retryable: true,
    });
    expect((await plane.services.jobs.get(recover_job_id))?.status).toBe("queued");
    expect((await record(records[0]?.id)).status).toBe("RECOVERING");
  });

  it("returns it to PENDING_DELETE when the recover job is cancelled", async () => {
    const { records } = await expired(plane, (await table()).id, [expiredFile("2025-12-27")]);
    const { recover_job_id } = await (await recover(records[0]?.id)).json();
    expect((await admin("POST", `/api/v1/jobs/${recover_job_id}/cancel`)).status).toBe(202);
    expect(await record(records[0]?.id)).toMatchObject({
      status: "PENDING_DELETE",
      note: "cancelled before it started",
    });
  });

  it("lets exactly one of two racing recovers win, with one recover job", async () => {
    for (let round = 0; round < 5; round++) {
      const t = await table();
      const { records } = await expired(plane, t.id, [expiredFile("2025-11-11", round)]);
      const answers = await Promise.all([recover(records[0]?.id), recover(records[0]?.id)]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 409]);
      const jobs = await plane.services.jobs.list({ kinds: ["recover"], tableId: t.id }, 0, 10);
      expect(jobs.total).toBe(1);
      expect(jobs.items[0]?.id).toBe((await record(records[0]?.id)).recover_job_id);
    }
  });

  it("is refused with 409 when the table was deleted", async () => {
    const t = await table();
    const { records } = await expired(plane, t.id, [expiredFile("2025-10-01")]);
    expect((await admin("DELETE", `/api/v1/tables/${t.id}`)).status).toBe(204);
    const res = await recover(records[0]?.id);
    expect(res.status).toBe(409);
    expect((await res.json()).detail).toContain("was deleted");
    expect((await record(records[0]?.id)).status).toBe("PENDING_DELETE");
  });
});

describe("the recover request", () => {
  let id: string | undefined;
  beforeAll(async () => {
    id = (await vacuumed(plane, (await table()).id, [tombstone("req.parquet")])).records[0]?.id;
  });

  it.each([
    ["no reason", {}],
    ["an empty reason", { reason: "" }],
    ["a blank reason", { reason: "   " }],
    ["a reason over 1000 characters", { reason: "x".repeat(1001) }],
    ["a reason that is not a string", { reason: 42 }],
  ])("refuses %s with 422 naming reason", async (_name, body) => {
    const res = await admin("POST", `/api/v1/pending-deletions/${id}/recover`, body);
    expect(res.status).toBe(422);
    expect((await res.json()).errors.map((e: { path: string }) => e.path)).toEqual(["reason"]);
  });

  it("refuses an unknown field with 422, and an unknown record with 404", async () => {
    expect(
      (await admin("POST", `/api/v1/pending-deletions/${id}/recover`, { reason: "x", force: true })).status,
    ).toBe(422);
    expect((await recover("del_missing")).status).toBe(404);
    expect((await record(id)).status).toBe("PENDING_DELETE");
  });
});

describe("who may read and recover", () => {
  it("lets a Viewer read records and stats but not recover", async () => {
    const { records } = await vacuumed(plane, (await table()).id, [tombstone("viewer.parquet")]);
    const { token } = await plane.userWithRole("Viewer");
    for (const path of [
      "/api/v1/pending-deletions",
      "/api/v1/pending-deletions/stats",
      `/api/v1/pending-deletions/${records[0]?.id}`,
    ])
      expect((await plane.call("GET", path, { token })).status, path).toBe(200);
    const res = await plane.call("POST", `/api/v1/pending-deletions/${records[0]?.id}/recover`, {
      token,
      body: { reason: "mine" },
    });
    expect(res.status).toBe(403);
  });

  it("needs deletions:read to read and deletions:write to recover; vacuum scopes do not do", async () => {
    const { records } = await vacuumed(plane, (await table()).id, [tombstone("keys.parquet")]);
    const path = `/api/v1/pending-deletions/${records[0]?.id}`;
    const key = async (scopes: string[]) => (await plane.apiKey(scopes)).key;
    const [read, write, vacuum] = [
      await key(["deletions:read"]),
      await key(["deletions:write"]),
      await key(["vacuum:write"]),
    ];
    const post = (token: string) => plane.call("POST", `${path}/recover`, { token, body: { reason: "k" } });
    expect((await plane.call("GET", path, { token: read })).status).toBe(200);
    expect((await plane.call("GET", path, { token: vacuum })).status).toBe(403);
    expect((await post(read)).status).toBe(403);
    expect((await post(vacuum)).status).toBe(403);
    expect((await post(write)).status).toBe(200);
  });
});
