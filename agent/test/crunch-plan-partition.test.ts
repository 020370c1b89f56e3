/**
 * A job of a fanned-out crunch plans only its own partition: a day of the date partition column,
 * or one hour of it (an hour partition column, or the hour of timestamp partition values), and is
 * refused when the table is not partitioned by the columns it names.
 */
import { describe, expect, it } from "vitest";
import { type PlanFile, partitionRefusal, planCrunch } from "../src/crunch/plan.ts";

const MB = 1024 * 1024;
const file = (path: string, partitionValues: Record<string, string | null>): PlanFile => ({
  path,
  size: MB,
  partitionValues,
});
const planned = (
  files: PlanFile[],
  partitionColumns: string[],
  partition: Parameters<typeof partitionRefusal>[0],
) =>
  planCrunch(files, {
    mode: "crunch",
    targetBytes: 128 * MB,
    partitionColumns,
    dateColumn: partition.column,
    dateRange: { start: partition.value, end: partition.value },
    partition,
    maxBinBytes: 512 * MB,
  }).partitions.flatMap((p) => p.files.map((f) => f.path));

describe("planning one partition of a fanned-out crunch", () => {
  it("takes only the files of its day, whatever the spelling of the date", () => {
    const files = [
      file("a", { d: "2026-01-01" }),
      file("b", { d: "2026-01-02" }),
      file("c", { d: "2026-01-02" }),
      file("d", { d: "2026-01-03" }),
      file("e", { d: null }),
    ];
    expect(planned(files, ["d"], { column: "d", value: "2026-01-02" })).toEqual(["b", "c"]);
    const compact = [file("a", { d: "20260101" }), file("b", { d: "20260102" })];
    expect(planned(compact, ["d"], { column: "d", value: "2026-01-02" })).toEqual(["b"]);
  });

  it("takes only the files of its hour, from an hour column or from timestamp values", () => {
    const files = [
      file("a", { date: "2026-01-02", hour: "04" }),
      file("b", { date: "2026-01-02", hour: "05" }),
      file("c", { date: "2026-01-02", hour: "5" }),
      file("d", { date: "2026-01-03", hour: "05" }),
    ];
    expect(
      planned(files, ["date", "hour"], { column: "date", value: "2026-01-02", hour: 5, hour_column: "hour" }),
    ).toEqual(["b", "c"]);
    const stamps = [
      file("a", { ts: "2026-01-02 05:00:00" }),
      file("b", { ts: "2026-01-02 06:00:00" }),
      file("c", { ts: "2026-01-01 05:00:00" }),
    ];
    expect(planned(stamps, ["ts"], { column: "ts", value: "2026-01-02", hour: 5 })).toEqual(["a"]);
  });

  it("is refused on a table not partitioned by its columns, naming them", () => {
    expect(partitionRefusal({ column: "d", value: "2026-01-02" }, ["d"])).toBeNull();
    expect(partitionRefusal({ column: "d", value: "2026-01-02" }, [])).toMatch(
      /not partitioned by d \(partition columns: none\)/,
    );
    expect(
      partitionRefusal({ column: "d", value: "2026-01-02", hour: 1, hour_column: "hour" }, ["d"]),
    ).toMatch(/not partitioned by hour/);
  });
});
