/**
 * Scheduled catalog syncs, the scheduler tick's catalog step: a full sync for each active
 * connection once its interval has passed since its latest sync was asked for (or since it was
 * created), never beside an active sync, never for an inactive connection, once however many
 * ticks race; a connection whose sync can't be queued says why and waits an interval.
 */
import { ManualClock } from "@lakesmith/shared";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CatalogSchedule } from "../src/catalog-connections/scheduled.ts";
import { Scheduler } from "../src/scheduler/scheduler.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson, HIVE, succeed, syncResult, WORKSPACE } from "./support/catalogs.ts";

const HOUR = 3_600_000;
const clock = new ManualClock(new Date("2026-08-01T00:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
});
afterAll(() => plane.close());

const BASE = "/api/v1/catalog-connections";
let seq = 0;
const tick = async () => (await plane.services.scheduler.tick()).catalogs.syncs;
const syncJobs = async (connectionId: string) =>
  (await plane.services.jobs.list({ kinds: ["catalog_sync"] }, 0, 1000)).items.filter(
    (j) => j.payload.connection_id === connectionId,
  );

/** Every connection of the suite so far ends its syncs, so each test counts only its own. */
async function settle() {
  for (const job of (await plane.services.jobs.list({ kinds: ["catalog_sync"], status: "queued" }, 0, 1000))
    .items)
    await succeed(plane, job.id, syncResult([]));
}

async function connection(body: Record<string, unknown> = {}, credentials: object = WORKSPACE) {
  const res = await admin("POST", BASE, { name: `sched-${++seq}`, ...credentials, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; next_sync_at: string | null };
}

beforeEach(async () => {
  await settle();
  await plane.services.db.run(sql`update catalog_connections set is_active = 0`);
});

describe("scheduled syncs", () => {
  it("queues a full sync once the interval has passed since the connection was created, then an interval after that", async () => {
    const c = await connection({ sync_interval_hours: 6 });
    expect(c.next_sync_at).toBe(new Date(clock.now().getTime() + 6 * HOUR).toISOString());
    clock.advance(6 * HOUR - 1000);
    expect(await tick()).toBe(0);
    clock.advance(1000);
    expect(await tick()).toBe(1);
    const [job] = await syncJobs(c.id);
    expect(job).toMatchObject({ trigger: "schedule", status: "queued" });
    expect(job?.payload).toMatchObject({ connection_id: c.id, mode: "full" });
    expect(job?.payload).not.toHaveProperty("catalog");
    expect((await admin("GET", `${BASE}/${c.id}`)).body).toMatchObject({
      sync_status: "running",
      last_sync_job_id: job?.id,
      next_sync_at: new Date(clock.now().getTime() + 6 * HOUR).toISOString(),
    });
    expect(await tick()).toBe(0);
    await succeed(plane, job?.id ?? "", syncResult([]));
    clock.advance(6 * HOUR);
    expect(await tick()).toBe(1);
    expect(await syncJobs(c.id)).toHaveLength(2);
  });

  it("counts a manual sync as the latest: the next scheduled one is an interval after it", async () => {
    const c = await connection({ sync_interval_hours: 10 });
    clock.advance(8 * HOUR);
    const manual = (await admin("POST", `${BASE}/${c.id}/sync`)).body.id;
    await succeed(plane, manual, syncResult([]));
    clock.advance(9 * HOUR);
    expect(await tick()).toBe(0);
    clock.advance(HOUR);
    expect(await tick()).toBe(1);
  });

  it("queues nothing beside an active sync, and queues it once that one ended", async () => {
    const c = await connection({ sync_interval_hours: 1 });
    clock.advance(HOUR);
    const manual = (await admin("POST", `${BASE}/${c.id}/sync`)).body.id;
    clock.advance(2 * HOUR);
    expect(await tick()).toBe(0);
    expect(await syncJobs(c.id)).toHaveLength(1);
    await succeed(plane, manual, syncResult([]));
    expect(await tick()).toBe(1);
  });

  it("stops for an inactive connection and resumes when it is active again", async () => {
    const c = await connection({ sync_interval_hours: 2 });
    await admin("PUT", `${BASE}/${c.id}`, { is_active: false });
    clock.advance(5 * HOUR);
    expect(await tick()).toBe(0);
    await admin("PUT", `${BASE}/${c.id}`, { is_active: true });
    expect(await tick()).toBe(1);
  });

  it("follows a changed interval", async () => {
    const c = await connection({ sync_interval_hours: 48 });
    clock.advance(3 * HOUR);
    expect(await tick()).toBe(0);
    const updated = (await admin("PUT", `${BASE}/${c.id}`, { sync_interval_hours: 2 })).body;
    expect(updated.next_sync_at).toBe(new Date(clock.now().getTime() - HOUR).toISOString());
    expect(await tick()).toBe(1);
  });

  it("queues one sync per connection when two schedulers tick at once", async () => {
    const connections = await Promise.all([1, 2, 3].map(() => connection({ sync_interval_hours: 1 })));
    clock.advance(HOUR);
    const { db, jobs, config, catalogJobs, cancel } = plane.services;
    const other = new Scheduler(db, clock, jobs, config, {
      catalogs: new CatalogSchedule(db, catalogJobs, cancel),
    });
    const [a, b] = await Promise.all([plane.services.scheduler.tick(), other.tick()]);
    expect(a.catalogs.syncs + b.catalogs.syncs).toBe(3);
    for (const c of connections) expect(await syncJobs(c.id)).toHaveLength(1);
  });

  it("records why a scheduled sync could not be queued, waits an interval, and still syncs the others", async () => {
    const broken = await connection({ sync_interval_hours: 1 }, HIVE);
    const fine = await connection({ sync_interval_hours: 1 });
    await plane.services.db.run(
      sql`update catalog_connections set secrets = 'enc:v1:00000000:AAAA:BBBB' where id = ${broken.id}`,
    );
    clock.advance(HOUR);
    expect(await tick()).toBe(1);
    expect(await syncJobs(fine.id)).toHaveLength(1);
    const view = (await admin("GET", `${BASE}/${broken.id}`)).body;
    expect(view.sync_status).toBe("failed");
    expect(view.last_sync_error).toContain("the scheduled sync could not be queued");
    expect(view.next_sync_at).toBe(new Date(clock.now().getTime() + HOUR).toISOString());
    expect(await tick()).toBe(0);
  });
});
