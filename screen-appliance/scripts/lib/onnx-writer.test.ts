import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { runBagModel } from "../../src/ml/session.ts";
import { BagMlp } from "./bag-mlp.ts";
import { roundToFloat16 } from "./float16.ts";
import { toOnnx } from "./onnx-writer.ts";

async function exported(model: BagMlp, output: "softmax" | "sigmoid") {
  const dir = await mkdtemp(join(tmpdir(), "screen-onnx-"));
  const path = join(dir, "model.onnx");
  await writeFile(path, toOnnx(model, output, "test"));
  return ort.InferenceSession.create(path);
}

describe("ONNX export of the hashed bag MLP", () => {
  for (const output of ["softmax", "sigmoid"] as const) {
    it(`gives the same ${output} probabilities in onnxruntime-node as the TypeScript forward pass`, async () => {
      const model = new BagMlp(64, 8, 3, output, 7);
      // Train a little so the biases and weights are not at their initial values.
      model.train(
        [
          {
            rows: Int32Array.from([1, 2, 3]),
            scale: 1,
            target: output === "softmax" ? 1 : Float32Array.of(0, 1, 0),
          },
          {
            rows: Int32Array.from([4, 5, 0]),
            scale: 1,
            target: output === "softmax" ? 2 : Float32Array.of(1, 0, 1),
          },
        ],
        { epochs: 20, batchSize: 2, learningRate: 0.05, seed: 1 },
      );
      roundToFloat16(model.table);
      const session = await exported(model, output);
      const rows = Int32Array.from([1, 2, 3, 4, 5, 0, 7, 0, 0]);
      const scale = Float32Array.from([1, 1, 0.5]);
      const probs = await runBagModel(session, rows, scale, 3, 3);
      for (let item = 0; item < 3; item++) {
        const js = model.forward(rows.subarray(item * 3, item * 3 + 3), scale[item] ?? 1).probs;
        for (let c = 0; c < 3; c++) expect(probs[item * 3 + c]).toBeCloseTo(js[c] ?? Number.NaN, 5);
      }
    });
  }

  it("learns a separable toy problem", () => {
    const model = new BagMlp(32, 8, 2, "softmax", 3);
    const items = Array.from({ length: 40 }, (_, i) => ({
      rows: Int32Array.from([i % 2 === 0 ? 1 : 2, 3 + (i % 5)]),
      scale: 1,
      target: i % 2,
    }));
    model.train(items, { epochs: 30, batchSize: 8, learningRate: 0.05, seed: 2 });
    expect(model.forward(Int32Array.from([1, 4]), 1).probs[0]).toBeGreaterThan(0.9);
    expect(model.forward(Int32Array.from([2, 4]), 1).probs[1]).toBeGreaterThan(0.9);
  });
});
