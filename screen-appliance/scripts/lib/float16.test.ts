import { describe, expect, it } from "vitest";
import { exactFloat16, float16Bits, fromFloat16Bits, roundToFloat16 } from "./float16.ts";

describe("float16", () => {
  it("encodes known values", () => {
    expect(float16Bits(1)).toBe(0x3c00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(0.5)).toBe(0x3800);
    expect(float16Bits(65504)).toBe(0x7bff);
    expect(float16Bits(2 ** -14)).toBe(0x0400); // smallest normal
    expect(float16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(float16Bits(0)).toBe(0);
    expect(float16Bits(-0)).toBe(0x8000);
  });

  it("rounds to nearest, ties to even", () => {
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // halfway between 1 and the next: even is 1
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway, the even neighbour is above
    expect(float16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // just over halfway
    expect(float16Bits(2 ** -25)).toBe(0); // halfway to the smallest subnormal: even is 0
    expect(float16Bits(3 * 2 ** -25)).toBe(0x0002);
    expect(float16Bits(2 ** -26)).toBe(0);
    expect(float16Bits(2 - 2 ** -12)).toBe(0x4000); // rounding carries into the exponent
  });

  it("refuses what float16 cannot hold", () => {
    expect(() => float16Bits(65520)).toThrow(/range/);
    expect(() => float16Bits(1e6)).toThrow(/range/);
    expect(() => float16Bits(Number.POSITIVE_INFINITY)).toThrow(/finite/);
    expect(() => float16Bits(Number.NaN)).toThrow(/finite/);
  });

  it("decodes every finite bit pattern back to itself", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      if ((bits & 0x7c00) === 0x7c00) continue; // infinities and NaNs
      expect(float16Bits(fromFloat16Bits(bits))).toBe(bits);
    }
  });

  it("rounds a table in place, and exports only rounded tables", () => {
    const table = Float32Array.from([0.1, -0.3333, 12.5]);
    expect(() => exactFloat16(table)).toThrow(/round the table first/);
    roundToFloat16(table);
    expect(table[0]).toBeCloseTo(0.1, 3);
    expect(table[2]).toBe(12.5);
    expect([...exactFloat16(table)].map(fromFloat16Bits)).toEqual([...table]);
  });
});
