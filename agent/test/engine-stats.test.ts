import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { duckdbColumns, parseSchema } from "../src/delta/index.ts";
import { boundFor, Engine, parseType, rewriteFiles, sqlString } from "../src/engine/index.ts";

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-stats-"));
  engine = await Engine.open({ memoryLimitMb: 256, tempDir: join(dir, "spill") });
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

/** One Delta column of each type the fixtures use, and edge values of each. */
const SCHEMA = {
  type: "struct",
  fields: [
    ["s", "string"],
    ["long_min", "string"],
    ["long_max", "string"],
    ["l", "long"],
    ["i", "integer"],
    ["sh", "short"],
    ["ts", "timestamp"],
    ["ts_far", "timestamp"],
    ["ntz", "timestamp_ntz"],
    ["d", "date"],
    ["d_bc", "date"],
    ["dbl", "double"],
    ["dbl_nan", "double"],
    ["dbl_inf", "double"],
    ["dec", "decimal(8,5)"],
    ["dec38", "decimal(38,0)"],
    ["b", "boolean"],
    ["bin", "binary"],
    ["arr", { type: "array", elementType: "string", containsNull: true }],
    ["m", { type: "map", keyType: "string", valueType: "string", valueContainsNull: true }],
    [
      "st",
      {
        type: "struct",
        fields: [
          ['a "q"', "integer"],
          [
            "inner",
            { type: "struct", fields: [{ name: "x", type: "string", nullable: true, metadata: {} }] },
          ],
          ["tags", { type: "array", elementType: "string", containsNull: true }],
        ].map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
      },
    ],
    ["all_null", "integer"],
  ].map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
};

/** Three rows; each column's comment says what its statistics must be. */
const ROWS = `select * from (values
  ('apple', repeat('a', 40) || 'z', repeat('z', 300), 1::bigint, 7, 3::smallint,
   timestamptz '2024-05-01 00:00:00.000999+00', timestamptz '0050-01-01 00:00:00+00', timestamp '2024-01-01 10:00:00',
   date '2024-02-29', '0044-03-15 (BC)'::date, 0.1::double, 'nan'::double, '-inf'::double,
   123.45678::decimal(8,5), 12345678901234567890123::decimal(38,0), true, 'ab'::blob,
   ['x', NULL], map {'k': 'v'}, {'a "q"': 1, 'inner': {'x': 'in'}, 'tags': ['t']}, NULL::integer),
  ('été', 'b', 'a', -5::bigint, -2147483648, -3::smallint,
   timestamptz '2024-05-01 00:00:01.000001+00', timestamptz '10000-01-01 00:00:00+00', NULL,
   date '0001-01-01', date '2024-01-01', -1e300::double, 2::double, 1::double,
   -0.00001::decimal(8,5), 5::decimal(38,0), false, NULL,
   NULL, NULL, {'a "q"': NULL, 'inner': NULL, 'tags': NULL}, NULL),
  (NULL, 'c', 'b', 9007199254740993::bigint, NULL, NULL,
   timestamptz '1969-12-31 23:59:59.999999+00', NULL, NULL,
   NULL, NULL, 2.5::double, 1::double, NULL,
   NULL, NULL, NULL, NULL,
   [], NULL, NULL, NULL)
) t(s, long_min, long_max, l, i, sh, ts, ts_far, ntz, d, d_bc, dbl, dbl_nan, dbl_inf, dec, dec38, b, bin,
    arr, m, st, all_null)`;

describe("Delta statistics of rewritten files", () => {
  it("states exact bounds for every type the fixtures use, and leaves out every bound that is not safe", async () => {
    const columns = duckdbColumns(parseSchema(JSON.stringify(SCHEMA)), []);
    const input = join(dir, "in", "typed.parquet");
    await mkdir(join(dir, "in"), { recursive: true });
    await engine.run(
      `copy (select ${columns.map((c) => `cast("${c.name}" as ${c.type}) as "${c.name}"`).join(", ")} from (${ROWS}))
       to ${sqlString(input)} (format parquet)`,
    );
    const out = await rewriteFiles(engine, {
      inputs: [input],
      columns,
      outDir: join(dir, "out"),
      namePrefix: "part-typed",
      settings: {
        compression: "zstd",
        compression_level: 3,
        row_group_size: 122_880,
        sort_columns: [],
        parquet_version: "v1",
      },
      targetFileBytes: 2 ** 20,
    });
    expect(out.files).toHaveLength(1);
    expect(out.files[0]?.stats).toEqual({
      numRecords: 3,
      minValues: {
        s: "apple",
        long_min: "a".repeat(32), // a prefix of a longer min is still a lower bound
        long_max: "a",
        l: -5,
        i: -2147483648,
        sh: -3,
        ts: "1969-12-31T23:59:59.999Z", // rounded down to the millisecond
        ts_far: "0050-01-01T00:00:00.000Z",
        d: "0001-01-01",
        dbl: -1e300,
        dbl_nan: 1,
        dec: -0.00001,
        dec38: 5,
        st: { 'a "q"': 1, inner: { x: "in" } },
      },
      maxValues: {
        s: "été", // UTF-8 byte order, as Parquet and Delta compare strings
        long_min: "c",
        i: 7,
        sh: 3,
        ts: "2024-05-01T00:00:01.001Z", // rounded up to the millisecond
        d: "2024-02-29",
        d_bc: "2024-01-01",
        dbl: 2.5,
        dbl_inf: 1,
        dec: 123.45678,
        st: { 'a "q"': 1, inner: { x: "in" } },
      },
      nullCount: {
        s: 1,
        long_min: 0,
        long_max: 0,
        l: 0,
        i: 1,
        sh: 1,
        ts: 0,
        ts_far: 1,
        ntz: 2,
        d: 1,
        d_bc: 1,
        dbl: 0,
        dbl_nan: 0,
        dbl_inf: 1,
        dec: 1,
        dec38: 1,
        b: 1,
        bin: 2,
        st: { 'a "q"': 2, inner: { x: 2 } },
        all_null: 3,
      },
    });
    // Left out: long_max's max (DuckDB cuts it at 256 bytes), l's max (beyond a double's exact
    // integers), ts_far's max (year 10000), d_bc's min (BC), dbl_nan's max (NaN), dbl_inf's min,
    // dec38's max (23 digits), no bounds for booleans, binary, timestamps without zone, lists and
    // maps, and no null count for lists and maps (the writer counts their elements).
  });
});

describe("Delta stats encoding", () => {
  it("bounds timestamps outward to the millisecond and leaves out what a double cannot hold", () => {
    expect(boundFor("timestamptz", "1714521600000999", "min")).toBe("2024-05-01T00:00:00.000Z");
    expect(boundFor("timestamptz", "1714521600000001", "max")).toBe("2024-05-01T00:00:00.001Z");
    expect(boundFor("timestamptz", "1714521600001000", "max")).toBe("2024-05-01T00:00:00.001Z");
    expect(boundFor("timestamptz", "-1", "min")).toBe("1969-12-31T23:59:59.999Z");
    expect(boundFor("timestamptz", "253402300800000000", "max")).toBeUndefined();
    expect(boundFor("integer", "9007199254740993", "max")).toBeUndefined();
    expect(boundFor("decimal", "12345678901234567.89", "max")).toBeUndefined();
    expect(boundFor("decimal", "-0.05", "min")).toBe(-0.05);
    expect(boundFor("float", "NaN", "max")).toBeUndefined();
    expect(boundFor("string", "é".repeat(33), "min")).toBe("é".repeat(32));
    expect(boundFor("string", "é".repeat(33), "max")).toBeUndefined();
  });

  it("reads struct fields, quoted names and complex leaves from DuckDB's type spelling", () => {
    expect(
      parseType(
        'STRUCT(a INTEGER, "b, ""c""" STRUCT(d DECIMAL(10,2), e VARCHAR[]), f MAP(VARCHAR, INTEGER))',
      ),
    ).toEqual({
      struct: [
        { name: "a", type: { leaf: "integer" } },
        {
          name: 'b, "c"',
          type: {
            struct: [
              { name: "d", type: { leaf: "decimal" } },
              { name: "e", type: { leaf: "none" } },
            ],
          },
        },
        { name: "f", type: { leaf: "none" } },
      ],
    });
    expect(parseType("TIMESTAMP")).toEqual({ leaf: "none" });
    expect(parseType("BOOLEAN")).toEqual({ leaf: "none" });
  });
});
