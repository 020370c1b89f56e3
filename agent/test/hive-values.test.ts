/**
 * Hive's type strings as DuckDB types (and refusals of what has no lossless equivalent), and
 * metastore locations against the store: spellings, keys, and where a rewrite's folders go.
 */
import { describe, expect, it } from "vitest";
import {
  canonicalLocation,
  isDataFile,
  keyOfLocation,
  locationOfKey,
  rewriteFolder,
  rewriteRecordKey,
} from "../src/hive/location.ts";
import { duckdbType, recipeType, UnsupportedHiveType } from "../src/hive/types.ts";

describe("Hive types", () => {
  it.each([
    ["int", "INTEGER"],
    ["BIGINT", "BIGINT"],
    ["decimal", "DECIMAL(10,0)"],
    ["decimal(12, 2)", "DECIMAL(12,2)"],
    ["varchar(64)", "VARCHAR"],
    ["double precision", "DOUBLE"],
    ["array<struct<a:int,`b c`:string>>", 'STRUCT("a" INTEGER, "b c" VARCHAR)[]'],
    ["map<string,array<decimal(12,2)>>", "MAP(VARCHAR, DECIMAL(12,2)[])"],
    ["timestamp", "TIMESTAMP"],
  ])("%s is %s", (hive, duckdb) => {
    expect(duckdbType(hive)).toBe(duckdb);
  });

  it.each(["uniontype<int,string>", "interval_day_time", "array<int", "decimal(40,2)", "struct<a int>"])(
    "refuses %s",
    (hive) => {
      expect(() => duckdbType(hive)).toThrow(UnsupportedHiveType);
    },
  );

  it("names types in the recipe's words", () => {
    expect(recipeType("bigint")).toBe("long");
    expect(recipeType("varchar(10)")).toBe("string");
    expect(recipeType("date")).toBe("date");
    expect(recipeType("struct<a:int>")).toBe("struct");
  });
});

describe("Hive locations", () => {
  it("compares locations in one spelling", () => {
    expect(canonicalLocation("s3a://lake/t/")).toBe("s3://lake/t");
    expect(canonicalLocation("file:/tmp/t")).toBe("file:///tmp/t");
    expect(canonicalLocation("file:///tmp/t/")).toBe("file:///tmp/t");
  });

  it("finds a location's key under the store's root, or none", () => {
    expect(keyOfLocation("s3://lake/t/", "s3a://lake/t/dt=2026-01-01")).toBe("dt=2026-01-01");
    expect(keyOfLocation("s3://lake/t/", "s3://lake/t")).toBe("");
    expect(keyOfLocation("s3://lake/t/", "s3://lake/other/dt=1")).toBeNull();
    expect(keyOfLocation("s3://lake/t/", "s3://lake/t2/dt=1")).toBeNull();
    expect(keyOfLocation("file:///w/t/", "file:/w/t/h=12%3A00")).toBe("h=12%3A00");
  });

  it("spells a new location as the metastore spelled the old one", () => {
    expect(locationOfKey("s3a://lake/t/dt=1", "dt=1", "_lakesmith/r1/dt=1/")).toBe(
      "s3a://lake/t/_lakesmith/r1/dt=1",
    );
    expect(locationOfKey("s3a://lake/t", "", "_lakesmith/r1/data/")).toBe("s3a://lake/t/_lakesmith/r1/data");
  });

  it("puts rewrites under the table's _lakesmith folder, an unpartitioned table's beside its last one", () => {
    expect(rewriteFolder("", "r1", "dt=1")).toBe("_lakesmith/r1/dt=1/");
    expect(rewriteFolder("", "r1", "")).toBe("_lakesmith/r1/data/");
    expect(rewriteFolder("_lakesmith/r1/data", "r2", "")).toBe("_lakesmith/r2/data/");
    expect(rewriteFolder("sub/t/_lakesmith/r1/data", "r2", "")).toBe("sub/t/_lakesmith/r2/data/");
    expect(rewriteRecordKey("_lakesmith/r1/data", "r2", false)).toBe("_lakesmith/r2/_rewrite.json");
    expect(rewriteRecordKey("t", "r2", true)).toBe("t/_lakesmith/r2/_rewrite.json");
  });

  it("reads only the visible files directly in a folder", () => {
    expect(isDataFile("dt=1", "dt=1/part-0.parquet")).toBe(true);
    expect(isDataFile("dt=1", "dt=1/_SUCCESS")).toBe(false);
    expect(isDataFile("dt=1", "dt=1/.part-0.crc")).toBe(false);
    expect(isDataFile("dt=1", "dt=1/nested/part-0.parquet")).toBe(false);
    expect(isDataFile("", "part-0.parquet")).toBe(true);
  });
});
