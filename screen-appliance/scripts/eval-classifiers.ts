/**
 * The bias and toxicity half of `npm run eval:screen`: scores held-out data with the classifiers in
 * use (the shipped ONNX models, or mounted Hugging Face models when `SCREEN_BIAS_MODEL_DIR` /
 * `SCREEN_TOXICITY_MODEL_DIR` are set) and prints, per type:
 *
 * - the labelled set's sources (lib/eval-sets.ts: held-out dataset rows, plus templated rows where
 *   the dataset has too few positives), ROC AUC against its goal, and precision/recall/F1 at the
 *   MEDIUM (score >= 0.4) and HIGH (score >= 0.7) levels of `levelOf`;
 * - calibration: ECE of the reported score (10 equal-width bins; the built-in models' scores are
 *   already calibrated on their own calibration split) and each level's observed positive rate;
 * - contrast pairs (lib/contrast.ts): harmful sentences against benign twins a few words apart.
 *
 * Provenance is printed with the figures: dataset rows are the held-out fifth of each source;
 * templated rows and contrast pairs come from lib/harm-lexicon.ts, which training never reads
 * (lib/train-templates.test.ts checks that no training frame, predicate or sentence is shared).
 */
import type { ClassifierModelInfo } from "../src/app.ts";
import { describeMounted } from "../src/classify/mounted/load.ts";
import type { BatchTextScorer } from "../src/classify/text-scorer.ts";
import type { BiasType, ToxicityType } from "../src/detect/types.ts";
import { BOOTSTRAP_DRAWS, bootstrapInterval, formatInterval, type Interval } from "./lib/bootstrap.ts";
import { contrastResult, expectedCalibrationError, levelRates } from "./lib/calibration.ts";
import { type LabeledText, rocAuc } from "./lib/classifier-data.ts";
import { contrastPairs } from "./lib/contrast.ts";
import { type EvalRow, evaluationSet } from "./lib/eval-sets.ts";

type HarmType = BiasType | ToxicityType;

const AUC_GOAL: Partial<Record<HarmType, number>> = { HATE: 0.93, RACE_ETHNICITY: 0.93 };
const DEFAULT_AUC_GOAL = 0.85;
const ECE_GOAL = 0.05;
const PAIR_GOAL = 0.9;
const FLAGGED_GOAL = 0.8;

/** The model in one line: the built-in file, or the mounted directory and how it reads its labels. */
export function describeClassifier(info: ClassifierModelInfo): string {
  return info.source === "built-in" ? `built-in ${info.file}` : describeMounted(info);
}

/** One type's scores for each text, scored in batches of 64. */
async function scoresOf(scorer: BatchTextScorer<string>, type: string, texts: readonly string[]) {
  const column = scorer.types.indexOf(type);
  const scores: number[] = [];
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    const probs = await scorer.scoreBatch(batch);
    for (let b = 0; b < batch.length; b++) scores.push(probs[b * scorer.types.length + column] ?? 0);
  }
  return scores;
}

/** `labels` are the task's types in the order of each row's `targets`. */
export async function evaluateClassifier(
  name: string,
  scorer: BatchTextScorer<string>,
  rows: LabeledText[],
  labels: readonly HarmType[],
  model: string,
) {
  const measured = [];
  for (const [l, type] of labels.entries()) {
    const set = evaluationSet(type, rows, l);
    const scores = await scoresOf(
      scorer,
      type,
      set.map((r) => r.text),
    );
    const pairs = contrastPairs(type);
    const harmful = await scoresOf(
      scorer,
      type,
      pairs.map((p) => p.harmful),
    );
    const benign = await scoresOf(
      scorer,
      type,
      pairs.map((p) => p.benign),
    );
    measured.push({ type, set, scores, contrast: contrastResult(harmful, benign) });
  }

  console.log(`\n${name} (${model}): labelled held-out sets, rows training never used`);
  console.log(
    "provenance: dataset = held-out fifth of each source (row index % 5 == 0: CrowS-Pairs, Davidson, Jigsaw, held-out PII templates);\n" +
      "            templated = lib/harm-lexicon.ts frames x targets x predicates, written for the evaluation, added where a type has < 100 dataset positives;\n" +
      "            training reads neither (its own templates are lib/train-templates.ts; disjointness checked by lib/train-templates.test.ts)",
  );
  console.log("type                   source: positives/negatives (ROC AUC within the source)");
  for (const { type, set, scores } of measured) {
    const part = (source: EvalRow["source"]) => {
      const { positives, negatives, auc } = sourceAuc(set, scores, source);
      return `${source} ${positives}/${negatives}${positives + negatives ? ` (${fmt(auc).trim()})` : ""}`;
    };
    console.log(`${type.padEnd(22)} ${part("dataset")}; ${part("templated")}`);
  }
  // A mixed set can be separated by telling the sources apart (templated positives against tweet
  // negatives), so the goal is judged on the lowest of the whole set's AUC and each source's own.
  console.log(
    "type                   positives  AUC all (95% interval)  lowest (goal)           | >=0.4: P      R      F1    | >=0.7: P      R      F1",
  );
  for (const { type, set, scores } of measured) {
    const y = set.map((r) => r.label as number);
    const positives = y.filter((v) => v === 1).length;
    const auc = rocAuc(scores, y);
    const lowest = Math.min(
      auc,
      ...(["dataset", "templated"] as const)
        .map((source) => sourceAuc(set, scores, source).auc)
        .filter((a) => !Number.isNaN(a)),
    );
    const goal = AUC_GOAL[type] ?? DEFAULT_AUC_GOAL;
    const interval = aucInterval(scores, y);
    console.log(
      `${type.padEnd(22)} ${String(positives).padStart(9)}  ${fmt(auc)} (${formatInterval(interval)})   ${fmt(lowest)} (>=${goal.toFixed(2)} ${met(lowest >= goal)}) |   ${prf(scores, y, 0.4)}  |   ${prf(scores, y, 0.7)}`,
    );
  }
  console.log(
    `95% interval: percentile bootstrap of the whole set's AUC, rows drawn with replacement, ${BOOTSTRAP_DRAWS} draws`,
  );

  console.log(
    `\n${name} calibration: ECE of the reported score (10 equal-width bins), observed positive rate per level (LOW < 0.4 <= MEDIUM < 0.7 <= HIGH)`,
  );
  console.log(
    "type                   ECE (goal)            | LOW: rows  pos.rate | MEDIUM: rows  pos.rate | HIGH: rows  pos.rate",
  );
  for (const { type, set, scores } of measured) {
    const y = set.map((r) => r.label as number);
    const ece = expectedCalibrationError(scores, y);
    const levels = levelRates(scores, y)
      .map((r) => `${String(r.rows).padStart(r.level.length + 6)} ${fmt(r.positiveRate)}`)
      .join(" | ");
    console.log(
      `${type.padEnd(22)} ${fmt(ece)} (<=${ECE_GOAL.toFixed(2)} ${met(ece <= ECE_GOAL)}) |${levels}`,
    );
  }

  console.log(
    `\n${name} contrast pairs: harmful sentence vs benign twin a few words apart (lib/contrast.ts: harm-lexicon contrast frames, distinct from the labelled set's; never used in training)`,
  );
  console.log(
    "type                   pairs  harmful > twin (goal)  | harmful >= MEDIUM (goal) | twin >= MEDIUM",
  );
  for (const { type, contrast } of measured) {
    console.log(
      `${type.padEnd(22)} ${String(contrast.pairs).padStart(5)}  ${fmt(contrast.harmfulHigher)} (>=${PAIR_GOAL.toFixed(2)} ${met(contrast.harmfulHigher >= PAIR_GOAL)}) |  ${fmt(contrast.harmfulFlagged)} (>=${FLAGGED_GOAL.toFixed(2)} ${met(contrast.harmfulFlagged >= FLAGGED_GOAL)}) |  ${fmt(contrast.benignFlagged)}`,
    );
  }
}

/** The bootstrap interval of the ROC AUC of `scores` against `y`. */
function aucInterval(scores: readonly number[], y: readonly number[]): Interval {
  return bootstrapInterval(scores.length, (indices) =>
    rocAuc(
      Array.from(indices, (i) => scores[i] as number),
      Array.from(indices, (i) => y[i] as number),
    ),
  );
}

/** ROC AUC over the rows of one source; NaN when the source lacks either class. */
function sourceAuc(set: readonly EvalRow[], scores: readonly number[], source: EvalRow["source"]) {
  const idx = set.flatMap((r, i) => (r.source === source ? [i] : []));
  const y = idx.map((i) => set[i]?.label ?? 0);
  const positives = y.filter((v) => v === 1).length;
  const auc = rocAuc(
    idx.map((i) => scores[i] ?? 0),
    y,
  );
  return { positives, negatives: idx.length - positives, auc };
}

function prf(scores: readonly number[], y: readonly number[], threshold: number): string {
  const positives = y.filter((v) => v === 1).length;
  let tp = 0;
  let fp = 0;
  scores.forEach((v, i) => {
    if (v >= threshold) y[i] === 1 ? tp++ : fp++;
  });
  const precision = tp + fp ? tp / (tp + fp) : 0;
  const recall = positives ? tp / positives : 0;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return `${fmt(precision)} ${fmt(recall)} ${fmt(f1)}`;
}

const met = (ok: boolean) => (ok ? "met" : "NOT met");
const fmt = (n: number) => (Number.isNaN(n) ? "   n/a" : n.toFixed(3).padStart(6));
