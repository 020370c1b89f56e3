/**
 * The built-in bias and toxicity models as shipped: every label carries a calibration, and the
 * scores the appliance reports are the raw ONNX outputs mapped through it (to 3 decimals: the
 * scorer runs texts in a batch, in float32, and ONNX Runtime's sigmoid resolves only about 3e-8 near
 * 0 and 1; the fit keeps its points 1e-3 apart in raw score, but the stretch from (0, 0) to the
 * first point, for texts the model is sure of, can still magnify that to about 1e-4).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { calibrate } from "../src/classify/calibration.ts";
import { textRows } from "../src/classify/features.ts";
import { OnnxTextScorer } from "../src/classify/text-scorer.ts";
import { readModelSpec } from "../src/ml/model-spec.ts";
import { openSession, runBagModel } from "../src/ml/session.ts";
import { readVocabulary } from "../src/ml/vocabulary.ts";

const MODELS = join(import.meta.dirname, "../models");
const TEXTS = [
  "Thanks for the quick delivery, the package arrived on Tuesday.",
  "I'm going to find you and hurt you badly.",
  "People from that country are all liars and thieves.",
];

describe.each(["bias", "toxicity"])("the built-in %s model", (name) => {
  it("has a monotone calibration for every label and reports calibrated scores", async () => {
    const spec = await readModelSpec(join(MODELS, `${name}.json`));
    const { session } = await openSession(join(MODELS, `${name}.onnx`), "cpu");
    for (const label of spec.labels) {
      const curve = spec.calibration?.[label];
      expect(curve, label).toBeDefined();
      if (!curve) continue;
      expect(curve.x.length).toBe(curve.y.length);
      expect(curve.x.length).toBeGreaterThan(1);
      for (let i = 1; i < curve.x.length; i++) {
        expect(curve.x[i]).toBeGreaterThanOrEqual(curve.x[i - 1] as number);
        expect(curve.y[i]).toBeGreaterThanOrEqual(curve.y[i - 1] as number);
      }
    }
    // The shipped models read pretrained word rows (src/ml/vocabulary.ts).
    expect(spec.words?.file).toBe("words.txt");
    const vocabulary = await readVocabulary(join(MODELS, spec.words?.file ?? ""), spec.buckets);
    expect(vocabulary.index.size).toBe(spec.words?.count);
    const scorer = new OnnxTextScorer(session, spec, vocabulary);
    const reported = await scorer.scoreBatch(TEXTS);
    for (const [t, text] of TEXTS.entries()) {
      const { rows, scale } = textRows(text, spec.buckets, vocabulary);
      const raw = await runBagModel(session, rows, Float32Array.of(scale), 1, rows.length);
      spec.labels.forEach((label, l) => {
        const curve = spec.calibration?.[label];
        if (!curve) return;
        expect(reported[t * spec.labels.length + l]).toBeCloseTo(calibrate(curve, raw[l] ?? 0), 3);
      });
    }
  });
});
