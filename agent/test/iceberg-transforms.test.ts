import { describe, expect, it } from "vitest";
import {
  applyTransform,
  bucketHash,
  humanString,
  type IcebergType,
  murmur3,
  type PrimitiveName,
  type PrimitiveType,
  parseDate,
  parseTime,
  parseTimestamp,
  parseTransform,
  resultType,
  type Transform,
  transformString,
} from "../src/iceberg/index.ts";

const type = (name: PrimitiveName): PrimitiveType => ({ kind: "primitive", name });
const decimal = (precision: number, scale: number): PrimitiveType => ({ kind: "decimal", precision, scale });
const US = 1_000_000n;
const NS = 1_000_000_000n;
const t = parseTransform;

describe("bucket hashes match the spec's published test vectors (Appendix B)", () => {
  it.each([
    ["int 34", type("int"), 34, 2017239379],
    ["long 34", type("long"), 34n, 2017239379],
    ["decimal(4,2) 14.20", decimal(4, 2), { unscaled: 1420n, scale: 2 }, -500754589],
    ["date 2017-11-16", type("date"), parseDate("2017-11-16"), -653330422],
    ["time 22:31:08", type("time"), parseTime("22:31:08", US), -662762989],
    [
      "timestamp 2017-11-16T22:31:08",
      type("timestamp"),
      parseTimestamp("2017-11-16T22:31:08", US),
      -2047944441,
    ],
    [
      "timestamp with micros",
      type("timestamp"),
      parseTimestamp("2017-11-16T22:31:08.000001", US),
      -1207196810,
    ],
    [
      "timestamptz at -08:00",
      type("timestamptz"),
      parseTimestamp("2017-11-16T14:31:08-08:00", US),
      -2047944441,
    ],
    [
      "timestamp_ns, hashed as micros",
      type("timestamp_ns"),
      parseTimestamp("2017-11-16T22:31:08.000001001", NS),
      -1207196810,
    ],
    [
      "timestamptz_ns",
      type("timestamptz_ns"),
      parseTimestamp("2017-11-16T14:31:08.000001001-08:00", NS),
      -1207196810,
    ],
    ["string iceberg", type("string"), "iceberg", 1210000089],
    ["uuid", type("uuid"), "f79c3e09-677c-4bbd-a479-3f349cb785e7", 1488055340],
    ["fixed 00010203", { kind: "fixed", length: 4 } as PrimitiveType, Buffer.from([0, 1, 2, 3]), -188683207],
    ["binary 00010203", type("binary"), Buffer.from([0, 1, 2, 3]), -188683207],
    ["float 1.0", type("float"), 1, -142385009],
    ["double 1.0", type("double"), 1, -142385009],
  ] as const)("%s", (_, source, value, hash) => {
    expect(bucketHash(source, value)).toBe(hash);
  });

  it("hashes bytes with the plain murmur3 x86 32-bit function (empty input is 0)", () => {
    expect(murmur3(new Uint8Array())).toBe(0);
    expect(murmur3(Buffer.from("iceberg"))).toBe(1210000089);
  });

  it("puts a value in bucket (hash & MAX_INT) % N", () => {
    expect(applyTransform(t("bucket[16]"), type("int"), 34)).toBe(2017239379 % 16);
    expect(applyTransform(t("bucket[100]"), decimal(4, 2), { unscaled: 1420n, scale: 2 })).toBe(
      (-500754589 & 0x7fffffff) % 100,
    );
    expect(applyTransform(t("bucket[1]"), type("string"), "anything")).toBe(0);
  });
});

describe("parseTransform", () => {
  it("reads every spec transform and keeps unknown names as unknown", () => {
    const parsed: Record<string, Transform> = {
      identity: { kind: "identity" },
      "bucket[16]": { kind: "bucket", buckets: 16 },
      "truncate[4]": { kind: "truncate", width: 4 },
      year: { kind: "year" },
      month: { kind: "month" },
      day: { kind: "day" },
      hour: { kind: "hour" },
      void: { kind: "void" },
      zorder: { kind: "unknown", name: "zorder" },
      "bucket[0]": { kind: "unknown", name: "bucket[0]" },
    };
    for (const [text, transform] of Object.entries(parsed)) {
      expect(parseTransform(text)).toEqual(transform);
      expect(transformString(parseTransform(text))).toBe(text);
    }
  });

  it("types results as the spec does: int for bucket/year/month/hour, date for day, the source otherwise", () => {
    const ts = type("timestamptz");
    expect(resultType(t("bucket[4]"), type("string"))).toEqual(type("int"));
    expect(resultType(t("year"), ts)).toEqual(type("int"));
    expect(resultType(t("month"), type("date"))).toEqual(type("int"));
    expect(resultType(t("hour"), ts)).toEqual(type("int"));
    expect(resultType(t("day"), ts)).toEqual(type("date"));
    expect(resultType(t("truncate[3]"), decimal(9, 2))).toEqual(decimal(9, 2));
    expect(resultType(t("identity"), type("uuid"))).toEqual(type("uuid"));
    expect(resultType(t("void"), type("long"))).toEqual(type("long"));
  });

  it("refuses a transform on a source type the spec does not allow, naming both", () => {
    const list: IcebergType = { kind: "list", elementId: 2, element: type("int"), elementRequired: false };
    expect(() => resultType(t("hour"), type("date"))).toThrow("'hour' can't be applied to a date column");
    expect(() => resultType(t("bucket[2]"), type("double"))).toThrow(/bucket\[2\]/);
    expect(() => resultType(t("truncate[2]"), type("uuid"))).toThrow(/uuid/);
    expect(() => resultType(t("identity"), list)).toThrow(/list<int>/);
    expect(() => applyTransform(t("zorder"), type("int"), 1)).toThrow(/zorder/);
  });
});

describe("applyTransform", () => {
  it("truncates ints, longs and decimals down to a multiple of W, also below zero", () => {
    expect(applyTransform(t("truncate[10]"), type("int"), 1)).toBe(0);
    expect(applyTransform(t("truncate[10]"), type("int"), -1)).toBe(-10);
    expect(applyTransform(t("truncate[10]"), type("long"), -11n)).toBe(-20n);
    expect(applyTransform(t("truncate[50]"), decimal(9, 2), { unscaled: 1065n, scale: 2 })).toEqual({
      unscaled: 1050n,
      scale: 2,
    });
  });

  it("truncates strings by code points and binary by bytes", () => {
    expect(applyTransform(t("truncate[3]"), type("string"), "iceberg")).toBe("ice");
    expect(applyTransform(t("truncate[2]"), type("string"), "😀😀😀")).toBe("😀😀");
    expect(applyTransform(t("truncate[2]"), type("binary"), Buffer.from([1, 2, 3]))).toEqual(
      Buffer.from([1, 2]),
    );
  });

  it("counts years, months, days and hours since 1970 for dates and timestamps", () => {
    const ts = parseTimestamp("2017-11-16T22:31:08", US);
    expect(applyTransform(t("year"), type("timestamp"), ts)).toBe(47);
    expect(applyTransform(t("month"), type("timestamp"), ts)).toBe(47 * 12 + 10);
    expect(applyTransform(t("day"), type("timestamp"), ts)).toBe(parseDate("2017-11-16"));
    expect(applyTransform(t("hour"), type("timestamp"), ts)).toBe(parseDate("2017-11-16") * 24 + 22);
    expect(applyTransform(t("month"), type("date"), parseDate("2017-11-16"))).toBe(574);
    expect(applyTransform(t("day"), type("timestamp_ns"), ts * 1000n + 999n)).toBe(17486);
  });

  it("rounds toward the past before 1970", () => {
    const justBefore = -1n;
    for (const unit of ["year", "month", "day", "hour"])
      expect(applyTransform(t(unit), type("timestamptz"), justBefore)).toBe(-1);
    expect(applyTransform(t("year"), type("date"), parseDate("1969-01-01"))).toBe(-1);
    expect(applyTransform(t("month"), type("date"), parseDate("1969-12-01"))).toBe(-1);
  });

  it("gives null for null and for void", () => {
    expect(applyTransform(t("bucket[4]"), type("int"), null)).toBeNull();
    expect(applyTransform(t("void"), type("int"), 5)).toBeNull();
    expect(applyTransform(t("identity"), type("string"), "x")).toBe("x");
  });
});

describe("humanString gives the partition path values Iceberg writers use", () => {
  const ts = type("timestamptz");
  it("formats time transforms as ts_year=2021, ts_month=2021-01, ts_day=2021-01-01, ts_hour=2021-01-01-10", () => {
    const micros = parseTimestamp("2021-01-01T10:15:00Z", US);
    const human = (transform: string) =>
      humanString(t(transform), ts, applyTransform(t(transform), ts, micros));
    expect(human("year")).toBe("2021");
    expect(human("month")).toBe("2021-01");
    expect(human("day")).toBe("2021-01-01");
    expect(human("hour")).toBe("2021-01-01-10");
    expect(humanString(t("hour"), ts, -1)).toBe("1969-12-31-23");
    expect(humanString(t("month"), ts, -1)).toBe("1969-12");
  });

  it("formats buckets as integers, nulls as null, identity values as Java prints them", () => {
    expect(humanString(t("bucket[16]"), type("string"), 7)).toBe("7");
    expect(humanString(t("identity"), type("string"), null)).toBe("null");
    expect(humanString(t("identity"), type("timestamptz"), parseTimestamp("2023-05-15T14:30:45Z", US))).toBe(
      "2023-05-15T14:30:45Z",
    );
    expect(humanString(t("identity"), type("timestamp"), parseTimestamp("2023-05-15T14:30:00.5", US))).toBe(
      "2023-05-15T14:30:00.500",
    );
    expect(humanString(t("identity"), type("time"), parseTime("08:21:00", US))).toBe("08:21");
    expect(humanString(t("identity"), decimal(16, 11), { unscaled: 0n, scale: 11 })).toBe("0E-11");
    expect(humanString(t("identity"), decimal(16, 11), { unscaled: -12345678901n, scale: 11 })).toBe(
      "-0.12345678901",
    );
    expect(humanString(t("truncate[10]"), decimal(9, 2), { unscaled: 1050n, scale: 2 })).toBe("10.50");
    expect(humanString(t("identity"), type("float"), Math.fround(1.23))).toBe("1.23");
    expect(humanString(t("identity"), type("double"), 42)).toBe("42.0");
    expect(humanString(t("identity"), type("double"), 1e7)).toBe("1.0E7");
    expect(humanString(t("identity"), type("double"), 0.0001)).toBe("1.0E-4");
    expect(humanString(t("identity"), type("binary"), Buffer.from([1, 2, 3]))).toBe("AQID");
    expect(humanString(t("identity"), type("boolean"), false)).toBe("false");
  });
});
