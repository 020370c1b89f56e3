/**
 * Discovery through the API with an agent played through the job service (document 1, "Object
 * maintenance"): parts merged per bin, each filter of a discovered prefix, survivors as managed
 * prefixes, a prefix missing after a later run, pause (the ack says stop), skip-bin (the ack names
 * it; its rows left out), resume after the bins done, restart clearing the state, complete from
 * what is aggregated, delete and archive cancelling, the transitions' 409s, the plan and effective
 * configuration, and the scheduler at each cadence on a manual clock.
 */
import { ManualClock } from "@lakesmith/shared";
import type { DiscoveryPart, DiscoveryRow } from "@lakesmith/shared/discovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogTables, type Job } from "../src/db/schema.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson, lease } from "./support/catalogs.ts";

const BASE = "/api/v1/object-maintenance";
const DAY = 86_400_000;
const START = Date.parse("2026-11-26T00:00:00Z");
const AGENT = {
  id: "agt_discovery_for_tests",
  kinds: ["discovery"],
  capabilities: ["s3"],
  allow: ["s3://lake/"],
  endpoints: [],
};

let clock: ManualClock;
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let seq = 0;

beforeAll(async () => {
  clock = new ManualClock(new Date(START));
  plane = await startTestPlane({ clock });
  admin = adminJson(plane);
  // 0.001 MB: 1,049 bytes of data files at least.
  expect((await admin("PUT", "/api/v1/config", { min_discovery_prefix_size_mb: 0.001 })).status).toBe(200);
});
afterAll(() => plane.close());

const row = (prefix: string, extra: Partial<DiscoveryRow> = {}): DiscoveryRow => ({
  prefix,
  files: 2,
  bytes: 4000,
  data_files: 2,
  data_bytes: 4000,
  oldest_ms: START - 30 * DAY,
  newest_ms: START - 10 * DAY,
  ...extra,
});

/** A job of the agent, sending numbered parts and answering each ack. */
class Sender {
  private next = 1;
  constructor(readonly job: Job) {}

  /** Sends the next part, or part `seq` again. */
  async send(part: DiscoveryPart, seq = this.next) {
    this.next = Math.max(this.next, seq + 1);
    const outcome = await plane.services.jobs.part(AGENT.id, {
      job_id: this.job.id,
      fence: this.job.fence,
      seq,
      part: { ...part },
    });
    if (outcome.kind !== "applied") throw new Error(`part ${seq} refused: ${outcome.reason}`);
    return outcome.reply as { go_on: boolean; skip_bins: string[] };
  }

  plan(bins: string[]) {
    return this.send({
      type: "plan",
      report: "s3://lake/inventory/lake/daily/2026-11-25T01-00Z/manifest.json",
      report_created_ms: START - DAY,
      bins_total: bins.length,
      bins: bins.map((id, i) => ({ id, key: `data/${id}.parquet`, size: 100 * (i + 1) })),
    });
  }

  /** Start, rows and done of one bin; the last ack. */
  async bin(id: string, rows: DiscoveryRow[]) {
    await this.send({ type: "start", bin: id });
    await this.send({ type: "rows", bin: id, rows });
    return this.send({
      type: "done",
      bin: id,
      files: rows.reduce((n, r) => n + r.files, 0),
      bytes: rows.reduce((n, r) => n + r.bytes, 0),
      scanned: 10,
    });
  }

  async end(status: "succeeded" | "cancelled", stopped = false) {
    const result = {
      report: "r",
      bins_total: 0,
      bins_read: 0,
      bins_skipped: 0,
      bins_already_done: 0,
      objects_scanned: 0,
      files: 0,
      bytes: 0,
      prefix_rows: 0,
      stopped,
      incomplete_reports: [],
    };
    const done = await plane.services.jobs.complete(AGENT.id, this.job.id, this.job.fence, status, {
      result,
    });
    if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  }
}

async function inventoryLocation(extra: Record<string, unknown> = {}) {
  const n = ++seq;
  const res = await admin("POST", `${BASE}/locations`, {
    name: `inventory-${n}`,
    uri: `s3://lake/landing${n}`,
    discovery_method: "inventory_report",
    inventory_uri: "s3://lake/inventory/lake/daily",
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; uri: string; status: string };
}

const latestAttempt = async (locationId: string) =>
  (await admin("GET", `${BASE}/locations/${locationId}/discovery/schedules`)).body.items[0];
const attempt = async (id: string) => (await admin("GET", `${BASE}/discovery/schedules/${id}`)).body;
const discovered = async (locationId: string, filter = "all") =>
  (await admin("GET", `${BASE}/locations/${locationId}/discovered-prefixes?filter=${filter}`)).body;
const managed = async (locationId: string) =>
  (await admin("GET", `${BASE}/locations/${locationId}/managed-prefixes`)).body.items as {
    uri: string;
    source_state: string;
    files: number;
  }[];

describe("a discovery run", () => {
  it("merges each bin's parts once, judges every prefix by each filter, and manages the survivors; a later run marks what it did not see missing", async () => {
    const table = await admin("POST", "/api/v1/tables", {
      name: "orders-claimed",
      uri: `s3://lake/landing${seq + 1}/tables/orders`,
      format: "delta",
    });
    expect(table.status, table.text).toBe(201);
    const location = await inventoryLocation();
    expect(location.status).toBe("Discovering");
    const first = await latestAttempt(location.id);
    expect(first).toMatchObject({ status: "queued", trigger: "creation", bins_total: null });
    expect((await admin("POST", `${BASE}/locations/${location.id}/discover`)).status).toBe(409);

    const sender = new Sender(await lease(plane, first.job_id, AGENT));
    expect(sender.job.payload).toMatchObject({
      location_uri: location.uri,
      claimed: [`${location.uri}/tables/orders/`],
      skip_age_days: 2,
      min_prefix_bytes: 1049,
      done_bins: [],
    });
    expect(await sender.plan(["b1", "b2", "b3"])).toEqual({ go_on: true, skip_bins: [] });
    expect(await attempt(first.id)).toMatchObject({ status: "running", bins_total: 3 });
    await sender.bin("b1", [row("events/"), row("young/", { newest_ms: START - DAY })]);
    // A bin started again (a retried job's payload predates it) is answered as read already, and stays counted once.
    expect(await sender.send({ type: "start", bin: "b1" })).toEqual({
      go_on: true,
      skip_bins: [],
      read_already: true,
    });
    await sender.send({ type: "start", bin: "b2" });
    const b2 = [
      row("events/", { files: 1, bytes: 1000, data_files: 1, data_bytes: 1000, newest_ms: START - 5 * DAY }),
      row("markers/", { bytes: 0, data_bytes: 0 }),
      row("docs/", { data_files: 0, data_bytes: 0 }),
      row("tiny/", { files: 1, bytes: 100, data_files: 1, data_bytes: 100 }),
      row("tables/orders/", { data_files: 1 }),
    ];
    await sender.send({ type: "rows", bin: "b2", rows: b2 }, 7);
    // The same part again (its ack was lost): answered, not applied twice.
    await sender.send({ type: "rows", bin: "b2", rows: b2 }, 7);
    await sender.send({ type: "done", bin: "b2", files: 7, bytes: 9100, scanned: 10 }, 8);
    await sender.send({ type: "done", bin: "b2", files: 7, bytes: 9100, scanned: 10 }, 8);
    await sender.bin("b3", [row("", { files: 1, bytes: 5000, data_bytes: 5000, data_files: 1 })]);
    expect(await admin("GET", `${BASE}/discovery/schedules/${first.id}/state`)).toMatchObject({
      body: {
        status: "running",
        bins_done: 3,
        bins_total: 3,
        files_seen: 12,
        bytes_seen: 22100,
        objects_scanned: 30,
      },
    });
    clock.advance(60_000);
    await sender.end("succeeded");

    expect(await attempt(first.id)).toMatchObject({ status: "completed" });
    const after = (await admin("GET", `${BASE}/locations/${location.id}`)).body;
    expect(after).toMatchObject({
      status: "Active",
      last_discovered_at: new Date(START + 60_000).toISOString(),
    });
    const all = await discovered(location.id);
    expect(all.schedule_id).toBe(first.id);
    const reasons = Object.fromEntries(
      all.items.map((p: { prefix: string; filter_reason: string | null }) => [p.prefix, p.filter_reason]),
    );
    expect(reasons).toEqual({
      "": null,
      "docs/": "no_data_files",
      "events/": null,
      "markers/": "empty",
      "tables/orders/": "claimed",
      "tiny/": "below_min_size",
      "young/": "too_young",
    });
    const events = all.items.find((p: { prefix: string }) => p.prefix === "events/");
    expect(events).toMatchObject({
      uri: `${location.uri}/events`,
      files: 3,
      bytes: 5000,
      data_files: 3,
      oldest_object_at: new Date(START - 30 * DAY).toISOString(),
      newest_object_at: new Date(START - 5 * DAY).toISOString(),
      filtered: false,
    });
    expect(
      (await discovered(location.id, "too_young")).items.map((p: { prefix: string }) => p.prefix),
    ).toEqual(["young/"]);
    expect((await discovered(location.id, "survivors")).total).toBe(2);
    expect(await managed(location.id)).toMatchObject([
      { uri: location.uri, source_state: "present", files: 1 },
      { uri: `${location.uri}/events`, source_state: "present", files: 3 },
    ]);
    const plan = (await admin("GET", `${BASE}/discovery/schedules/${first.id}/plan`)).body;
    expect(plan).toMatchObject({ bins_total: 3, total_bytes: 600, estimated_wall_ms: 60_000 });
    expect(plan.bins.map((b: { id: string; status: string }) => `${b.id}:${b.status}`)).toEqual([
      "b1:done",
      "b2:done",
      "b3:done",
    ]);

    // A second run no longer sees the location's own files: that prefix is missing, events stays.
    clock.advance(DAY);
    const again = await admin("POST", `${BASE}/locations/${location.id}/discover`);
    expect(again.status, again.text).toBe(202);
    const second = new Sender(await lease(plane, again.body.job_id, AGENT));
    await second.plan(["c1"]);
    await second.bin("c1", [row("events/")]);
    await second.end("succeeded");
    expect(await managed(location.id)).toMatchObject([
      { uri: location.uri, source_state: "missing" },
      { uri: `${location.uri}/events`, source_state: "present", files: 2 },
    ]);
    expect((await discovered(location.id)).items.map((p: { prefix: string }) => p.prefix)).toEqual([
      "events/",
    ]);
  });

  it("pauses (the ack says stop), skips a bin, resumes after the bins done, restarts from scratch and completes with what it has", async () => {
    const location = await inventoryLocation();
    const first = await latestAttempt(location.id);
    const sender = new Sender(await lease(plane, first.job_id, AGENT));
    await sender.plan(["b1", "b2", "b3"]);
    await sender.bin("b1", [row("a/")]);
    const paused = await admin("POST", `${BASE}/discovery/schedules/${first.id}/pause`);
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body.status).toBe("paused");
    expect(await sender.send({ type: "start", bin: "b2" })).toMatchObject({ go_on: false });
    expect((await plane.services.jobs.get(sender.job.id))?.status).toBe("cancelling");
    await sender.end("cancelled");
    expect((await admin("POST", `${BASE}/discovery/schedules/${first.id}/pause`)).status).toBe(409);
    expect((await admin("POST", `${BASE}/locations/${location.id}/discover`)).status).toBe(409);

    expect((await admin("POST", `${BASE}/discovery/schedules/${first.id}/skip-bin/nope`)).status).toBe(404);
    expect((await admin("POST", `${BASE}/discovery/schedules/${first.id}/skip-bin/b1`)).status).toBe(409);
    const skipped = await admin("POST", `${BASE}/discovery/schedules/${first.id}/skip-bin/b2`);
    expect(skipped.status, skipped.text).toBe(200);
    expect(skipped.body).toMatchObject({ status: "paused", bins_skipped: 1 });

    const resumed = await admin("POST", `${BASE}/discovery/schedules/${first.id}/resume`);
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body.status).toBe("queued");
    const next = new Sender(await lease(plane, resumed.body.job_id, AGENT));
    expect(next.job.payload).toMatchObject({
      done_bins: ["b1"],
      skip_bins: ["b2"],
      inventory_uri: "s3://lake/inventory/lake/daily/2026-11-25T01-00Z/manifest.json",
    });
    expect(await next.plan(["b1", "b2", "b3"])).toEqual({ go_on: true, skip_bins: ["b2"] });
    await next.bin("b3", [row("a/", { files: 5 })]);
    await next.end("succeeded");
    expect(await attempt(first.id)).toMatchObject({ status: "completed", bins_done: 2, bins_skipped: 1 });
    expect((await discovered(location.id)).items).toMatchObject([{ prefix: "a/", files: 7 }]);

    const restarted = await admin("POST", `${BASE}/discovery/schedules/${first.id}/restart`);
    expect(restarted.status, restarted.text).toBe(200);
    expect(restarted.body).toMatchObject({
      status: "queued",
      bins_done: 0,
      bins_skipped: 0,
      bins_total: null,
      files_seen: 0,
    });
    expect((await admin("GET", `${BASE}/discovery/schedules/${first.id}/plan`)).body.bins).toEqual([]);
    const fresh = new Sender(await lease(plane, restarted.body.job_id, AGENT));
    expect(fresh.job.payload).toMatchObject({
      done_bins: [],
      skip_bins: [],
      inventory_uri: "s3://lake/inventory/lake/daily",
    });
    await fresh.plan(["b1", "b2", "b3"]);
    await fresh.bin("b1", [row("a/", { files: 1 }), row("b/", { files: 1 })]);
    await fresh.send({ type: "start", bin: "b2" });
    await fresh.send({ type: "rows", bin: "b2", rows: [row("c/")] });
    const completed = await admin("POST", `${BASE}/discovery/schedules/${first.id}/complete`);
    expect(completed.status, completed.text).toBe(200);
    expect(completed.body.status).toBe("completed");
    // Only the bins done count; nothing is marked missing on the word of a partial run.
    expect((await discovered(location.id)).items.map((p: { prefix: string }) => p.prefix)).toEqual([
      "a/",
      "b/",
    ]);
    expect((await managed(location.id)).map((p) => p.source_state)).toEqual(["present", "present"]);
    expect((await plane.services.jobs.get(fresh.job.id))?.status).toBe("cancelling");
    expect((await admin("POST", `${BASE}/discovery/schedules/${first.id}/complete`)).status).toBe(409);
    expect((await admin("POST", `${BASE}/discovery/schedules/${first.id}/resume`)).status).toBe(409);
  });

  it("answers 422 for a use-as-registered location, 409 for an archived one, and cancels the discovery of a location deleted or archived", async () => {
    const registered = await admin("POST", `${BASE}/locations`, {
      name: `plain-${++seq}`,
      uri: "s3://lake/plain",
    });
    expect((await admin("POST", `${BASE}/locations/${registered.body.id}/discover`)).status).toBe(422);
    expect((await admin("POST", `${BASE}/locations/loc_nope/discover`)).status).toBe(404);
    expect((await admin("GET", `${BASE}/discovery/schedules/dsc_nope`)).status).toBe(404);

    const archived = await inventoryLocation();
    const queued = await latestAttempt(archived.id);
    const patch = await admin("PATCH", `${BASE}/locations/${archived.id}`, { status: "Archived" });
    expect(patch.status, patch.text).toBe(200);
    expect(await attempt(queued.id)).toMatchObject({
      status: "cancelled",
      error: "its location was archived",
    });
    expect((await plane.services.jobs.get(queued.job_id))?.status).toBe("cancelled");
    expect((await admin("POST", `${BASE}/locations/${archived.id}/discover`)).status).toBe(409);
    const unarchived = await admin("PATCH", `${BASE}/locations/${archived.id}`, { status: "Active" });
    expect(unarchived.body.status).toBe("Pending");

    const deleted = await inventoryLocation();
    const running = await latestAttempt(deleted.id);
    const sender = new Sender(await lease(plane, running.job_id, AGENT));
    await sender.plan(["b1"]);
    expect((await admin("DELETE", `${BASE}/locations/${deleted.id}`)).status).toBe(204);
    expect((await plane.services.jobs.get(sender.job.id))?.status).toBe("cancelling");
    expect((await admin("GET", `${BASE}/discovery/schedules/${running.id}`)).status).toBe(404);
    expect(await sender.send({ type: "start", bin: "b1" })).toMatchObject({ go_on: false });
  });

  it("counts a live synced catalog table inside the location as claimed, in the spelling its catalog has", async () => {
    const uri = `s3://lake/landing${seq + 1}`;
    const table = (location: string, fullName: string, deletedAt: Date | null) => ({
      connectionId: "con_discovery",
      fullName,
      catalog: "main",
      schema: "raw",
      name: fullName,
      location,
      detail: {},
      syncedAt: clock.now(),
      syncJobId: "job_sync",
      deletedAt,
    });
    await plane.services.db
      .insert(catalogTables)
      .values([
        table(`s3a://lake/landing${seq + 1}/warehouse/clicks`, "main.raw.clicks", null),
        table(`s3a://lake/landing${seq + 1}/warehouse/gone`, "main.raw.gone", clock.now()),
        table("s3a://lake/elsewhere/views", "main.raw.views", null),
      ]);
    const location = await inventoryLocation();
    expect(location.uri).toBe(uri);
    const job = await plane.services.jobs.get((await latestAttempt(location.id)).job_id);
    expect(job?.payload.claimed).toEqual([`${uri}/warehouse/clicks/`]);
  });

  it("shows the effective configuration with each value's layer", async () => {
    const location = await inventoryLocation({ skip_age_days: 5 });
    const first = await latestAttempt(location.id);
    const res = await admin("GET", `${BASE}/discovery/schedules/${first.id}/effective-config`);
    expect(res.status, res.text).toBe(200);
    const values = Object.fromEntries(
      res.body.values.map((v: { name: string; layer: string; value: unknown }) => [v.name, v]),
    );
    expect(values.skip_age_days).toEqual({ name: "skip_age_days", value: 5, layer: "location" });
    expect(values.min_discovery_prefix_size_mb).toEqual({
      name: "min_discovery_prefix_size_mb",
      value: 0.001,
      layer: "platform",
    });
    expect(res.body.prefixes).toEqual([]);
  });
});

describe("scheduled discovery", () => {
  it("queues a discovery at each location's cadence since its latest attempt, never beside an active one", async () => {
    const daily = await inventoryLocation({ run_discovery_immediately: false });
    const weekly = await inventoryLocation({ run_discovery_immediately: false, discovery_cadence: "weekly" });
    const attempts = async (id: string) =>
      (await admin("GET", `${BASE}/locations/${id}/discovery/schedules`)).body.items as {
        status: string;
        trigger: string;
        job_id: string;
      }[];
    const tickAt = async (ms: number) => {
      clock.set(new Date(ms));
      await plane.services.scheduler.tick();
    };
    const created = clock.now().getTime();
    await tickAt(created + DAY - 60_000);
    expect(await attempts(daily.id)).toEqual([]);
    await tickAt(created + DAY);
    expect(await attempts(daily.id)).toMatchObject([{ status: "queued", trigger: "schedule" }]);
    await tickAt(created + 2 * DAY + 1);
    expect(await attempts(daily.id)).toHaveLength(1);
    expect(await attempts(weekly.id)).toEqual([]);

    const [queued] = await attempts(daily.id);
    const sender = new Sender(await lease(plane, queued?.job_id as string, AGENT));
    await sender.plan([]);
    await sender.end("succeeded");
    await tickAt(created + 3 * DAY);
    expect((await attempts(daily.id)).map((a) => a.status)).toEqual(["queued", "completed"]);
    await tickAt(created + 7 * DAY);
    expect(await attempts(weekly.id)).toMatchObject([{ status: "queued", trigger: "schedule" }]);
  });
});
