import { describe, expect, it } from "vitest";
import { calibrate, RAW_SHARE } from "../../src/classify/calibration.ts";
import { contrastResult, expectedCalibrationError, fitIsotonic, levelRates } from "./calibration.ts";

describe("expected calibration error", () => {
  it("is zero when every bin's mean score equals its positive rate", () => {
    // Bin [0.2, 0.3): mean 0.25, one positive in four; bin [0.7, 0.8): mean 0.75, three in four.
    const scores = [0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75];
    const labels = [1, 0, 0, 0, 1, 1, 1, 0];
    expect(expectedCalibrationError(scores, labels)).toBeCloseTo(0, 12);
  });

  it("weights each bin's gap by its share of the rows", () => {
    // Bin 9: 3 rows, mean 0.9, rate 1/3 -> gap 0.5667; bin 0: 1 row, mean 0.05, rate 0 -> gap 0.05.
    const scores = [0.9, 0.9, 0.9, 0.05];
    const labels = [1, 0, 0, 0];
    expect(expectedCalibrationError(scores, labels)).toBeCloseTo(
      (3 / 4) * (0.9 - 1 / 3) + (1 / 4) * 0.05,
      12,
    );
  });

  it("puts a score of exactly 1 in the last bin and is NaN without rows", () => {
    expect(expectedCalibrationError([1, 1], [1, 1])).toBeCloseTo(0, 12);
    expect(expectedCalibrationError([], [])).toBeNaN();
  });
});

describe("level rates", () => {
  it("groups rows by the reported level and gives each level's positive rate", () => {
    const rates = levelRates([0.1, 0.39, 0.4, 0.69, 0.7, 0.95], [0, 1, 1, 0, 1, 1]);
    expect(rates).toEqual([
      { level: "LOW", rows: 2, positives: 1, positiveRate: 0.5 },
      { level: "MEDIUM", rows: 2, positives: 1, positiveRate: 0.5 },
      { level: "HIGH", rows: 2, positives: 2, positiveRate: 1 },
    ]);
  });
});

describe("contrast pairs", () => {
  it("counts a pair only when the harmful sentence scores strictly above its twin", () => {
    const result = contrastResult([0.9, 0.5, 0.3, 0.2], [0.1, 0.5, 0.6, 0.45]);
    expect(result.pairs).toBe(4);
    expect(result.harmfulHigher).toBe(0.25);
    expect(result.harmfulFlagged).toBe(0.5);
    expect(result.benignFlagged).toBe(0.75);
  });

  it("reports NaN shares for an empty set", () => {
    expect(contrastResult([], []).harmfulHigher).toBeNaN();
  });
});

describe("isotonic calibration", () => {
  it("maps raw scores to observed positive rates, non-decreasing, and cuts the calibration error", () => {
    // A model that is overconfident: raw 0.9 is right half the time, raw 0.1 one time in ten.
    const scores: number[] = [];
    const labels: number[] = [];
    for (let i = 0; i < 200; i++) {
      scores.push(0.9, 0.1);
      labels.push(i % 2, i % 10 === 0 ? 1 : 0);
    }
    const curve = fitIsotonic(scores, labels, 40);
    for (let i = 1; i < curve.y.length; i++) {
      expect(curve.y[i]).toBeGreaterThan(curve.y[i - 1] as number);
      expect(curve.x[i]).toBeGreaterThanOrEqual(curve.x[i - 1] as number);
    }
    expect(calibrate(curve, 0.9)).toBeCloseTo(0.5, 2);
    expect(calibrate(curve, 0.1)).toBeCloseTo(0.1, 2);
    const calibrated = scores.map((s) => calibrate(curve, s));
    expect(expectedCalibrationError(calibrated, labels)).toBeLessThan(0.01);
    expect(expectedCalibrationError(scores, labels)).toBeGreaterThan(0.2);
  });

  it("pools runs whose positive rates go down", () => {
    // Runs of 2 at raw 0.2, 0.4, 0.6: rates 0.5, 0, 1 -> the first two pool to 0.25.
    const curve = fitIsotonic([0.2, 0.2, 0.4, 0.4, 0.6, 0.6], [1, 0, 0, 0, 1, 1], 2);
    expect(curve.x).toEqual([0.30000000000000004, 0.6]);
    expect(curve.y).toEqual([0.25, 1]);
  });
});

describe("applying a calibration", () => {
  const curve = { x: [0.2, 0.5, 0.8], y: [0.1, 0.1, 0.9] };

  it("interpolates between points and runs to (0, 0) and (1, 1) outside them", () => {
    expect(calibrate(curve, 0.65)).toBeCloseTo(0.5, 2);
    expect(calibrate(curve, 0.1)).toBeCloseTo(0.05, 2);
    expect(calibrate(curve, 0.9)).toBeCloseTo(0.95, 2);
    expect(calibrate(curve, 0)).toBe(0);
    expect(calibrate(curve, 1)).toBe(1);
  });

  it("keeps two different raw scores apart even where the map is flat", () => {
    expect(calibrate(curve, 0.3)).toBeLessThan(calibrate(curve, 0.4));
    expect(calibrate(curve, 0.4) - calibrate(curve, 0.3)).toBeLessThan(RAW_SHARE);
  });
});
