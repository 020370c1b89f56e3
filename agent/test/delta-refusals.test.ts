import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSnapshot, readerFeatures, writeRefusal, writerFeatures } from "../src/delta/index.ts";
import { Engine } from "../src/engine/duckdb.ts";
import { FileStore } from "../src/store/index.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const FIXTURES = DELTA_FIXTURES;

/**
 * Every fixture table: "writable" when the agent may compact it, else a pattern its refusal must
 * match. Writable tables include legacy writer 2-6 protocols (appendOnly, invariants, CDF,
 * generated and identity columns are implied and stay valid under a dataChange=false rewrite).
 */
const EXPECTED: Record<string, "writable" | RegExp> = {
  "COVID-19_NYT": "writable",
  cdc_ict_table: /in-commit timestamps/,
  "cdf-table": "writable", // writer 4: changeDataFeed, generatedColumns implied
  "cdf-table-non-partitioned": "writable",
  "cdf-table-with-cdc-and-dvs": /deletion vectors/,
  "checkpoint-cdf-table": "writable",
  "checkpoint-v2-table": /V2 checkpoints/,
  checkpoint_with_partitions: "writable",
  checkpoints: "writable",
  checkpoints_vacuumed: "writable",
  concurrent_workers: "writable",
  "delta-0.2.0": "writable",
  "delta-0.8-empty": "writable",
  "delta-0.8.0": "writable",
  "delta-0.8.0-date": "writable",
  "delta-0.8.0-null-partition": "writable",
  "delta-0.8.0-numeric-partition": "writable",
  "delta-0.8.0-partitioned": "writable",
  "delta-0.8.0-special-partition": "writable",
  "delta-1.2.1-only-struct-stats": "writable",
  "delta-2.2.0-partitioned-types": "writable",
  "delta-checkpoint-stats-optional": "writable",
  "delta-live-table": "writable", // writer 5 implies columnMapping, but its mode is none
  "delta-stats-optional": "writable",
  "golden/data-reader-array-primitives": "writable",
  http_requests: "writable",
  "issue-2152": "writable", // writer 6: identityColumns implied
  issue_1374: "writable",
  latest_not_checkpointed: "writable",
  "partition-type-primitives": "writable",
  "python-0.25.5-checkpoint": "writable",
  simple_commit: "writable",
  simple_table: "writable",
  simple_table_features: /reader version 5.*unknown reader feature 'blahabl'/,
  simple_table_with_cdc: "writable",
  simple_table_with_checkpoint: "writable",
  "spark-shredded-variant-preview-delta": /variant shredding \(preview\)/,
  "spark-variant-checkpoint": /variant type \(preview\)/,
  "spark-variant-stable-feature-checkpoint": /variant type.*column 'v' has type 'variant'/,
  "table-with-domain-metadata": /deletion vectors.*row tracking/,
  "table-with-dv-small": /deletion vectors/,
  "table-without-dv-small": "writable",
  table_failed_last_checkpoint_update: "writable",
  table_with_column_mapping: /column mapping \(mode 'name'\)/,
  table_with_deletion_logs: /deletion vectors/,
  table_with_edge_timestamps: "writable",
  table_with_liquid_clustering: /row tracking.*unknown writer feature 'liquid'/,
  table_with_null_stats_in_notnull_struct: "writable",
  table_with_partitioning_mapping: /deletion vectors.*column mapping/,
  with_checkpoint_no_last_checkpoint: "writable",
};

function fixtureTables(): string[] {
  return readdirSync(FIXTURES).flatMap((name) =>
    existsSync(join(FIXTURES, name, "_delta_log"))
      ? [name]
      : readdirSync(join(FIXTURES, name)).map((inner) => `${name}/${inner}`),
  );
}

let engine: Engine;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "delta-refusals-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});

afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe("which fixture tables the agent may rewrite", () => {
  it("has an expectation for every fixture table, and no stale ones", () => {
    expect(fixtureTables().sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))("%s loads and is %s", async (table, expected) => {
    const snapshot = await loadSnapshot(new FileStore(join(FIXTURES, table)), engine, {
      scratchDir: join(scratch, "dl"),
    });
    const refusal = writeRefusal(snapshot);
    if (expected === "writable") expect(refusal).toBeNull();
    else expect(refusal).toMatch(expected);
  });
});

describe("protocol features", () => {
  it("implies features from legacy writer and reader versions", () => {
    expect([...writerFeatures({ minReaderVersion: 1, minWriterVersion: 2 })]).toEqual([
      "appendOnly",
      "invariants",
    ]);
    expect(writerFeatures({ minReaderVersion: 1, minWriterVersion: 6 })).toEqual(
      new Set([
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "columnMapping",
        "identityColumns",
      ]),
    );
    expect([...readerFeatures({ minReaderVersion: 2, minWriterVersion: 5 })]).toEqual(["columnMapping"]);
    expect(
      writerFeatures({
        minReaderVersion: 3,
        minWriterVersion: 7,
        writerFeatures: ["clustering"],
        readerFeatures: [],
      }),
    ).toEqual(new Set(["clustering"]));
  });
});
