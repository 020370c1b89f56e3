/**
 * The bias and toxicity half of `npm run eval:screen`: scores the held-out rows with the shipped
 * ONNX classifiers and prints, per label, ROC AUC and precision/recall/F1 at the MEDIUM level
 * (score >= 0.4) and at the HIGH level (score >= 0.7).
 */
import type { OnnxTextScorer } from "../src/classify/text-scorer.ts";
import { type LabeledText, rocAuc } from "./lib/classifier-data.ts";

export async function evaluateClassifier(name: string, scorer: OnnxTextScorer<string>, rows: LabeledText[]) {
  const test = rows.filter((r) => r.split === "test");
  const labels = scorer.spec.labels;
  const scores: number[][] = labels.map(() => []);
  for (let i = 0; i < test.length; i += 64) {
    const batch = test.slice(i, i + 64);
    const probs = await scorer.scoreBatch(batch.map((r) => r.text));
    for (let b = 0; b < batch.length; b++) {
      for (let l = 0; l < labels.length; l++) scores[l]?.push(probs[b * labels.length + l] ?? 0);
    }
  }
  console.log(`\n${name}: ${test.length} held-out rows`);
  console.log(
    "label                  positives  ROC AUC | >=0.4: P      R      F1    | >=0.7: P      R      F1",
  );
  labels.forEach((label, l) => {
    const y = test.map((r) => r.targets[l] ?? 0);
    const s = scores[l] ?? [];
    const positives = y.filter((v) => v === 1).length;
    if (positives === 0) {
      const trained = rows.filter((r) => r.split === "train" && r.targets[l] === 1).length;
      console.log(
        `${label.padEnd(22)} ${"0".padStart(9)}  not measurable: no held-out positives (${trained} in training)`,
      );
      return;
    }
    const at = (threshold: number) => {
      let tp = 0;
      let fp = 0;
      s.forEach((v, i) => {
        if (v >= threshold) y[i] === 1 ? tp++ : fp++;
      });
      const precision = tp + fp ? tp / (tp + fp) : 0;
      const recall = positives ? tp / positives : 0;
      const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
      return `${fmt(precision)} ${fmt(recall)} ${fmt(f1)}`;
    };
    console.log(
      `${label.padEnd(22)} ${String(positives).padStart(9)}  ${fmt(rocAuc(s, y))} |   ${at(0.4)}  |   ${at(0.7)}`,
    );
  });
}

const fmt = (n: number) => (Number.isNaN(n) ? "   n/a" : n.toFixed(3).padStart(6));
