/**
 * Opportunity scans run by the handler itself (no control plane) on a generated Delta table of many
 * small snappy files with real DuckDB: the sample's rewrite finds potential DRR, every file is small,
 * and the recipe's cluster columns are missing; after a crunch of the table the figures change.
 * The scan never writes to the table.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { type OpportunityScanPayload, OpportunityScanPayloadSchema } from "@lakesmith/shared/opportunities";
import { afterAll, describe, expect, it } from "vitest";
import { appendCommit, latestVersion, writeEventsTable } from "../../test/support/delta-tables.ts";
import { runCrunch } from "../src/crunch/run.ts";
import { Engine, sqlString } from "../src/engine/index.ts";
import { isSortedBy, orderedByTag } from "../src/opportunities/ordering.ts";
import { runOpportunityScan } from "../src/opportunities/run.ts";
import { pickSample } from "../src/opportunities/sample.ts";
import { smallFiles } from "../src/opportunities/small-files.ts";
import { FileStore } from "../src/store/index.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "opportunities-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const recipe = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: ["customer_id"],
  enumerated_columns: ["country", "status"],
};

function scanPayload(path: string, extra: Partial<OpportunityScanPayload> = {}): OpportunityScanPayload {
  return OpportunityScanPayloadSchema.parse({
    table_id: "tbl_test",
    uri: `file://${path}`,
    format: "delta",
    target_file_size_mb: 1,
    recipe,
    ...extra,
  });
}

async function scan(path: string, extra: Partial<OpportunityScanPayload> = {}) {
  const ctx = jobContext(root, "opportunity_scan", scanPayload(path, extra));
  return runOpportunityScan(ctx, { store: new FileStore(path), memoryLimitMb: 512 });
}

/** Every file under the table's folder, log included: what a scan must leave as it was. */
function listing(path: string): string[] {
  return readdirSync(path, { recursive: true, encoding: "utf8" }).sort();
}

describe("opportunity scan", () => {
  it("measures potential DRR, small files and missing ordering, and the figures change after a crunch", async () => {
    const path = join(root, "events");
    await writeEventsTable(path, { days: 2, filesPerDay: 24, rowsPerFile: 12_000 });
    const untouched = listing(path);

    const before = await scan(path);
    expect(listing(path)).toEqual(untouched);
    expect(before.table_version).toBe(0);
    expect(before.files).toBe(48);
    expect(before.small_files).toBe(48);
    expect(before.small_file_share).toBe(1);
    expect(before.crunch_candidates).toBe(48);
    expect(before.sample.files).toBe(16);
    expect(before.sample.rows).toBe(16 * 12_000);
    expect(before.potential_drr_percent).toBeGreaterThan(0);
    expect(before.sample.bytes_after).toBeLessThan(before.sample.bytes);
    expect(before.method).toMatch(/^rewrite of 16 sampled files \/ \d+ bytes with the crunch settings tuner/);
    expect(before.ordering).toMatchObject({
      columns: ["customer_id"],
      source: "recipe",
      files_checked: 16,
      files_sorted: 0,
    });
    expect(before.missing_ordering).toBe(true);
    expect(before.suggested_columns).toEqual(["customer_id"]);

    const crunch = jobContext<CrunchPayload>(root, "crunch", {
      table_id: "tbl_test",
      uri: `file://${path}`,
      format: "delta",
      target_file_size_mb: 1,
      recipe,
    });
    const crunched = await runCrunch("crunch", crunch, { store: new FileStore(path), memoryLimitMb: 512 });
    expect(crunched.committed_version).toBe(1);

    const after = await scan(path);
    expect(after.table_version).toBe(await latestVersion(path));
    expect(after.files).toBeLessThan(before.files);
    expect(after.small_file_share).toBeLessThan(before.small_file_share);
    expect(after.crunch_candidates).toBeLessThan(before.crunch_candidates);
    // A crunch would rewrite nothing now, so it would gain nothing; the order is checked on the live files.
    expect(after.crunch_candidates).toBe(0);
    expect(after.potential_drr_percent).toBe(0);
    expect(after.ordering.files_checked).toBe(after.files);
    expect(after.ordering.files_sorted).toBe(after.files);
    expect(after.missing_ordering).toBe(false);
    expect(after.suggested_columns).toEqual([]);

    // Another writer appends a small unsorted file: the next scan sees it.
    const appended = await appendCommit(path, { day: "2026-01-02", rows: 3_000, fileIndex: 99 });
    const later = await scan(path);
    expect(later.table_version).toBe(appended);
    expect(later.files).toBe(after.files + 1);
    expect(later.crunch_candidates).toBe(1);
    expect(later.sample).toMatchObject({ files: 1, rows: 3_000 });
    // Rewritten alone, as the crunch would (nothing else in its partition is a candidate); a file
    // this small may well grow (-9% measured), and the figure says so.
    expect(later.potential_drr_percent).not.toBeNull();
    expect(later.missing_ordering).toBe(true);
  });

  it("reports no ordering as missing when the recipe names no cluster columns", async () => {
    const path = join(root, "plain");
    await writeEventsTable(path, { days: 1, filesPerDay: 4, rowsPerFile: 2_000 });
    const result = await scan(path, { recipe: { ...recipe, cluster_columns: [] } });
    expect(result.ordering).toMatchObject({ columns: [], source: "none" });
    expect(result.missing_ordering).toBe(false);
    expect(result.suggested_columns).toEqual([]);
    expect(result.potential_drr_percent).not.toBeNull();
  });

  it("reads a file as sorted only when no row is below the one before it, NULLs last, over every column", async () => {
    const engine = await Engine.open();
    try {
      const file = async (name: string, rows: string) => {
        const path = join(root, `${name}.parquet`);
        await engine.run(
          `copy (select * from (values ${rows}) t(a, b)) to ${sqlString(path)} (format parquet, row_group_size 2)`,
        );
        return path;
      };
      const sorted = await file("sorted", "(1, 'x'), (1, 'y'), (2, 'a'), (null, 'b'), (null, 'c')");
      expect(await isSortedBy(engine, sorted, ["a", "b"])).toBe(true);
      expect(await isSortedBy(engine, sorted, ["b"])).toBe(false);
      const tieBroken = await file("tie", "(1, 'y'), (1, 'x'), (2, 'a')");
      expect(await isSortedBy(engine, tieBroken, ["a"])).toBe(true);
      expect(await isSortedBy(engine, tieBroken, ["a", "b"])).toBe(false);
      const nullFirst = await file("nulls", "(null, 'a'), (1, 'b')");
      expect(await isSortedBy(engine, nullFirst, ["a"])).toBe(false);
      // A column the file does not hold (a partition column) orders nothing within it.
      expect(await isSortedBy(engine, tieBroken, ["event_date"])).toBe(true);
    } finally {
      engine.close();
    }
  });

  it("reads the order of a file Lakesmith wrote from its settings tag", () => {
    const tag = (sort: string) => ({ "lakesmith.settings": `zstd:3;rg=122880;sort=${sort};dict=6144;v1` });
    expect(orderedByTag(tag("customer_id,event_ts"), ["customer_id"])).toBe(true);
    expect(orderedByTag(tag("event_ts,customer_id"), ["customer_id"])).toBe(false);
    expect(orderedByTag(tag("zorder(b,a)"), ["a", "b"])).toBe(true);
    expect(orderedByTag(tag("zorder(a,b,c)"), ["a", "b"])).toBe(false);
    expect(orderedByTag(tag("none"), ["a"])).toBe(false);
    expect(orderedByTag(null, ["a"])).toBe(false);
    expect(orderedByTag({ other: "sort=a" }, ["a"])).toBe(false);
  });

  it("counts a partition's only file under the target apart from the small files it could merge", () => {
    const file = (key: string, day: string, size: number) => ({
      key,
      path: key,
      size,
      rows: undefined,
      partitionValues: { event_date: day },
    });
    const files = [
      file("a1", "2026-01-01", 10),
      file("a2", "2026-01-01", 20),
      file("a3", "2026-01-01", 500),
      file("b1", "2026-01-02", 10),
      file("b2", "2026-01-02", 400),
      file("c1", "2026-01-03", 300),
    ];
    const found = smallFiles(files, ["event_date"], 100);
    expect(found.small.map((f) => f.key).sort()).toEqual(["a1", "a2"]);
    expect(found.alone.map((f) => f.key)).toEqual(["b1"]);
  });

  it("draws the same bounded sample from the same files, spread over them", () => {
    const files = Array.from({ length: 40 }, (_, i) => ({ key: `f${String(i).padStart(2, "0")}`, size: 10 }));
    const shuffled = [...files].reverse();
    const sample = pickSample(shuffled, { maxFiles: 4, maxBytes: 1000 });
    expect(sample.map((f) => f.key)).toEqual(["f00", "f10", "f20", "f30"]);
    expect(pickSample(files, { maxFiles: 4, maxBytes: 1000 })).toEqual(sample);
    // A byte bound below the spread takes fewer files; a file larger than the bound is passed over.
    expect(pickSample(files, { maxFiles: 4, maxBytes: 25 }).map((f) => f.key)).toEqual(["f00", "f10"]);
    const oneLarge = [{ key: "a", size: 100 }, ...files.slice(0, 3)];
    expect(pickSample(oneLarge, { maxFiles: 2, maxBytes: 50 }).map((f) => f.key)).toEqual(["f00", "f01"]);
  });
});
