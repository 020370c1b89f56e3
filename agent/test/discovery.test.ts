import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DISCOVERY_KIND,
  type DiscoveryAck,
  type DiscoveryPart,
  DiscoveryPayloadSchema,
  type DiscoveryRow,
} from "@lakesmith/shared/discovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoveryHandlers } from "../src/handlers/discovery.ts";
import { JobError } from "../src/registry.ts";
import { FileStore, S3Store, storeFor } from "../src/store/index.ts";
import { type InventoryObject, writeInventoryReport, writeLake } from "./support/inventory.ts";
import { type LocalS3, startS3rver } from "./support/local-s3.ts";
import { jobContext } from "./support/maintenance.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-26T00:00:00Z");
const handler = discoveryHandlers({
  s3_region: "us-east-1",
  s3_endpoint: undefined,
  s3_force_path_style: true,
  memory_limit_mb: 256,
} as never)[0] as NonNullable<ReturnType<typeof discoveryHandlers>[0]>;

const obj = (
  key: string,
  size: number,
  ageDays = 10,
  version?: InventoryObject["version"],
): InventoryObject => ({
  key,
  size,
  lastModified: new Date(NOW - ageDays * DAY),
  ...(version ? { version } : {}),
});

/** A plane that answers every part with `answer(part)` and keeps what it was sent. */
function plane(
  answer: (part: DiscoveryPart, sent: DiscoveryPart[]) => DiscoveryAck = () => ({
    go_on: true,
    skip_bins: [],
  }),
) {
  const sent: DiscoveryPart[] = [];
  return {
    sent,
    part: async (part: Record<string, unknown>) => {
      sent.push(part as DiscoveryPart);
      return answer(part as DiscoveryPart, sent);
    },
    /** Rows merged per prefix, as the plane would. */
    merged(): Map<string, DiscoveryRow> {
      const out = new Map<string, DiscoveryRow>();
      for (const p of sent)
        if (p.type === "rows")
          for (const r of p.rows) {
            const m = out.get(r.prefix);
            out.set(
              r.prefix,
              m
                ? {
                    ...m,
                    files: m.files + r.files,
                    bytes: m.bytes + r.bytes,
                    data_files: m.data_files + r.data_files,
                    data_bytes: m.data_bytes + r.data_bytes,
                    oldest_ms: Math.min(m.oldest_ms ?? Infinity, r.oldest_ms ?? Infinity),
                    newest_ms: Math.max(m.newest_ms ?? 0, r.newest_ms ?? 0),
                  }
                : r,
            );
          }
      return out;
    },
  };
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "discovery-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function run(payload: Record<string, unknown>, answer?: Parameters<typeof plane>[0]) {
  const p = plane(answer);
  const ctx = jobContext(root, DISCOVERY_KIND, DiscoveryPayloadSchema.parse(payload), { part: p.part });
  return { plane: p, result: handler.run(ctx) };
}

const LAKE = [
  obj("landing/events/2026/01/01/a.json", 100),
  obj("landing/events/2026/01/02/b.json.gz", 50, 1),
  obj("landing/logs/dt=2026-01-01/hour=03/x.ndjson", 30),
  obj("landing/logs/dt=2026-01-01/hour=04/_SUCCESS", 0),
  obj("landing/docs/readme.txt", 7),
  obj("landing/tables/orders/_delta_log/00000000000000000000.json", 5),
  obj("landing/tables/orders/part-0.parquet", 500),
  obj("landing/top.json", 3),
  obj("landing/old.json", 1, 0, "noncurrent"),
  obj("landing/events/2026/01/03/gone.json", 0, 0, "delete_marker"),
  obj("elsewhere/z.json", 1000),
];

describe("discovery job", () => {
  it("groups a file:// location's objects into prefixes from the newest complete report, bin by bin", async () => {
    const lake = new FileStore(join(root, "lake1", "lake"));
    await writeLake(lake, LAKE);
    const inventory = new FileStore(join(root, "inv1"));
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: LAKE.slice(0, 2),
      createdAt: new Date(NOW - 2 * DAY),
    });
    const report = await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: LAKE,
      rowsPerFile: 4,
      createdAt: new Date(NOW - DAY),
    });
    // A newer report still being written (no checksum) and a torn one are passed over.
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: LAKE.slice(0, 1),
      createdAt: new Date(NOW - DAY / 2),
      checksum: "wrong",
    });
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: LAKE.slice(0, 1),
      createdAt: new Date(NOW),
      checksum: "missing",
    });
    const { plane: p, result } = run({
      location_id: "loc_1",
      skip_age_days: 2,
      min_prefix_bytes: 0,
      attempt_id: "dsc_1",
      location_uri: `file://${join(root, "lake1", "lake", "landing")}`,
      inventory_uri: `file://${join(root, "inv1", "lake", "daily")}`,
      claimed: [`file://${join(root, "lake1", "lake", "landing", "tables", "orders")}/`],
    });
    const counts = await result;
    expect(counts).toMatchObject({
      report: `file://${join(root, "inv1", report.manifestKey)}`,
      bins_total: 3,
      bins_read: 3,
      objects_scanned: 11,
      files: 8,
      bytes: 695,
      stopped: false,
    });
    expect((counts as { incomplete_reports: string[] }).incomplete_reports).toHaveLength(2);
    const plan = p.sent[0];
    expect(plan).toMatchObject({ type: "plan", bins_total: 3 });
    expect(plan?.type === "plan" && plan.bins.map((b) => b.id)).toEqual(report.binIds);
    expect(p.sent.filter((s) => s.type === "done").map((s) => s.type === "done" && s.bin)).toEqual(
      report.binIds,
    );
    const merged = p.merged();
    expect([...merged.keys()].sort()).toEqual(["", "docs/", "events/", "logs/", "tables/orders/"]);
    expect(merged.get("events/")).toMatchObject({
      files: 2,
      bytes: 150,
      data_files: 2,
      data_bytes: 150,
      oldest_ms: NOW - 10 * DAY,
      newest_ms: NOW - DAY,
    });
    expect(merged.get("logs/")).toMatchObject({ files: 2, bytes: 30, data_files: 1 });
    expect(merged.get("docs/")).toMatchObject({ files: 1, data_files: 0 });
    expect(merged.get("tables/orders/")).toMatchObject({ files: 2, bytes: 505 });
    expect(merged.get("")).toMatchObject({ files: 1, bytes: 3 });
  });

  it("does not count Lakesmith's own objects (a conversion manifest, any _lakesmith* object) as data files", async () => {
    const objects = [
      obj("landing/raw/a.json", 10),
      obj("landing/raw/_lakesmith_manifest.json", 5),
      obj("landing/curated/_lakesmith_manifest.json", 4),
      obj("landing/curated/_lakesmith_state/b.jsonl", 3),
    ];
    const lake = new FileStore(join(root, "lake-own", "lake"));
    await writeLake(lake, objects);
    const inventory = new FileStore(join(root, "inv-own"));
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects,
      createdAt: new Date(NOW - DAY),
    });
    const { plane: p, result } = run({
      location_id: "loc_own",
      skip_age_days: 2,
      min_prefix_bytes: 0,
      attempt_id: "dsc_own",
      location_uri: `file://${join(root, "lake-own", "lake", "landing")}`,
      inventory_uri: `file://${join(root, "inv-own", "lake", "daily")}`,
      claimed: [],
    });
    await result;
    const merged = p.merged();
    expect(merged.get("raw/")).toMatchObject({ files: 2, bytes: 15, data_files: 1, data_bytes: 10 });
    const curated = [...merged.entries()].filter(([prefix]) => prefix.startsWith("curated/"));
    expect(curated.length).toBeGreaterThan(0);
    for (const [, row] of curated) expect(row).toMatchObject({ data_files: 0, data_bytes: 0 });
  });

  it("skips the bins done by an earlier lease, the payload's skipped bins and the ones an ack names; stops when told", async () => {
    const inventory = new FileStore(join(root, "inv2"));
    const objects = Array.from({ length: 10 }, (_, i) => obj(`a/f${i}.json`, 10));
    const report = await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects,
      rowsPerFile: 2,
      createdAt: new Date(NOW),
    });
    const [b0, b1, b2, b3, b4] = report.binIds as [string, string, string, string, string];
    const payload = {
      location_id: "loc_2",
      skip_age_days: 2,
      min_prefix_bytes: 0,
      attempt_id: "dsc_2",
      location_uri: "file:///x/lake",
      inventory_uri: `file://${join(root, "inv2", "lake", "daily")}`,
      done_bins: [b0],
      skip_bins: [b1],
    };
    const skipped = run(payload, (part) => ({
      go_on: true,
      skip_bins: part.type === "start" && part.bin === b3 ? [b3] : [],
    }));
    expect(await skipped.result).toMatchObject({
      bins_read: 2,
      bins_skipped: 2,
      bins_already_done: 1,
      files: 4,
    });
    expect(
      skipped.plane.sent.filter((s) => s.type === "done").map((s) => s.type === "done" && s.bin),
    ).toEqual([b2, b4]);

    const retried = run(payload, (part) => ({
      go_on: true,
      skip_bins: [],
      ...(part.type === "start" && part.bin === b2 ? { read_already: true } : {}),
    }));
    expect(await retried.result).toMatchObject({ bins_read: 2, bins_already_done: 2, files: 4 });
    expect(retried.plane.sent.some((s) => s.type === "rows" && s.bin === b2)).toBe(false);

    const stopped = run(payload, (part) => ({
      go_on: !(part.type === "done" && part.bin === b2),
      skip_bins: [],
    }));
    expect(await stopped.result).toMatchObject({ bins_read: 1, stopped: true, files: 2 });
    expect(stopped.plane.sent.some((s) => s.type === "start" && s.bin === b3)).toBe(false);
  });

  it("fails for good without a complete report, or for a report of another bucket", async () => {
    const inventory = new FileStore(join(root, "inv3"));
    await writeInventoryReport(inventory, {
      sourceBucket: "lake",
      configPrefix: "lake/daily",
      objects: [obj("a.json", 1)],
      createdAt: new Date(NOW),
      checksum: "missing",
    });
    const base = {
      location_id: "l",
      attempt_id: "d",
      location_uri: "file:///x/lake",
      skip_age_days: 2,
      min_prefix_bytes: 0,
    };
    const none = run({ ...base, inventory_uri: `file://${join(root, "inv3", "lake", "daily")}` }).result;
    await expect(none).rejects.toThrow(/no complete S3 Inventory report/);
    await expect(none).rejects.toBeInstanceOf(JobError);
    const named = await writeInventoryReport(inventory, {
      sourceBucket: "other",
      configPrefix: "lake/daily",
      objects: [obj("a.json", 1)],
      createdAt: new Date(NOW + DAY),
    });
    await expect(
      run({ ...base, inventory_uri: `file://${join(root, "inv3", named.manifestKey)}` }).result,
    ).rejects.toThrow(/lists bucket 'other'/);
  });
});

describe("discovery job on S3", () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startS3rver();
  });
  afterAll(() => s3.close());

  it("reads an inventory on the loopback S3 server for an s3:// location", async () => {
    const destination = new S3Store("lake", "", s3.options);
    await writeInventoryReport(destination, {
      sourceBucket: "lake",
      configPrefix: "inventory/lake/daily",
      objects: LAKE,
      rowsPerFile: 5,
      createdAt: new Date(NOW),
    });
    const s3Handler = discoveryHandlers({
      s3_region: "us-east-1",
      s3_endpoint: s3.endpoint,
      s3_force_path_style: true,
      memory_limit_mb: 256,
    } as never)[0];
    process.env.AWS_ACCESS_KEY_ID = "S3RVER";
    process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";
    const p = plane();
    const payload = DiscoveryPayloadSchema.parse({
      location_id: "l",
      attempt_id: "d",
      skip_age_days: 2,
      min_prefix_bytes: 0,
      location_uri: "s3://lake/landing",
      inventory_uri: "s3://lake/inventory/lake/daily",
    });
    expect(s3Handler?.locations(payload)).toEqual(["s3://lake/landing", "s3://lake/inventory/lake/daily"]);
    expect(storeFor("s3://lake/inventory/lake/daily").uri).toBe("s3://lake/inventory/lake/daily/");
    const result = await s3Handler?.run(jobContext(root, DISCOVERY_KIND, payload, { part: p.part }));
    expect(result).toMatchObject({ bins_total: 3, bins_read: 3, files: 8, bytes: 695 });
    expect([...p.merged().keys()].sort()).toEqual([
      "",
      "docs/",
      "events/",
      "logs/",
      "tables/orders/",
      "tables/orders/_delta_log/",
    ]);
  });
});
