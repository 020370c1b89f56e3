/**
 * Discovery end to end, through the public API and a `lakesmith-agent` child process reading a
 * generated lake's S3 Inventory report (`agent/test/support/inventory.ts`): on `file://`, each
 * filter of the spec and a prefix missing after a later report; a pause that stops a running
 * discovery, a bin skipped while paused left out, a resume that continues after the bins done (not
 * from scratch) and a restart that reads every bin again; and one run on the loopback S3 server.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStore, S3Store } from "../agent/src/store/index.ts";
import { type InventoryObject, writeInventoryReport } from "../agent/test/support/inventory.ts";
import type { LocalS3 } from "../agent/test/support/local-s3.ts";
import { type LakeSuite, startLakeSuite } from "./support/lake-suite.ts";
import { eventually, type TestPlane } from "./support/plane.ts";

const BASE = "/api/v1/object-maintenance";
const DAY = 86_400_000;
const root = mkdtempSync(join(tmpdir(), "discovery-e2e-"));
let s3: LocalS3;
let plane: TestPlane;
let suite: LakeSuite;

beforeAll(async () => {
  suite = await startLakeSuite(root, "discovery-agent");
  ({ plane, s3 } = suite);
  const setting = await plane.api("PUT", "/api/v1/config", { min_discovery_prefix_size_mb: 0.01 });
  expect(setting.status, JSON.stringify(setting.body)).toBe(200);
}, 60_000);
afterAll(() => suite?.stop());

const at = (ageDays: number) => new Date(Date.now() - ageDays * DAY);
const obj = (key: string, size: number, ageDays = 10): InventoryObject => ({
  key,
  size,
  lastModified: at(ageDays),
});

async function location(body: Record<string, unknown>) {
  const res = await plane.api("POST", `${BASE}/locations`, { discovery_method: "inventory_report", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; uri: string };
}

/** Waits for the location's latest attempt to reach one of `statuses`. */
async function settled(locationId: string, statuses = ["completed", "failed"], timeoutMs = 60_000) {
  return eventually(
    async () => {
      const items = (await plane.api("GET", `${BASE}/locations/${locationId}/discovery/schedules`)).body
        .items;
      return statuses.includes(items[0]?.status) ? items[0] : undefined;
    },
    timeoutMs,
    `a discovery of ${locationId} to be ${statuses.join(" or ")}`,
  );
}

const discovered = async (locationId: string) =>
  Object.fromEntries(
    (await plane.api("GET", `${BASE}/locations/${locationId}/discovered-prefixes?limit=1000`)).body.items.map(
      (p: { prefix: string; filter_reason: string | null; files: number }) => [p.prefix, p],
    ),
  );
const managed = async (locationId: string) =>
  (await plane.api("GET", `${BASE}/locations/${locationId}/managed-prefixes`)).body.items as {
    uri: string;
    source_state: string;
  }[];

describe("discovery end to end", () => {
  it("discovers a file:// lake from its inventory report: every filter, survivors managed, a prefix missing after the next report", async () => {
    const inventory = new FileStore(join(root, "inventory"));
    const lake = `file://${join(root, "lake", "landing")}`;
    const table = await plane.api("POST", "/api/v1/tables", {
      name: "claimed-orders",
      uri: `${lake}/tables/orders`,
      format: "delta",
    });
    expect(table.status, JSON.stringify(table.body)).toBe(201);
    const objects = [
      obj("landing/events/2026/01/01/a.json", 20_000),
      obj("landing/events/2026/01/02/b.json.gz", 20_000),
      obj("landing/young/x.json", 50_000, 0),
      obj("landing/markers/", 0),
      obj("landing/docs/readme.txt", 50_000),
      obj("landing/tiny/t.jsonl", 100),
      obj("landing/tables/orders/_delta_log/00000000000000000000.json", 50_000),
      obj("landing/tables/orders/part-0.parquet", 50_000),
      obj("elsewhere/other.json", 50_000),
    ];
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects,
      rowsPerFile: 3,
      createdAt: at(1),
    });
    const created = await location({
      name: "landing-file",
      uri: lake,
      inventory_uri: `file://${join(root, "inventory", "lake", "daily")}`,
    });
    const first = await settled(created.id);
    expect(first, JSON.stringify(first)).toMatchObject({
      status: "completed",
      bins_total: 3,
      bins_done: 3,
      files_seen: 8,
    });
    const prefixes = await discovered(created.id);
    expect(
      Object.fromEntries(
        Object.entries(prefixes).map(([k, p]) => [k, (p as { filter_reason: string | null }).filter_reason]),
      ),
    ).toEqual({
      "events/": null,
      "young/": "too_young",
      "markers/": "empty",
      "docs/": "no_data_files",
      "tiny/": "below_min_size",
      "tables/orders/": "claimed",
    });
    expect(prefixes["events/"]).toMatchObject({
      files: 2,
      bytes: 40_000,
      data_files: 2,
      uri: `${lake}/events`,
    });
    expect(await managed(created.id)).toMatchObject([{ uri: `${lake}/events`, source_state: "present" }]);
    expect((await plane.api("GET", `${BASE}/locations/${created.id}`)).body.status).toBe("Active");

    // The next report no longer lists events/ but a new prefix: events/ is missing, logs/ managed.
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: [obj("landing/logs/dt=2026-01-01/l.ndjson", 30_000)],
      createdAt: at(0),
    });
    const again = await plane.api("POST", `${BASE}/locations/${created.id}/discover`);
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await settled(created.id);
    expect(await managed(created.id)).toMatchObject([
      { uri: `${lake}/events`, source_state: "missing" },
      { uri: `${lake}/logs`, source_state: "present" },
    ]);
  }, 120_000);

  it("pauses a running discovery, which stops; a skipped bin is left out and the resume continues after the bins done; restart reads all again", async () => {
    const inventory = new FileStore(join(root, "many"));
    const bins = 150;
    const objects = Array.from({ length: bins * 4 }, (_, i) => obj(`big/p/f${i}.json`, 1000));
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects,
      rowsPerFile: 4,
    });
    const created = await location({
      name: "big-file",
      uri: `file://${join(root, "lake", "big")}`,
      inventory_uri: `file://${join(root, "many", "lake", "daily")}`,
    });
    const running = await eventually(
      async () => {
        const items = (await plane.api("GET", `${BASE}/locations/${created.id}/discovery/schedules`)).body
          .items;
        return items[0]?.bins_done >= 1 ? items[0] : undefined;
      },
      60_000,
      "a first bin done",
    );
    const paused = await plane.api("POST", `${BASE}/discovery/schedules/${running.id}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    const stopped = await plane.waitForJob(running.job_id, ["cancelled", "succeeded"], 30_000);
    const atPause = (await plane.api("GET", `${BASE}/discovery/schedules/${running.id}/state`)).body;
    expect(atPause.status).toBe("paused");
    expect(atPause.bins_done).toBeGreaterThanOrEqual(1);
    expect(atPause.bins_done, `the job ended ${stopped.status} with every bin read`).toBeLessThan(bins);
    // Nothing moves while paused.
    await new Promise((r) => setTimeout(r, 300));
    expect((await plane.api("GET", `${BASE}/discovery/schedules/${running.id}/state`)).body.bins_done).toBe(
      atPause.bins_done,
    );

    // A bin not read yet is skipped while paused: the resumed run leaves its objects out.
    const plan = (await plane.api("GET", `${BASE}/discovery/schedules/${running.id}/plan?limit=1000`)).body;
    const pending = plan.bins.find((b: { status: string }) => b.status === "pending");
    const skip = await plane.api("POST", `${BASE}/discovery/schedules/${running.id}/skip-bin/${pending.id}`);
    expect(skip.status, JSON.stringify(skip.body)).toBe(200);

    const resumed = await plane.api("POST", `${BASE}/discovery/schedules/${running.id}/resume`);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const job = await plane.waitForJob(resumed.body.job_id, ["succeeded", "failed"], 60_000);
    expect(job.result).toMatchObject({
      bins_already_done: atPause.bins_done,
      bins_skipped: 1,
      bins_read: bins - atPause.bins_done - 1,
    });
    const done = await settled(created.id);
    expect(done).toMatchObject({
      status: "completed",
      bins_done: bins - 1,
      bins_skipped: 1,
      files_seen: (bins - 1) * 4,
    });
    expect((await discovered(created.id))["p/"]).toMatchObject({ files: (bins - 1) * 4 });

    // Restart clears the state: every bin is read again, the skipped one included.
    const restarted = await plane.api("POST", `${BASE}/discovery/schedules/${running.id}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
    expect(restarted.body).toMatchObject({ status: "queued", bins_done: 0, bins_skipped: 0, files_seen: 0 });
    const again = await plane.waitForJob(restarted.body.job_id, ["succeeded", "failed"], 60_000);
    expect(again.result).toMatchObject({ bins_already_done: 0, bins_skipped: 0, bins_read: bins });
    expect(await settled(created.id)).toMatchObject({
      status: "completed",
      bins_done: bins,
      files_seen: bins * 4,
    });
    expect((await discovered(created.id))["p/"]).toMatchObject({ files: bins * 4, bytes: bins * 4000 });
  }, 120_000);

  it("discovers an s3:// location from an inventory on the loopback S3 server", async () => {
    const destination = new S3Store("lake", "", s3.options);
    await writeInventoryReport(destination, {
      sourceBucket: "lake",
      configPrefix: "inventory/lake/daily",
      objects: [obj("raw/clicks/2026/01/01/a.json", 30_000), obj("raw/clicks/2026/01/02/b.json", 30_000)],
      rowsPerFile: 1,
    });
    const created = await location({
      name: "raw-s3",
      uri: "s3://lake/raw",
      inventory_uri: "s3://lake/inventory/lake/daily",
    });
    const done = await settled(created.id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", bins_done: 2, files_seen: 2 });
    expect(await managed(created.id)).toMatchObject([
      { uri: "s3://lake/raw/clicks", source_state: "present" },
    ]);
  }, 60_000);
});
