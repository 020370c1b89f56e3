import { describe, expect, it } from "vitest";
import { averagedLogits, BagMlp, trainAveraged } from "./bag-mlp.ts";

const logit = (p: number) => Math.log(p / (1 - p));

const items = Array.from({ length: 24 }, (_, i) => ({
  rows: Int32Array.from([1 + (i % 3), 4 + (i % 4), 9 + (i % 2)]),
  scale: 1 / Math.sqrt(3),
  target: Float32Array.of(i % 3 === 0 ? 1 : 0, i % 4 === 1 ? 1 : 0),
}));
const options = { epochs: 15, batchSize: 4, learningRate: 0.05, featureDropout: 0.2 };

/** Two sigmoid members trained from different seeds on a small multi-label problem. */
function members(): BagMlp[] {
  return [5, 6].map((seed) => {
    const model = new BagMlp(16, 4, 2, "sigmoid", seed);
    model.train(items, { ...options, seed });
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

  it("trainAveraged trains members from consecutive seeds and merges them", () => {
    const create = (seed: number) => new BagMlp(16, 4, 2, "sigmoid", seed);
    const epochs: string[] = [];
    const merged = trainAveraged(2, create, items, {
      ...options,
      seed: 5,
      onEpoch: (member, epoch) => epochs.push(`${member}:${epoch}`),
    });
    const expected = averagedLogits(members());
    expect(merged.table).toEqual(expected.table);
    expect(merged.w2).toEqual(expected.w2);
    expect(epochs).toHaveLength(30);
    expect(epochs.slice(14, 16)).toEqual(["1:15", "2:1"]);
    const single = trainAveraged(1, create, items, { ...options, seed: 5 });
    expect(single.dims).toBe(4);
    expect(single.table).toEqual((members()[0] as BagMlp).table);
  });
});

describe("pretrained word rows", () => {
  // Four words in three dimensions: words 0 and 1 point the same way, 2 and 3 the other.
  const pretrained = {
    width: 3,
    vectors: Float32Array.of(1, 0, 0, 0.9, 0.1, 0, 0, 0, 1, 0, 0.1, 0.9),
  };
  const buckets = 8;
  const word = (i: number) => buckets + i;

  it("learns through the projection, so a word never trained on scores like the words it is near", () => {
    const model = new BagMlp(buckets, 4, 1, "sigmoid", 3, pretrained);
    // Only words 0 and 2 appear in training; 1 and 3 are their unseen neighbours.
    const training = Array.from({ length: 32 }, (_, i) => ({
      rows: Int32Array.from([1 + (i % 3), word(i % 2 === 0 ? 0 : 2)]),
      scale: 1 / Math.sqrt(2),
      target: Float32Array.of(i % 2 === 0 ? 1 : 0),
    }));
    model.train(training, { epochs: 40, batchSize: 4, learningRate: 0.05, seed: 3 });
    const score = (w: number) => model.forward(Int32Array.from([1, word(w)]), 1 / Math.sqrt(2)).probs[0] ?? 0;
    expect(score(1)).toBeGreaterThan(0.8);
    expect(score(3)).toBeLessThan(0.2);
  });

  it("bakes into a plain model whose table holds each word's projected row, with the same outputs", () => {
    const model = new BagMlp(buckets, 4, 2, "sigmoid", 4, pretrained);
    model.train(
      [
        { rows: Int32Array.from([1, word(0)]), scale: 1, target: Float32Array.of(1, 0) },
        { rows: Int32Array.from([2, word(3)]), scale: 1, target: Float32Array.of(0, 1) },
      ],
      { epochs: 10, batchSize: 2, learningRate: 0.05, seed: 4 },
    );
    const baked = model.bake();
    expect(baked.pretrained).toBeUndefined();
    expect(baked.buckets).toBe(buckets + 4);
    for (const rows of [[1, word(0)], [2, word(1), word(3)], [word(2)], [5]]) {
      const input = Int32Array.from(rows);
      const want = model.forward(input, 0.7).probs;
      const got = baked.forward(input, 0.7).probs;
      for (let c = 0; c < 2; c++) expect(got[c]).toBeCloseTo(want[c] ?? Number.NaN, 6);
    }
    // A model without pretrained vectors bakes to itself, and its training is unchanged by the option.
    const plain = new BagMlp(buckets, 4, 2, "sigmoid", 4);
    expect(plain.bake()).toBe(plain);
  });
});
