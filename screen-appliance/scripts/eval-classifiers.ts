/**
 * The bias and toxicity half of `npm run eval:screen`: scores the held-out rows with the classifiers
 * in use (the shipped ONNX models, or mounted Hugging Face models when `SCREEN_BIAS_MODEL_DIR` /
 * `SCREEN_TOXICITY_MODEL_DIR` are set) and prints, per type, ROC AUC and precision/recall/F1 at the
 * MEDIUM level (score >= 0.4) and at the HIGH level (score >= 0.7).
 */
import type { ClassifierModelInfo } from "../src/app.ts";
import { describeMounted } from "../src/classify/mounted/load.ts";
import type { BatchTextScorer } from "../src/classify/text-scorer.ts";
import { type LabeledText, rocAuc } from "./lib/classifier-data.ts";

/** The model in one line: the built-in file, or the mounted directory and how it reads its labels. */
export function describeClassifier(info: ClassifierModelInfo): string {
  return info.source === "built-in" ? `built-in ${info.file}` : describeMounted(info);
}

/** `labels` are the task's types in the order of each row's `targets`. */
export async function evaluateClassifier(
  name: string,
  scorer: BatchTextScorer<string>,
  rows: LabeledText[],
  labels: readonly string[],
  model: string,
) {
  const test = rows.filter((r) => r.split === "test");
  const columns = labels.map((label) => scorer.types.indexOf(label));
  const scores: number[][] = labels.map(() => []);
  for (let i = 0; i < test.length; i += 64) {
    const batch = test.slice(i, i + 64);
    const probs = await scorer.scoreBatch(batch.map((r) => r.text));
    for (let b = 0; b < batch.length; b++) {
      columns.forEach((c, l) => {
        scores[l]?.push(probs[b * scorer.types.length + c] ?? 0);
      });
    }
  }
  console.log(`\n${name} (${model}): ${test.length} held-out rows`);
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
