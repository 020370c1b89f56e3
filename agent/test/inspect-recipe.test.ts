import { describe, expect, it } from "vitest";
import { type ColumnFacts, inferRecipe, patternOf } from "../src/inspect/recipe.ts";

const col = (
  name: string,
  type: string,
  distinct: number,
  extra: Partial<ColumnFacts> = {},
): ColumnFacts => ({
  name,
  type,
  distinct,
  nonNull: 10_000,
  ...extra,
});

describe("onboarding recipe inference", () => {
  it("names partition patterns from the values", () => {
    expect(patternOf({ name: "date", type: "string", values: ["2026-01-01", "2026-01-02", null] })).toBe(
      "date=YYYY-MM-DD",
    );
    expect(patternOf({ name: "year", type: "integer", values: ["2025", "2026"] })).toBe("year=YYYY");
    expect(patternOf({ name: "month", type: "integer", values: ["01", "12"] })).toBe("month=MM");
    expect(patternOf({ name: "month", type: "integer", values: ["1", "12"] })).toBe("month=M");
    expect(patternOf({ name: "hour", type: "string", values: ["00", "23"] })).toBe("hour=HH");
    expect(patternOf({ name: "ds", type: "string", values: ["20260101"] })).toBe("ds=YYYYMMDD");
    expect(patternOf({ name: "ts", type: "timestamp", values: ["2026-01-01 10:00:00"] })).toBe(
      "ts=YYYY-MM-DD HH:MM:SS",
    );
    expect(patternOf({ name: "region", type: "string", values: ["eu", "us"] })).toBe("region=<value>");
    expect(patternOf({ name: "bucket", type: "integer", values: ["3", "-1"] })).toBe("bucket=<integer>");
  });

  it("finds the date filter column in partitions first, then date types, then date-looking text", () => {
    const partitioned = inferRecipe(
      [
        { name: "event_date", type: "date", values: ["2026-01-01"] },
        { name: "region", type: "string", values: ["eu"] },
      ],
      [col("created_at", "timestamp", 9000), col("kind", "string", 4)],
    );
    expect(partitioned).toEqual({
      partition_columns: ["event_date", "region"],
      partition_pattern: "event_date=YYYY-MM-DD/region=<value>",
      date_filter_column: "event_date",
      cluster_columns: ["kind"],
      enumerated_columns: ["kind"],
    });
    // A CSV-born table keeps its dates as text: COVID-19_NYT's shape.
    const covid = inferRecipe(
      [],
      [
        col("date", "string", 470, { min: "2020-01-21", max: "2021-04-22" }),
        col("county", "string", 1900),
        col("state", "string", 55),
        col("fips", "integer", 3200),
        col("cases", "integer", 40_000, { nonNull: 1_000_000 }),
      ],
    );
    expect(covid.partition_pattern).toBeNull();
    expect(covid.date_filter_column).toBe("date");
    expect(covid.enumerated_columns).toEqual(["state"]);
    expect(covid.cluster_columns).toEqual(["state", "date"]);
  });

  it("reports no date column and no enumerations where there are none", () => {
    const recipe = inferRecipe(
      [],
      [col("id", "long", 10_000), col("payload", "struct", 1), col("note", "string", 0, { nonNull: 0 })],
    );
    expect(recipe).toMatchObject({ date_filter_column: null, enumerated_columns: [], cluster_columns: [] });
  });
});
