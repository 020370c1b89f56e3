import { describe, expect, it } from "vitest";
import { bootstrapInterval } from "./bootstrap.ts";

const mean = (values: readonly number[]) => (indices: Int32Array) => {
  let sum = 0;
  for (const i of indices) sum += values[i] as number;
  return sum / indices.length;
};

describe("bootstrap interval", () => {
  it("gives a mean of 400 coin flips the normal approximation's width (about +-0.049)", () => {
    const flips = Array.from({ length: 400 }, (_, i) => i % 2);
    const { low, high } = bootstrapInterval(flips.length, mean(flips));
    expect(low).toBeLessThan(0.5);
    expect(high).toBeGreaterThan(0.5);
    expect(high - low).toBeGreaterThan(0.08);
    expect(high - low).toBeLessThan(0.115);
  });

  it("narrows with more units: four times the rows, half the width", () => {
    const small = Array.from({ length: 100 }, (_, i) => i % 2);
    const large = Array.from({ length: 1600 }, (_, i) => i % 2);
    const width = (values: number[]) => {
      const { low, high } = bootstrapInterval(values.length, mean(values));
      return high - low;
    };
    expect(width(large) / width(small)).toBeGreaterThan(0.18);
    expect(width(large) / width(small)).toBeLessThan(0.32);
  });

  it("has no width when every unit is the same, and is the same on every run", () => {
    const same = new Array(50).fill(0.5);
    expect(bootstrapInterval(same.length, mean(same))).toEqual({ low: 0.5, high: 0.5 });
    const values = Array.from({ length: 60 }, (_, i) => (i * 7) % 11);
    expect(bootstrapInterval(values.length, mean(values))).toEqual(
      bootstrapInterval(values.length, mean(values)),
    );
  });

  it("leaves out draws where the statistic is undefined, and says n/a when all are", () => {
    let calls = 0;
    const interval = bootstrapInterval(10, () => (calls++ % 2 === 0 ? Number.NaN : 1), { draws: 20 });
    expect(interval).toEqual({ low: 1, high: 1 });
    expect(bootstrapInterval(10, () => Number.NaN).low).toBeNaN();
    expect(bootstrapInterval(0, () => 1).low).toBeNaN();
  });
});
