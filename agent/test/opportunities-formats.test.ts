/**
 * Opportunity scans of Iceberg tables (metadata files on `file://`) and Hive tables (read through a
 * loopback metastore, a real Thrift server): each format's snapshot is measured by the same sample
 * rewrite, and neither the table's files nor its metastore entry change.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OpportunityScanPayload, OpportunityScanPayloadSchema } from "@lakesmith/shared/opportunities";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOpportunityScan } from "../src/opportunities/run.ts";
import { FileStore } from "../src/store/index.ts";
import { HiveMetastoreServer } from "./support/hive-metastore.ts";
import { HIVE_COLUMNS, writeHiveTable } from "./support/hive-tables.ts";
import { writeIcebergTable } from "./support/iceberg-tables.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "opportunities-formats-"));
let metastore: HiveMetastoreServer;
beforeAll(async () => {
  metastore = await HiveMetastoreServer.start();
  metastore.addDatabase("lake");
});
afterAll(async () => {
  await metastore?.stop();
  rmSync(root, { recursive: true, force: true });
});

const listing = (path: string) => readdirSync(path, { recursive: true, encoding: "utf8" }).sort();

function scan(dir: string, payload: Partial<OpportunityScanPayload>) {
  const parsed = OpportunityScanPayloadSchema.parse({
    table_id: "tbl_test",
    uri: `file://${dir}`,
    ...payload,
  });
  return runOpportunityScan(jobContext(root, "opportunity_scan", parsed), {
    store: new FileStore(dir),
    memoryLimitMb: 256,
  });
}

describe("opportunity scans of other formats", () => {
  it("measures an Iceberg table's current snapshot, files under the target size and unsorted cluster columns", async () => {
    const dir = join(root, "iceberg");
    await writeIcebergTable({
      dir,
      columns: [
        { name: "id", type: "long", sql: "i" },
        { name: "grp", type: "int", sql: "(i * 7919) % 50" },
        { name: "name", type: "string", sql: "'customer-' || (i % 97)" },
        { name: "ts", type: "timestamptz", sql: "timestamptz '2026-01-01 00:00:00+00' + to_hours(i % 72)" },
      ],
      partition: [{ source: "ts", transform: "day" }],
      rows: 30_000,
      files: 24,
      commits: 2,
    });
    const untouched = listing(dir);
    // The table's newest metadata file is the version measured (vN.metadata.json).
    const version = Math.max(...untouched.map((f) => Number(/v(\d+)\.metadata\.json$/.exec(f)?.[1] ?? -1)));
    expect(version).toBeGreaterThan(0);
    const result = await scan(dir, {
      format: "iceberg",
      target_file_size_mb: 1,
      cluster_columns: ["grp"],
      sample_max_files: 6,
    });
    expect(listing(dir)).toEqual(untouched);
    expect(result).toMatchObject({ table_version: version, files: 24, small_files: 24, small_file_share: 1 });
    expect(result.sample.files).toBe(6);
    expect(result.sample.rows).toBeGreaterThan(0);
    expect(result.potential_drr_percent).not.toBeNull();
    expect(result.ordering).toMatchObject({
      columns: ["grp"],
      source: "payload",
      files_checked: 6,
      files_sorted: 0,
    });
    expect(result.missing_ordering).toBe(true);
  });

  it("measures a Hive table read through its metastore, and leaves the metastore as it was", async () => {
    const dir = join(root, "hive");
    const written = await writeHiveTable(dir, {
      partitions: ["2026-01-01", "2026-01-02"],
      filesPerPartition: 5,
    });
    metastore.registerParquetTable(
      { db: "lake", name: "events", location: `file://${dir}`, ...written.spec },
      written.partitions,
    );
    const locations = () =>
      [...(metastore.tables.get("lake.events")?.partitions.values() ?? [])]
        .map((p) => JSON.stringify(p))
        .sort();
    const before = locations();
    const untouched = listing(dir);
    const result = await scan(dir, {
      format: "hive",
      catalog: { type: "hive_metastore", uri: metastore.uri, database: "lake", table: "events" },
      target_file_size_mb: 1,
    });
    expect(listing(dir)).toEqual(untouched);
    expect(locations()).toEqual(before);
    expect(result).toMatchObject({ files: 10, small_files: 10, crunch_candidates: 10 });
    expect(result.sample.files).toBe(10);
    expect(result.sample.rows).toBe(10 * 200);
    expect(result.potential_drr_percent).not.toBeNull();
    expect(result.missing_ordering).toBe(false);
  });

  it("samples nothing of a table a crunch would refuse to rewrite, and says why", async () => {
    const dir = join(root, "stamped");
    const written = await writeHiveTable(dir, { partitions: ["2026-01-01"] });
    metastore.registerParquetTable(
      {
        db: "lake",
        name: "stamped",
        location: `file://${dir}`,
        ...written.spec,
        columns: [...HIVE_COLUMNS, { name: "seen", type: "struct<at:timestamp>" }],
      },
      written.partitions,
    );
    const result = await scan(dir, {
      format: "hive",
      catalog: { type: "hive_metastore", uri: metastore.uri, database: "lake", table: "stamped" },
      target_file_size_mb: 1,
    });
    expect(result.potential_drr_percent).toBeNull();
    expect(result.sample.files).toBe(0);
    expect(result.method).toBe("nothing sampled: a crunch would refuse to rewrite this table");
    expect(result.notes.join(" ")).toMatch(/^a crunch would refuse this table: .*timestamp column seen/);
  });
});
