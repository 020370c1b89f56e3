/**
 * Crunch fan-out (`crunch/fan-out.ts`): which jobs a crunch request becomes (days, 24 hours a day
 * above the hourly setting, or one job), their dedupe keys and locks, and where the average daily
 * partition size comes from (`crunch/partition-size.ts`).
 */
import { ManualClock } from "@lakesmith/shared";
import type { CrunchPayload, OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crunchJobs, crunchPartitions, type FanOutSettings, MAX_FAN_OUT } from "../src/crunch/fan-out.ts";
import { averageDailyPartitionBytes, dailyAverage } from "../src/crunch/partition-size.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { FAKE_AGENT, leaseJob, RECIPE } from "./support/tables.ts";

const DAILY: FanOutSettings = {
  hourly_fanout_min_partition_size_gb: null,
  average_daily_partition_bytes: null,
};
const HOURLY: FanOutSettings = {
  hourly_fanout_min_partition_size_gb: 10,
  average_daily_partition_bytes: 11e9,
};
const HOUR_RECIPE: OnboardingRecipeResult = {
  ...RECIPE,
  partition_columns: ["event_date", "hour"],
  partition_pattern: "event_date=YYYY-MM-DD/hour=HH",
};
const payload = (extra: Partial<CrunchPayload> = {}): CrunchPayload => ({
  table_id: "tbl_1",
  uri: "s3://lake/t",
  format: "delta",
  date_range: { start: "2026-01-30", end: "2026-02-02" },
  recipe: RECIPE,
  ...extra,
});
const labels = (p: CrunchPayload, s: FanOutSettings) =>
  crunchPartitions(p, s).map(
    (x) => `${x.value}${x.hour === undefined ? "" : `@${x.hour}${x.hour_column ?? ""}`}`,
  );

describe("crunch fan-out", () => {
  it("splits a range on a date partition column into one job per day, across a month's end", () => {
    expect(labels(payload(), DAILY)).toEqual(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
  });

  it("splits each day into 24 hours above the hourly setting when the table is partitioned by hour", () => {
    const hours = labels(payload({ recipe: HOUR_RECIPE }), HOURLY);
    expect(hours).toHaveLength(4 * 24);
    expect(hours.slice(0, 2)).toEqual(["2026-01-30@0hour", "2026-01-30@1hour"]);
    expect(hours.at(-1)).toBe("2026-02-02@23hour");
    // Timestamp values in the date column carry the hour themselves.
    const stamps = { ...RECIPE, partition_pattern: "event_date=YYYY-MM-DD HH:MM:SS" };
    expect(labels(payload({ recipe: stamps }), HOURLY)[5]).toBe("2026-01-30@5");
  });

  it("stays daily at or below the setting, with no measured size, with the setting unset, or without an hour", () => {
    const hourly = payload({ recipe: HOUR_RECIPE });
    const days = ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"];
    expect(labels(hourly, { ...HOURLY, average_daily_partition_bytes: 10e9 })).toEqual(days);
    expect(labels(hourly, { ...HOURLY, average_daily_partition_bytes: null })).toEqual(days);
    expect(labels(hourly, { ...HOURLY, hourly_fanout_min_partition_size_gb: null })).toEqual(days);
    expect(labels(payload(), HOURLY)).toEqual(days);
  });

  it("keeps one job for the whole table, an unpartitioned table, a data date column or no recipe", () => {
    const unpartitioned = { ...RECIPE, partition_columns: [], partition_pattern: null };
    for (const p of [
      payload({ date_range: undefined }),
      payload({ recipe: unpartitioned }),
      payload({ recipe: null }),
      payload({ backfill_col: "created_at" }),
    ]) {
      expect(crunchPartitions(p, DAILY)).toEqual([]);
      const jobs = crunchJobs(
        { id: "tbl_1", priority: "P2" },
        { kind: "crunch", payload: p, trigger: "manual" },
        DAILY,
      );
      expect(jobs.map((j) => j.payload)).toEqual([p]);
    }
  });

  it(`falls back to one job past ${MAX_FAN_OUT} days, and to days past ${MAX_FAN_OUT} hours`, () => {
    const long = payload({ date_range: { start: "2024-01-01", end: "2025-12-31" } });
    expect(crunchPartitions(long, DAILY)).toEqual([]);
    const month = payload({ recipe: HOUR_RECIPE, date_range: { start: "2026-01-01", end: "2026-01-31" } });
    expect(labels(month, HOURLY)).toHaveLength(31);
  });

  it("gives each job its day as its range, its partition, and the request's dedupe key plus the partition", () => {
    const jobs = crunchJobs(
      { id: "tbl_1", priority: "P1" },
      {
        kind: "optimize",
        payload: payload({ recipe: HOUR_RECIPE }),
        trigger: "policy",
        dedupeKey: "policy:pol_1:2026-02-03",
      },
      HOURLY,
    );
    expect(jobs[25]).toMatchObject({
      kind: "optimize",
      tableId: "tbl_1",
      priority: "P1",
      trigger: "policy",
      dedupeKey: "policy:pol_1:2026-02-03:event_date=2026-01-31/hour=01",
      payload: {
        date_range: { start: "2026-01-31", end: "2026-01-31" },
        partition: { column: "event_date", value: "2026-01-31", hour: 1, hour_column: "hour" },
      },
    });
    expect(new Set(jobs.map((j) => j.dedupeKey)).size).toBe(jobs.length);
  });
});

describe("average daily partition size", () => {
  it("sums a day's partitions (hours included) and averages the days", () => {
    const sizes = new Map([
      ["d=2026-01-01/hour=00", 5],
      ["d=2026-01-01/hour=01", 7],
      ["d=20260102", 4],
      ["region=eu", 100],
    ]);
    expect(dailyAverage(sizes, "d")).toBe(8);
    expect(dailyAverage(new Map(), "d")).toBeNull();
  });

  describe("from the table's crunches", () => {
    let plane: TestPlane;
    const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
    beforeAll(async () => {
      plane = await startTestPlane({ clock });
    });
    afterAll(() => plane.close());

    it("takes each partition's newest figure from succeeded crunches, and is null before any", async () => {
      const { jobs, db } = plane.services;
      const tableId = "tbl_sizes";
      expect(await averageDailyPartitionBytes(db, tableId, "event_date")).toBeNull();
      const crunched = async (partitions: [string, number][]) => {
        clock.advance(60_000);
        const { job } = await jobs.enqueue({
          kind: "crunch",
          tableId,
          payload: { table_id: tableId, uri: "s3://lake/sizes", format: "delta" },
        });
        const leased = await leaseJob(plane, job.id);
        const result = {
          job_type: "crunch",
          table_version_before: 0,
          committed_version: 1,
          files_before: 2,
          files_after: 1,
          bytes_before: 2,
          bytes_after: 1,
          drr: 50,
          rows_in: 1,
          rows_out: 1,
          partitions: partitions.map(([partition, bytes]) => ({
            partition,
            status: "crunched",
            files_before: 2,
            files_after: 1,
            bytes_before: bytes * 2,
            bytes_after: bytes,
            rows: 1,
          })),
          partitions_crunched: partitions.length,
          partitions_skipped: 0,
          settings: null,
          duration_ms: 1,
        };
        await jobs.complete(FAKE_AGENT.id, leased.id, leased.fence, "succeeded", { result });
      };
      await crunched([
        ["event_date=2026-01-01", 100],
        ["event_date=2026-01-02", 300],
      ]);
      await crunched([["event_date=2026-01-01", 500]]);
      expect(await averageDailyPartitionBytes(db, tableId, "event_date")).toBe(400);
    });
  });
});
