/**
 * Deleting data end to end, through the public API and a `lakesmith-agent` child process: a real
 * Node control plane, real WebSockets, real Delta tables on `file://`, DuckDB reading the rows.
 *
 * 1. Partition expiration: validate (answered in the request, 200), dry run and the real run name
 *    the same files; the real run only commits removes (the files stay), each file becomes a
 *    PENDING_DELETE record, and recovering a record puts its rows back with a new commit.
 * 2. Vacuum and hard-delete: after a crunch, a full vacuum with an explicit zero retention records
 *    the replaced files and an old orphan; a concurrent writer re-adds one of them before the
 *    hard-delete, which keeps that file (RETAINED) and deletes the others.
 */
import { existsSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadSnapshot } from "../agent/src/delta/index.ts";
import { Engine } from "../agent/src/engine/index.ts";
import { storeFor } from "../agent/src/store/index.ts";
import type { ChildAgent } from "./support/agents.ts";
import { latestVersion, writeEventsTable } from "./support/delta-tables.ts";
import { connectedChildAgent, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-e2e-"));
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

const childAgent = (p: TestPlane, name: string) =>
  connectedChildAgent(
    p,
    name,
    {
      LAKESMITH_AGENT_CONCURRENCY: "1",
      LAKESMITH_AGENT_ALLOW: `file://${root}`,
      LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
    },
    children,
  );

/** Registers the table and waits for its onboarding to succeed; returns the table. */
async function onboard(p: TestPlane, name: string, uri: string) {
  const { table, job } = await onboardTable(p, name, uri);
  expect(job.status, job.error ?? "").toBe("succeeded");
  return table;
}

/** Posts a trigger that answers 202 with a job, and waits for the job to end. */
async function run(p: TestPlane, path: string, body: Record<string, unknown> = {}) {
  const res = await p.api("POST", path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const id: string = res.body.recover_job_id ?? res.body.id;
  const done = await p.waitForJob(id, ["succeeded", "failed", "cancelled"], 90_000);
  expect(done.status, done.error ?? "").toBe("succeeded");
  return { response: res.body, job: done };
}

/** The table's live rows, read by DuckDB from its live files, and the snapshot they come from. */
async function liveRows(path: string) {
  const engine = await Engine.open();
  try {
    const scratch = mkdtempSync(join(root, "read-"));
    const snapshot = await loadSnapshot(storeFor(`file://${path}`), engine, { scratchDir: scratch });
    for (const f of snapshot.files) expect(existsSync(join(path, f.path)), f.path).toBe(true);
    const list = snapshot.files.map((f) => `'${join(path, f.path)}'`).join(", ");
    const [row] = await engine.query<{ n: bigint }>(`select count(*) as n from read_parquet([${list}])`);
    return { rows: Number(row?.n ?? 0), snapshot };
  } finally {
    engine.close();
  }
}

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

// biome-ignore lint/suspicious/noExplicitAny: JSON of the records endpoint
type Record_ = any;

async function records(p: TestPlane, query: string): Promise<Record_[]> {
  const all: Record_[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await p.api("GET", `/api/v1/pending-deletions?${query}&offset=${offset}&limit=100`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    all.push(...res.body.items);
    if (res.body.items.length < 100) return all;
  }
}

describe("onboarding end to end", () => {
  it("fails at once, on the first attempt, with the reason when the table's folder has no Delta log", async () => {
    plane = await startPlane();
    await childAgent(plane, "onboarding-agent");
    const path = join(root, "parquet-without-log");
    await mkdir(join(path, "event_date=2026-01-01"), { recursive: true });
    writeFileSync(join(path, "event_date=2026-01-01", "part-0.parquet"), "not a Delta table");
    const { table, job } = await onboardTable(plane, "shop.not_delta", `file://${path}`);
    expect(job).toMatchObject({ status: "failed", attempt: 1 });
    expect(job.error).toContain(`file://${path} is not a Delta table`);
    const status = (await plane.api("GET", `/api/v1/onboarding/${table.id}/status`)).body;
    expect(status).toMatchObject({ status: "failed", attempt: 1, max_attempts: 3, next_attempt_at: null });
    expect(status.error).toContain("no Delta log");
  });
});

describe("partition expiration end to end", () => {
  it("validates, dry-runs and expires the same files, records them, and a recover brings the rows back", async () => {
    plane = await startPlane();
    await childAgent(plane, "expiring-agent");
    const path = join(root, "events-expire");
    // Ten days, the first five older than the 30 days kept.
    await writeEventsTable(path, { days: 10, filesPerDay: 3, rowsPerFile: 500, startDate: daysAgo(35) });
    const table = await onboard(plane, "shop.expire", `file://${path}`);
    const before = await liveRows(path);
    expect(before.rows).toBe(15_000);

    const base = `/api/v1/tables/${table.id}/partition-expiration`;
    // The agent answers within the request's wait: 200 with the answer, the files in the job's result.
    const validate = await plane.api("POST", `${base}/validate`, {
      partition_column: "event_date",
      retention_days: 30,
    });
    expect(validate.status, JSON.stringify(validate.body)).toBe(200);
    expect(validate.body).toMatchObject({ status: "succeeded", summary: { can_run: true, files_count: 15 } });
    const preview = (await plane.job(validate.body.id)).result as Record_;
    expect(preview).toMatchObject({ can_run: true, files_count: 15, cutoff_date: daysAgo(30) });
    expect(preview.partitions.map((x: Record_) => x.value)).toEqual([35, 34, 33, 32, 31].map(daysAgo));

    const dry = (
      await run(plane, base, { partition_column: "event_date", retention_days: 30, dry_run: true })
    ).job.result as Record_;
    expect(await latestVersion(path)).toBe(0);
    expect((await records(plane, `table_id=${table.id}`)).length).toBe(0);

    const real = (await run(plane, base, { partition_column: "event_date", retention_days: 30 })).job;
    const expected = dry.files.map((f: Record_) => f.path).sort();
    expect(preview.files.map((f: Record_) => f.path).sort()).toEqual(expected);
    const pending = await records(plane, `table_id=${table.id}&action_type=partition_expiration`);
    expect(pending.map((r) => r.path).sort()).toEqual(expected);
    expect(pending.every((r) => r.status === "PENDING_DELETE")).toBe(true);
    // Delete-only: the files are still there, but the table no longer reads them.
    for (const file of expected) expect(existsSync(join(path, file))).toBe(true);
    const expired = await liveRows(path);
    expect(expired.rows).toBe(7_500);
    expect(expired.snapshot.version).toBe(1);
    expect((await plane.api("GET", base)).body.items.map((j: Record_) => j.id)).toContain(real.id);

    // Recover one file: it is back in the table, with its rows.
    const [first] = pending;
    const recovered = await run(plane, `/api/v1/pending-deletions/${first.id}/recover`, {
      reason: "audit hold",
    });
    expect(recovered.response.status).toBe("RECOVERING");
    const record = (await plane.api("GET", `/api/v1/pending-deletions/${first.id}`)).body;
    expect(record).toMatchObject({ status: "RECOVERED", recover_reason: "audit hold" });
    const back = await liveRows(path);
    expect(back.rows).toBe(8_000);
    expect(back.snapshot.files.map((f) => f.path)).toContain(first.path);
    // A second recover of the same record is refused with its status.
    const again = await plane.api("POST", `/api/v1/pending-deletions/${first.id}/recover`, {
      reason: "twice",
    });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain("RECOVERED");

    const stats = (await plane.api("GET", `/api/v1/pending-deletions/stats?table_id=${table.id}`)).body;
    expect(JSON.stringify(stats)).toContain("RECOVERED");
  });
});

describe("vacuum and hard-delete end to end", () => {
  it("records replaced files and an old orphan; hard-delete keeps the one a writer re-added", async () => {
    plane = await startPlane();
    await childAgent(plane, "vacuuming-agent");
    // No grace period: records are eligible for hard-delete as soon as they are made.
    const config = await plane.api("PUT", "/api/v1/config", { pending_deletion_grace_hours: 0 });
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const path = join(root, "events-vacuum");
    await writeEventsTable(path, { days: 2, filesPerDay: 6, rowsPerFile: 500, startDate: daysAgo(3) });
    // An orphan from a writer that died years ago, and a fresh one (an upload in flight) that must stay.
    await mkdir(join(path, `event_date=${daysAgo(3)}`), { recursive: true });
    const oldOrphan = `event_date=${daysAgo(3)}/part-orphan-old.parquet`;
    const youngOrphan = `event_date=${daysAgo(3)}/part-orphan-young.parquet`;
    writeFileSync(join(path, oldOrphan), "not referenced");
    writeFileSync(join(path, youngOrphan), "not referenced");
    utimesSync(join(path, oldOrphan), new Date("2024-01-01"), new Date("2024-01-01"));
    const table = await onboard(plane, "shop.vacuum", `file://${path}`);
    const original = (await liveRows(path)).snapshot.files.map((f) => f.path);

    // The whole table in one job (a range would be one job per day).
    await run(plane, `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
    const crunched = await liveRows(path);
    expect(crunched.rows).toBe(6_000);

    // Explicit zero retention: the replaced files are candidates at once, and the job records it.
    const vacuumBody = { mode: "full", retention_hours: 0 };
    const dry = (await run(plane, `/api/v1/tables/${table.id}/vacuum`, { ...vacuumBody, dry_run: true })).job
      .result as Record_;
    expect(dry.retention_shortened).toBe(true);
    const planned = dry.files.map((f: Record_) => f.path).sort();
    expect(planned).toEqual([...original, oldOrphan].sort());
    expect((await records(plane, `table_id=${table.id}`)).length).toBe(0);

    await run(plane, `/api/v1/tables/${table.id}/vacuum`, vacuumBody);
    const pending = await records(plane, `table_id=${table.id}&action_type=vacuum&vacuum_mode=full`);
    expect(pending.map((r) => r.path).sort()).toEqual(planned);
    for (const file of planned) expect(existsSync(join(path, file))).toBe(true);

    // A writer adds one of the replaced files back before the hard-delete.
    const readded = original[0] as string;
    const version = (await latestVersion(path)) + 1;
    writeFileSync(
      join(path, "_delta_log", `${String(version).padStart(20, "0")}.json`),
      `${JSON.stringify({ commitInfo: { timestamp: Date.now(), operation: "WRITE" } })}\n${JSON.stringify({
        add: {
          path: readded,
          partitionValues: { event_date: readded.slice("event_date=".length, "event_date=".length + 10) },
          size: 1,
          modificationTime: Date.now(),
          dataChange: true,
        },
      })}\n`,
    );

    const preview = await plane.api("POST", `/api/v1/vacuum/hard-delete?dry_run=true&table_id=${table.id}`);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const hard = await plane.api("POST", `/api/v1/vacuum/hard-delete?table_id=${table.id}`);
    expect(hard.status, JSON.stringify(hard.body)).toBe(202);
    for (const job of hard.body.jobs) {
      const done = await plane.waitForJob(job.id, ["succeeded", "failed"], 60_000);
      expect(done.status, done.error ?? "").toBe("succeeded");
    }
    const after = await records(plane, `table_id=${table.id}`);
    const byPath = new Map(after.map((r) => [r.path, r]));
    expect(byPath.get(readded)?.status).toBe("RETAINED");
    expect(existsSync(join(path, readded))).toBe(true);
    for (const file of planned.filter((f: string) => f !== readded)) {
      expect(byPath.get(file)?.status, file).toBe("DELETED");
      expect(existsSync(join(path, file)), file).toBe(false);
    }
    expect(existsSync(join(path, youngOrphan))).toBe(true);
    const final = await liveRows(path);
    expect(final.snapshot.files.map((f) => f.path)).toContain(readded);
  });
});
