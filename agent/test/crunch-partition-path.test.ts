import { describe, expect, it } from "vitest";
import { NULL_PARTITION, partitionFolder, partitionPath } from "../src/crunch/partition-path.ts";
import { planCrunch } from "../src/crunch/plan.ts";

describe("partition paths", () => {
  const values = { region: "eu/west=1", day: "2026-01-01", note: null };
  const columns = ["region", "day", "note"];

  it("labels a partition with its raw values in partition-column order, a null as Hive's default", () => {
    expect(partitionPath(values, columns)).toBe(`region=eu/west=1/day=2026-01-01/note=${NULL_PARTITION}`);
  });

  it("escapes the folder a partition's files are written to as Hive-style writers do", () => {
    expect(partitionFolder(values, columns)).toBe(
      `region=eu%2Fwest%3D1/day=2026-01-01/note=${NULL_PARTITION}/`,
    );
    expect(partitionFolder({ a: "tab\there", b: "50%" }, ["a", "b"])).toBe("a=tab%09here/b=50%25/");
    expect(partitionFolder({}, [])).toBe("");
  });

  it("gives the plan's partitions the same labels", () => {
    const file = { path: "f.parquet", size: 1, partitionValues: values };
    const plan = planCrunch([file, { ...file, path: "g.parquet" }], {
      mode: "crunch",
      targetBytes: 1024,
      partitionColumns: columns,
      maxBinBytes: 1024,
    });
    expect(plan.partitions.map((p) => p.partition)).toEqual([partitionPath(values, columns)]);
  });
});
