import { describe, expect, it } from "vitest";
import { balancedBins, type PlanFile, planCrunch, WRITTEN_BY_TAG } from "../src/crunch/plan.ts";

const MB = 1024 * 1024;
const file = (path: string, sizeMb: number, extra: Partial<PlanFile> = {}): PlanFile => ({
  path,
  size: sizeMb * MB,
  partitionValues: {},
  ...extra,
});
const ours = { tags: { [WRITTEN_BY_TAG]: "zstd" } };

describe("crunch planning", () => {
  it("bins small and foreign files per partition and skips partitions in shape, with the reason", () => {
    const files = [
      file("date=2026-01-01/a", 1, { partitionValues: { date: "2026-01-01" } }),
      file("date=2026-01-01/b", 2, { partitionValues: { date: "2026-01-01" } }),
      file("date=2026-01-02/c", 120, { partitionValues: { date: "2026-01-02" }, ...ours }),
      file("date=2026-01-03/d", 3, { partitionValues: { date: "2026-01-03" }, ...ours }),
      file("date=2026-01-04/e", 200, { partitionValues: { date: "2026-01-04" } }),
    ];
    const plan = planCrunch(files, {
      mode: "crunch",
      targetBytes: 128 * MB,
      partitionColumns: ["date"],
      maxBinBytes: 512 * MB,
    });
    expect(plan.selectedFiles).toBe(5);
    expect(
      plan.partitions.map((p) => [p.partition, p.bins.map((b) => b.map((f) => f.path)), p.skipReason]),
    ).toEqual([
      ["date=2026-01-01", [["date=2026-01-01/a", "date=2026-01-01/b"]], undefined],
      ["date=2026-01-02", [], "already in shape"],
      ["date=2026-01-03", [], "one small file and nothing to merge it with"],
      // A large file another engine wrote is recompressed by a full crunch...
      ["date=2026-01-04", [["date=2026-01-04/e"]], undefined],
    ]);
    // ...but not by an optimize pass, which only merges small files.
    const optimize = planCrunch(files, {
      mode: "optimize",
      targetBytes: 128 * MB,
      partitionColumns: ["date"],
      maxBinBytes: 512 * MB,
    });
    expect(optimize.partitions.filter((p) => p.bins.length).map((p) => p.partition)).toEqual([
      "date=2026-01-01",
    ]);
  });

  it("selects partitions by date and unpartitioned files by their statistics", () => {
    const partitioned = ["2026-01-01", "2026-01-02", "2026-01-03"].map((d) =>
      file(`d=${d}/x`, 1, { partitionValues: { d } }),
    );
    partitioned.push(file("d=null/x", 1, { partitionValues: { d: null } }));
    const options = {
      mode: "crunch" as const,
      targetBytes: 128 * MB,
      partitionColumns: ["d"],
      dateColumn: "d",
      dateRange: { start: "2026-01-02", end: "2026-01-03" },
      maxBinBytes: 512 * MB,
    };
    expect(planCrunch(partitioned, options).partitions.map((p) => p.partition)).toEqual([
      "d=2026-01-02",
      "d=2026-01-03",
    ]);

    const stats = (min: string, max: string) => ({
      stats: { minValues: { day: min }, maxValues: { day: max } },
    });
    const flat = [
      file("a", 1, stats("2025-12-01", "2025-12-31")),
      file("b", 1, stats("2025-12-20", "2026-01-02")),
      file("c", 1, stats("2026-01-05", "2026-01-09")),
      file("d", 1),
    ];
    const plan = planCrunch(flat, { ...options, partitionColumns: [], dateColumn: "day" });
    expect(plan.partitions[0]?.files.map((f) => f.path)).toEqual(["b", "d"]);
  });

  it("balances bins under the byte limit", () => {
    const sizes = [100, 100, 100, 100, 100, 10].map((s, i) => ({ size: s, i }));
    const bins = balancedBins(sizes, 300);
    expect(bins.map((b) => b.reduce((n, f) => n + f.size, 0))).toEqual([300, 210]);
    expect(balancedBins([{ size: 500 }], 100)).toEqual([[{ size: 500 }]]);
    for (const bin of balancedBins(
      Array.from({ length: 50 }, (_, i) => ({ size: 1 + (i % 7) })),
      20,
    ))
      expect(bin.reduce((n, f) => n + f.size, 0)).toBeLessThanOrEqual(20);
  });
});
