/**
 * What the end of a vacuum or a partition expiration records: one PENDING_DELETE record per reported
 * file of a real run (manual or scheduled), none for dry runs, validates, failures or results that
 * are not results; `eligible_at` from the grace setting and the table's retention; a path never
 * pending twice; recovered vacuum paths never recorded again; the stored result trimmed to counts;
 * and 100,000 files in one completion.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { connectedAgent } from "./support/connected-agent.ts";
import {
  AGENT,
  expirationResult,
  expired,
  expiredFile,
  fail,
  HOUR_MS,
  lease,
  orphan,
  recordsOf,
  succeed,
  tombstone,
  vacuumed,
  vacuumResult,
} from "./support/deletions.ts";
import { activeTable, adminCall, RECIPE } from "./support/tables.ts";

const START = new Date("2026-02-01T10:00:00Z");
const clock = new ManualClock(START);
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = () => activeTable(plane, `records.t${++seq}`);
const iso = (ms: number) => new Date(ms).toISOString();
const storedResult = async (jobId: string) =>
  (await plane.services.jobs.get(jobId))?.result as Record<string, unknown>;
const vacuumView = async (tableId: string, jobId: string) => {
  const page = await (await admin("GET", `/api/v1/tables/${tableId}/vacuum`)).json();
  return page.items.find((j: { id: string }) => j.id === jobId);
};
const setGrace = async (hours: number) =>
  expect(
    (
      await plane.call("PUT", "/api/v1/config", {
        token: ADMIN_KEY,
        body: { pending_deletion_grace_hours: hours },
      })
    ).status,
  ).toBe(200);

/** A scheduled job as the scheduler queues it (`ScheduledJobPayload`: no dry_run, no keep). */
async function scheduled(kind: "vacuum" | "partition_expiration", t: { id: string; name: string }) {
  const { job } = await plane.services.jobs.enqueue({
    kind,
    tableId: t.id,
    payload: {
      table_id: t.id,
      uri: `s3://lake/${t.name}`,
      format: "delta",
      schedule_id: "sch_test",
      date_range: { start: "2026-01-01", end: "2026-01-31" },
      slot: "2026-02-01",
      target_file_size_mb: 512,
      recipe: RECIPE,
    },
    trigger: "schedule",
    scheduleId: "sch_test",
  });
  return job.id;
}

describe("a vacuum's records", () => {
  it("are one PENDING_DELETE record per reported file, eligible a grace period (24 h) after the vacuum ended", async () => {
    const t = await table();
    clock.set(START);
    const { id } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, { mode: "full" })).json();
    clock.advance(5 * 60_000);
    await succeed(
      plane,
      id,
      vacuumResult([tombstone("event_date=2025-12-01/a.parquet", 4096), orphan("_tmp/b.parquet", 17)], {
        mode: "full",
      }),
    );
    const finished = START.getTime() + 5 * 60_000;
    const records = await recordsOf(plane, id);
    expect(records).toHaveLength(2);
    const byPath = Object.fromEntries(records.map((r) => [r.path, r]));
    expect(byPath["event_date=2025-12-01/a.parquet"]).toMatchObject({
      table_id: t.id,
      source_job_id: id,
      action_type: "vacuum",
      vacuum_mode: "full",
      reason: "tombstone",
      size_bytes: 4096,
      partition: null,
      status: "PENDING_DELETE",
      recoverable: true,
      created_at: iso(finished),
      updated_at: iso(finished),
      eligible_at: iso(finished + 24 * HOUR_MS),
      recovered_at: null,
      recover_job_id: null,
      hard_delete_job_id: null,
      deleted_at: null,
      note: null,
    });
    expect(byPath["_tmp/b.parquet"]).toMatchObject({ reason: "orphan", size_bytes: 17, vacuum_mode: "full" });
    expect(byPath["_tmp/b.parquet"]?.id).toMatch(/^del_[0-9a-z]{20}$/);
  });

  it("trim the stored result of a real run to its counts, and the job view still shows them", async () => {
    const t = await table();
    const files = [tombstone("t1.parquet"), tombstone("t2.parquet"), orphan("o1.parquet")];
    const { jobId } = await vacuumed(plane, t.id, files);
    const stored = await storedResult(jobId);
    expect(stored).toMatchObject({
      files: [],
      files_count: 3,
      bytes: 2010,
      pending_deletions_recorded: 3,
      files_by_reason: { tombstone: 2, orphan: 1 },
    });
    expect((await vacuumView(t.id, jobId)).summary).toMatchObject({
      files_count: 3,
      tombstones: 2,
      orphans: 1,
      bytes: 2010,
      table_version: 12,
      retention_shortened: false,
      pending_deletions_recorded: 3,
    });
    const job = await (await admin("GET", `/api/v1/jobs/${jobId}`)).json();
    expect(job.result.files).toEqual([]);
  });

  it("of an Iceberg vacuum are expired-snapshot and orphan records, counted apart in the job view", async () => {
    const t = await activeTable(plane, `records.ice${++seq}`, { format: "iceberg" });
    const expiredFile = {
      path: "data/a.parquet",
      size: 900,
      reason: "expired_snapshot" as const,
      removed_at: 1,
    };
    const { jobId, records } = await vacuumed(plane, t.id, [expiredFile, orphan("data/stray.parquet")], {
      trigger: { mode: "full" },
      result: { mode: "full", expired_snapshots: ["4468019210336628573"] },
    });
    expect(records.map((r) => [r.path, r.reason, r.action_type, r.vacuum_mode]).sort()).toEqual([
      ["data/a.parquet", "expired_snapshot", "vacuum", "full"],
      ["data/stray.parquet", "orphan", "vacuum", "full"],
    ]);
    expect((await vacuumView(t.id, jobId)).summary).toMatchObject({
      files_count: 2,
      expired_snapshot_files: 1,
      orphans: 1,
      tombstones: 0,
    });
  });

  it("are not made by a dry run, whose result keeps its files", async () => {
    const t = await table();
    const files = [tombstone("dry.parquet")];
    const { jobId, records } = await vacuumed(plane, t.id, files, {
      trigger: { dry_run: true, retention_hours: 1 },
      result: { dry_run: true, retention_hours: 1, retention_shortened: true },
    });
    expect(records).toEqual([]);
    expect((await storedResult(jobId)).files).toEqual(files);
    expect((await vacuumView(t.id, jobId)).summary).toMatchObject({
      tombstones: 1,
      retention_shortened: true,
      pending_deletions_recorded: null,
    });
  });

  it("are not made by a failed or cancelled vacuum", async () => {
    const t = await table();
    const { id: failed } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {})).json();
    await fail(plane, failed, "access denied");
    const { id: cancelled } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {})).json();
    const leased = await lease(plane, cancelled);
    expect((await admin("POST", `/api/v1/jobs/${cancelled}/cancel`)).status).toBe(202);
    await plane.services.jobs.complete(AGENT.id, leased.id, leased.fence, "cancelled", {
      result: vacuumResult([tombstone("late.parquet")]) as unknown as Record<string, unknown>,
    });
    expect(await recordsOf(plane, failed)).toEqual([]);
    expect(await recordsOf(plane, cancelled)).toEqual([]);
  });

  it("are made by a scheduled vacuum, whose payload has no dry_run", async () => {
    const t = await table();
    const jobId = await scheduled("vacuum", t);
    await succeed(plane, jobId, vacuumResult([tombstone("sched.parquet")]));
    expect((await recordsOf(plane, jobId)).map((r) => [r.path, r.vacuum_mode])).toEqual([
      ["sched.parquet", "lite"],
    ]);
  });

  it("are not made from a result that is not a vacuum result; the job still succeeds and says so", async () => {
    const t = await table();
    const { id } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {})).json();
    const done = await succeed(plane, id, { files: [{ path: "x.parquet" }], mode: "lite" });
    expect(done.status).toBe("succeeded");
    expect(await recordsOf(plane, id)).toEqual([]);
    const view = await vacuumView(t.id, id);
    expect(view.summary).toBeNull();
    expect(view.result_note).toContain("not a vacuum result");
  });

  it("follow the pending_deletion_grace_hours setting (whole hours, 0 or more, 24 by default)", async () => {
    const config = await (await admin("GET", "/api/v1/config")).json();
    expect(config.pending_deletion_grace_hours).toBe(24);
    expect(config.setting_definitions.pending_deletion_grace_hours).toMatchObject({
      default: 24,
      minimum: 0,
      unit: "hours",
    });
    for (const bad of [-1, 1.5, null]) {
      const res = await plane.call("PUT", "/api/v1/config", {
        token: ADMIN_KEY,
        body: { pending_deletion_grace_hours: bad },
      });
      expect(res.status, String(bad)).toBe(422);
    }
    const t = await table();
    await setGrace(0);
    try {
      const now = clock.now().getTime();
      const { records } = await vacuumed(plane, t.id, [tombstone("no-grace.parquet")]);
      expect(records[0]?.eligible_at).toBe(iso(now));
      await setGrace(72);
      const later = await vacuumed(plane, t.id, [tombstone("long-grace.parquet")]);
      expect(later.records[0]?.eligible_at).toBe(iso(now + 72 * HOUR_MS));
    } finally {
      await setGrace(24);
    }
  });

  it("are recorded once when the agent's completion arrives twice", async () => {
    const t = await table();
    const { id } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {})).json();
    const job = await lease(plane, id);
    const result = vacuumResult([
      tombstone("twice-1.parquet"),
      tombstone("twice-2.parquet"),
    ]) as unknown as Record<string, unknown>;
    const first = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "succeeded", { result });
    const second = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "succeeded", { result });
    expect([first.kind, second.kind]).toEqual(["done", "duplicate"]);
    expect(await recordsOf(plane, id)).toHaveLength(2);
    expect((await storedResult(id)).pending_deletions_recorded).toBe(2);
  });
});

describe("a file is never pending twice", () => {
  it("skips a path the table has pending already, and a path named twice in one result", async () => {
    const t = await table();
    const first = await vacuumed(plane, t.id, [tombstone("dup.parquet"), tombstone("dup.parquet")]);
    expect(first.records.map((r) => r.path)).toEqual(["dup.parquet"]);
    const second = await vacuumed(plane, t.id, [tombstone("dup.parquet"), orphan("new.parquet")], {
      trigger: { mode: "full" },
    });
    expect(second.records.map((r) => r.path)).toEqual(["new.parquet"]);
    expect((await storedResult(second.jobId)).pending_deletions_recorded).toBe(1);
    expect((await vacuumView(t.id, second.jobId)).summary).toMatchObject({
      files_count: 2,
      pending_deletions_recorded: 1,
    });
  });

  it("skips a vacuum's proposal of a file an expiration made pending", async () => {
    const t = await table();
    const file = expiredFile("2025-11-02");
    await expired(plane, t.id, [file]);
    const { records } = await vacuumed(plane, t.id, [tombstone(file.path)]);
    expect(records).toEqual([]);
  });

  it("takes the same path again on another table", async () => {
    const [a, b] = [await table(), await table()];
    expect((await vacuumed(plane, a.id, [tombstone("same.parquet")])).records).toHaveLength(1);
    expect((await vacuumed(plane, b.id, [tombstone("same.parquet")])).records).toHaveLength(1);
  });

  it("never records a path of a RECOVERED vacuum record again, even from a scheduled vacuum without a keep list", async () => {
    const t = await table();
    const { records } = await vacuumed(plane, t.id, [tombstone("keep-me.parquet")]);
    expect(
      (await admin("POST", `/api/v1/pending-deletions/${records[0]?.id}/recover`, { reason: "audit" }))
        .status,
    ).toBe(200);
    const jobId = await scheduled("vacuum", t);
    await succeed(plane, jobId, vacuumResult([tombstone("keep-me.parquet"), tombstone("other.parquet")]));
    expect((await recordsOf(plane, jobId)).map((r) => r.path)).toEqual(["other.parquet"]);
  });
});

describe("a partition expiration's records", () => {
  it("carry the partition and the file, eligible once the table's retention has passed since the commit", async () => {
    const t = await table();
    clock.set(new Date("2026-02-01T00:00:00Z"));
    const files = [
      expiredFile("2025-12-01", 0, 700),
      expiredFile("2025-12-01", 1, 800),
      expiredFile("2025-12-02"),
    ];
    const committedAt = Date.parse("2026-01-31T23:00:00Z");
    const { jobId, records } = await expired(plane, t.id, files, {
      result: { committed_at: committedAt, table_retention_hours: 168 },
    });
    expect(records).toHaveLength(3);
    const first = records.find((r) => r.path === files[0]?.path);
    expect(first).toMatchObject({
      action_type: "partition_expiration",
      vacuum_mode: null,
      reason: "expired_partition",
      partition: "event_date=2025-12-01",
      size_bytes: 700,
      status: "PENDING_DELETE",
      created_at: "2026-02-01T00:00:00.000Z",
      // The commit + 7 days is later than the end + 24 hours.
      eligible_at: iso(committedAt + 168 * HOUR_MS),
    });
    const row = await plane.services.pendingDeletions.get(first?.id as string);
    expect(row.file).toEqual(files[0]);
    const stored = await storedResult(jobId);
    expect(stored).toMatchObject({ files: [], files_count: 3, pending_deletions_recorded: 3 });
    const view = (await (await admin("GET", `/api/v1/tables/${t.id}/partition-expiration`)).json()).items[0];
    expect(view.summary).toMatchObject({
      files_count: 3,
      committed_version: 41,
      committed_at: iso(committedAt),
      pending_deletions_recorded: 3,
    });
    expect(view.summary.partitions).toHaveLength(2);
  });

  it("are eligible a grace period after the job ended when the table's retention is shorter", async () => {
    const t = await table();
    const now = clock.now().getTime();
    const { records } = await expired(plane, t.id, [expiredFile("2025-10-10")], {
      result: { committed_at: now - 60_000, table_retention_hours: 0 },
    });
    expect(records[0]?.eligible_at).toBe(iso(now + 24 * HOUR_MS));
  });

  it("are not made by a dry run, a validate, or a run that committed nothing", async () => {
    const t = await table();
    const files = [expiredFile("2025-09-01")];
    const none = { committed_version: null, committed_at: null };
    const dry = await expired(plane, t.id, files, {
      trigger: { dry_run: true },
      result: { dry_run: true, ...none },
    });
    expect(dry.records).toEqual([]);
    expect((await storedResult(dry.jobId)).files).toHaveLength(1);
    await connectedAgent(plane); // a validate is queued only while an agent that may run it is connected
    const { id: validateId } = await (
      await admin("POST", `/api/v1/tables/${t.id}/partition-expiration/validate`, {})
    ).json();
    await succeed(plane, validateId, expirationResult(files, { validate: true, dry_run: true, ...none }));
    expect(await recordsOf(plane, validateId)).toEqual([]);
    const nothing = await expired(plane, t.id, files, { result: none });
    expect(nothing.records).toEqual([]);
  });

  it("are made by a scheduled expiration", async () => {
    const t = await table();
    const jobId = await scheduled("partition_expiration", t);
    await succeed(plane, jobId, expirationResult([expiredFile("2025-08-08")]));
    expect((await recordsOf(plane, jobId)).map((r) => r.partition)).toEqual(["event_date=2025-08-08"]);
  });
});

describe("a vacuum of 100,000 files", () => {
  it("is recorded in the completion's own batch, one record per file", async () => {
    const t = await table();
    const files = Array.from({ length: 100_000 }, (_, i) =>
      tombstone(
        `event_date=2025-10-${String(1 + (i % 28)).padStart(2, "0")}/part-${i}-c000.snappy.parquet`,
        i,
      ),
    );
    const { id } = await (await admin("POST", `/api/v1/tables/${t.id}/vacuum`, {})).json();
    const started = performance.now();
    await succeed(plane, id, vacuumResult(files));
    const ms = performance.now() - started;
    // About 2 s on a laptop-class core; the bound only catches a per-file statement or a quadratic plan.
    expect(ms).toBeLessThan(30_000);
    const stats = await (await admin("GET", `/api/v1/pending-deletions/stats?table_id=${t.id}`)).json();
    expect(stats.counts.PENDING_DELETE).toBe(100_000);
    expect(stats.bytes.PENDING_DELETE).toBe((99_999 * 100_000) / 2);
    const page = await (
      await admin("GET", `/api/v1/pending-deletions?source_job_id=${id}&offset=99990&limit=100`)
    ).json();
    expect(page.total).toBe(100_000);
    // Newest first, and within one job the last reported file first: the page's end is the first file.
    expect(page.items.at(-1).path).toBe(files[0]?.path);
    expect(await storedResult(id)).toMatchObject({ files: [], pending_deletions_recorded: 100_000 });
  }, 120_000);
});
