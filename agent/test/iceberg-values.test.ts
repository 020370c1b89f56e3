import { describe, expect, it } from "vitest";
import {
  decodeValue,
  encodeValue,
  formatDate,
  formatTimestamp,
  type IcebergValue,
  javaFloatString,
  type PrimitiveName,
  type PrimitiveType,
  parseDate,
  parseDecimal,
  parseJson,
  parseJsonValue,
  stringifyJson,
} from "../src/iceberg/index.ts";

const type = (name: PrimitiveName): PrimitiveType => ({ kind: "primitive", name });
const hex = (h: string) => Buffer.from(h, "hex");

describe("single-value binary serialization (bounds)", () => {
  it.each<[string, PrimitiveType, string, IcebergValue]>([
    ["boolean", type("boolean"), "01", true],
    ["int, little-endian", type("int"), "d2040000", 1234],
    ["long, little-endian", type("long"), "ffffffffffffff7f", 9223372036854775807n],
    ["float", type("float"), "0000803f", 1],
    ["double", type("double"), "000000000000f03f", 1],
    ["date as days", type("date"), "4e440000", 17486],
    ["timestamp as micros", type("timestamptz"), "00a0f7635c470600", 1767312000000000n],
    ["string as UTF-8", type("string"), "69636562657267", "iceberg"],
    [
      "uuid, big-endian",
      type("uuid"),
      "f79c3e09677c4bbda4793f349cb785e7",
      "f79c3e09-677c-4bbd-a479-3f349cb785e7",
    ],
    ["binary", type("binary"), "000102", hex("000102")],
    ["fixed", { kind: "fixed", length: 2 }, "abcd", hex("abcd")],
    [
      "decimal as big-endian unscaled",
      { kind: "decimal", precision: 4, scale: 2 },
      "058c",
      { unscaled: 1420n, scale: 2 },
    ],
    ["negative decimal", { kind: "decimal", precision: 9, scale: 2 }, "fa74", { unscaled: -1420n, scale: 2 }],
  ])("decodes and re-encodes %s", (_, t, bytes, value) => {
    expect(decodeValue(t, hex(bytes))).toEqual(value);
    expect(encodeValue(t, value).toString("hex")).toBe(bytes);
  });

  it("reads 4-byte bounds of a column promoted from int to long or float to double", () => {
    expect(decodeValue(type("long"), hex("d2040000"))).toBe(1234n);
    expect(decodeValue(type("double"), hex("0000803f"))).toBe(1);
  });

  it("refuses a bound too short for its type", () => {
    expect(() => decodeValue(type("long"), hex("01"))).toThrow("a long bound has 1 bytes");
  });
});

describe("JSON single-value serialization (defaults)", () => {
  it("reads dates, times, timestamps, decimals, uuids and hex bytes", () => {
    expect(parseJsonValue(type("date"), "2003-10-20")).toBe(parseDate("2003-10-20"));
    expect(parseJsonValue(type("time"), "00:00:00.012345")).toBe(12345n);
    expect(parseJsonValue(type("timestamp"), "1970-01-01T00:00:00.012345")).toBe(12345n);
    expect(parseJsonValue(type("timestamptz"), "1970-01-01T01:00:00.012345+01:00")).toBe(12345n);
    expect(parseJsonValue(type("timestamp_ns"), "1970-01-01T00:00:00.000000001")).toBe(1n);
    expect(parseJsonValue({ kind: "decimal", precision: 16, scale: 2 }, "12345.00")).toEqual({
      unscaled: 1234500n,
      scale: 2,
    });
    expect(parseJsonValue({ kind: "fixed", length: 5 }, "010203ff03")).toEqual(hex("010203ff03"));
    expect(parseJsonValue(type("uuid"), "F79C3E09-677C-4BBD-A479-3F349CB785E7")).toBe(
      "f79c3e09-677c-4bbd-a479-3f349cb785e7",
    );
  });

  it("parses decimal text at a scale and refuses more digits than the scale", () => {
    expect(parseDecimal("-0.5", 3)).toEqual({ unscaled: -500n, scale: 3 });
    expect(() => parseDecimal("1.234", 2)).toThrow("scale 2");
  });
});

describe("dates and floats as text", () => {
  it("formats day numbers and timestamps far from 1970 without Date", () => {
    expect(formatDate(0)).toBe("1970-01-01");
    expect(formatDate(-1)).toBe("1969-12-31");
    expect(formatDate(parseDate("2000-02-29"))).toBe("2000-02-29");
    expect(formatTimestamp(-1n, 1_000_000n)).toBe("1969-12-31T23:59:59.999999");
    expect(formatTimestamp(253402300799999999n, 1_000_000n)).toBe("9999-12-31T23:59:59.999999");
  });

  it("prints floats as Java does", () => {
    expect(javaFloatString(Math.fround(Math.PI), true)).toBe("3.1415927");
    expect(javaFloatString(Math.fround(Math.PI), false)).toBe("3.1415927410125732");
    expect(javaFloatString(-0, false)).toBe("-0.0");
    expect(javaFloatString(0.001, false)).toBe("0.001");
    expect(javaFloatString(123456.5, false)).toBe("123456.5");
    expect(javaFloatString(1.5e-10, false)).toBe("1.5E-10");
    expect(javaFloatString(Number.NaN, false)).toBe("NaN");
  });
});

describe("JSON with 64-bit ids", () => {
  it("keeps integers beyond 2^53 exact as bigint and writes them back unchanged", () => {
    const text =
      '{"current-snapshot-id":4468019210336628573,"n":1,"f":1.5,"big-float":1e+30,"s":"\\u00e9","a":[9223372036854775807,-9223372036854775808]}';
    const json = parseJson(text) as Record<string, unknown>;
    expect(json["current-snapshot-id"]).toBe(4468019210336628573n);
    expect(json.n).toBe(1);
    expect(json["big-float"]).toBe(1e30);
    expect(json.s).toBe("é");
    expect(json.a).toEqual([9223372036854775807n, -9223372036854775808n]);
    expect(parseJson(stringifyJson(json))).toEqual(json);
    expect(stringifyJson({ id: 4468019210336628573n }, 2)).toBe('{\n  "id": 4468019210336628573\n}');
  });

  it("keeps a key named __proto__ as data and refuses malformed JSON with the position", () => {
    expect(Object.keys(parseJson('{"__proto__": 1}') as object)).toEqual(["__proto__"]);
    expect(() => parseJson('{"a": 1,}')).toThrow(/not valid JSON: .*position 8/);
    expect(() => parseJson('{"a": 1} x')).toThrow(/not valid JSON: .*position 9/);
  });
});
