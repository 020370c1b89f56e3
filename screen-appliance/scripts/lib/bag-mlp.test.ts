import { describe, expect, it } from "vitest";
import { averagedLogits, BagMlp } from "./bag-mlp.ts";

const logit = (p: number) => Math.log(p / (1 - p));

/** Two sigmoid members trained from different seeds on a small multi-label problem. */
function members(): BagMlp[] {
  const items = Array.from({ length: 24 }, (_, i) => ({
    rows: Int32Array.from([1 + (i % 3), 4 + (i % 4), 9 + (i % 2)]),
    scale: 1 / Math.sqrt(3),
    target: Float32Array.of(i % 3 === 0 ? 1 : 0, i % 4 === 1 ? 1 : 0),
  }));
  return [5, 6].map((seed) => {
    const model = new BagMlp(16, 4, 2, "sigmoid", seed);
    model.train(items, { epochs: 15, batchSize: 4, learningRate: 0.05, seed, featureDropout: 0.2 });
    return model;
  });
}

describe("averagedLogits", () => {
  it("gives, in one model, the mean of the members' logits for every input", () => {
    const trained = members();
    const merged = averagedLogits(trained);
    expect(merged.dims).toBe(8);
    for (const rows of [[1, 4, 9], [2, 7], [3, 5, 10, 12], [15]]) {
      const input = Int32Array.from(rows);
      const got = merged.forward(input, 0.5).probs;
      for (let c = 0; c < 2; c++) {
        const mean = trained.reduce((sum, m) => sum + logit(m.forward(input, 0.5).probs[c] ?? 0), 0) / 2;
        expect(logit(got[c] ?? 0)).toBeCloseTo(mean, 4);
      }
    }
  });

  it("refuses members of different shapes", () => {
    expect(() => averagedLogits([new BagMlp(16, 4, 2, "sigmoid"), new BagMlp(16, 8, 2, "sigmoid")])).toThrow(
      /differ/,
    );
    expect(() => averagedLogits([])).toThrow(/no members/);
  });
});
