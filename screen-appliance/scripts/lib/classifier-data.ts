/**
 * Labeled rows for the bias and toxicity classifiers, with a fixed held-out split (every fifth
 * row, index % 5 == 0) that training never sees and `npm run eval:screen` scores, and a
 * calibration split (index % 10 == 1) that training never sees either and that only fits the
 * calibration of the scores (scripts/lib/calibration.ts).
 *
 * Bias: CrowS-Pairs sentences (both sentences of a pair, kept in the same split) labeled by their
 * bias type; pairs about gender, religion, age and the other types are negatives, as are neutral
 * tweets from the Davidson set. Toxicity: Davidson tweets (hate speech -> HATE; offensive and
 * neither -> not HATE) and the Jigsaw sample (identity_hate -> HATE, threat -> PHYSICAL_SAFETY).
 * Both tasks also get everyday service sentences (the PII templates filled with fake people) as
 * negatives: tweets alone teach the models that any formal sentence is unusual. Last, the
 * training-only templates of lib/train-templates.ts: harmful statements of every type with benign
 * counter-examples about the same groups (their held-out predicates go to the calibration split).
 */
import { BIAS_TYPES, TOXICITY_TYPES } from "../../src/detect/types.ts";
import { readCsv, readTemplates, templateSplit } from "./datasets.ts";
import { PiiSentenceGenerator } from "./pii-generator.ts";
import { trainingTemplates } from "./train-templates.ts";

export interface LabeledText {
  text: string;
  /** One 0/1 per label of the task, in the task's label order. */
  targets: Float32Array;
  /** Training targets where they differ from `targets`: the share of annotators who chose each label. */
  soft?: Float32Array;
  split: "train" | "calibration" | "test";
  source: string;
}

const heldOut = (index: number): LabeledText["split"] =>
  index % 5 === 0 ? "test" : index % 10 === 1 ? "calibration" : "train";

/** Each predicate in each frame with two targets drawn at random (development split: better than one). */
const TARGETS_PER_FRAME = 2;

/** The training-only templated sentences of `types`, labelled in the task's label order. */
function templatedRows(types: readonly string[]): LabeledText[] {
  return types.flatMap((type) =>
    trainingTemplates(type as Parameters<typeof trainingTemplates>[0], TARGETS_PER_FRAME).map((t) => ({
      text: t.text,
      targets: Float32Array.from(types, (label) => (label === type && t.harmful ? 1 : 0)),
      split: t.split,
      // ":novel": predicate and frame both held out, the calibration rows most unlike training.
      source: `train-templates:${type}${t.novel ? ":novel" : ""}`,
    })),
  );
}

const CROWS_TO_BIAS: Record<string, (typeof BIAS_TYPES)[number]> = {
  "race-color": "RACE_ETHNICITY",
  nationality: "NATIONALITY_LOCATION",
  "physical-appearance": "APPEARANCE",
};

const SERVICE_SENTENCES = 3000;

/** Filled PII templates, none of them biased or toxic; held-out templates land in the test split. */
function serviceSentences(labels: number): LabeledText[] {
  const generator = new PiiSentenceGenerator(7);
  const templates = readTemplates()
    .map((text, index) => ({ text, index }))
    .filter((t) => t.text.trim());
  return Array.from({ length: SERVICE_SENTENCES }, (_, i) => {
    const template = templates[i % templates.length] as { text: string; index: number };
    return {
      text: generator.generate(template.text).text,
      targets: new Float32Array(labels),
      split: templateSplit(template.index) === "test" ? "test" : i % 5 === 1 ? "calibration" : "train",
      source: "pii-templates",
    };
  });
}

export function biasRows(): LabeledText[] {
  const rows: LabeledText[] = serviceSentences(BIAS_TYPES.length);
  readCsv("bias/crows_pairs_anonymized.csv").forEach((row, index) => {
    const label = CROWS_TO_BIAS[row.bias_type ?? ""];
    const targets = () => Float32Array.from(BIAS_TYPES, (t) => (t === label ? 1 : 0));
    for (const text of [row.sent_more, row.sent_less]) {
      if (text)
        rows.push({ text, targets: targets(), split: heldOut(index), source: `crows:${row.bias_type}` });
    }
  });
  readCsv("toxicity/davidson_labeled_data.csv")
    .filter((row) => row.class === "2")
    .slice(0, 2000)
    .forEach((row, index) => {
      rows.push({
        text: row.tweet ?? "",
        targets: new Float32Array(BIAS_TYPES.length),
        split: heldOut(index),
        source: "davidson:neither",
      });
    });
  rows.push(...templatedRows(BIAS_TYPES));
  return rows;
}

/**
 * Davidson's label is the majority of (mostly three) annotators, and 1,122 of its 1,430 hate-speech
 * tweets won 2 votes of 3 while about 3,500 tweets of the other classes got one hate vote: the
 * model learns HATE from the share of annotators who chose hate speech, which ranks better on
 * held-out rows than the majority label (development split ROC AUC about 0.85 -> 0.87); evaluation
 * and calibration keep the majority label.
 */
function hateShare(row: Record<string, string>): number {
  const votes = Number(row.hate_speech);
  const count = Number(row.count);
  return count > 0 && Number.isFinite(votes) ? Math.min(1, votes / count) : row.class === "0" ? 1 : 0;
}

export function toxicityRows(): LabeledText[] {
  const rows: LabeledText[] = serviceSentences(TOXICITY_TYPES.length);
  readCsv("toxicity/davidson_labeled_data.csv").forEach((row, index) => {
    rows.push({
      text: row.tweet ?? "",
      targets: Float32Array.from(TOXICITY_TYPES, (t) => (t === "HATE" && row.class === "0" ? 1 : 0)),
      soft: Float32Array.from(TOXICITY_TYPES, (t) => (t === "HATE" ? hateShare(row) : 0)),
      split: heldOut(index),
      source: `davidson:${row.class}`,
    });
  });
  readCsv("toxicity/jigsaw_sample_train.csv").forEach((row, index) => {
    rows.push({
      text: row.comment_text ?? "",
      targets: Float32Array.from(TOXICITY_TYPES, (t) =>
        t === "HATE" ? Number(row.identity_hate === "1") : Number(row.threat === "1"),
      ),
      split: heldOut(index),
      source: "jigsaw",
    });
  });
  rows.push(...templatedRows(TOXICITY_TYPES));
  return rows;
}

/** Area under the ROC curve: the chance a random positive outscores a random negative. */
export function rocAuc(scores: number[], labels: number[]): number {
  const pairs = scores.map((s, i) => ({ s, y: labels[i] ?? 0 })).sort((a, b) => a.s - b.s);
  const positives = pairs.filter((p) => p.y === 1).length;
  const negatives = pairs.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  let rankSum = 0;
  for (let i = 0; i < pairs.length; ) {
    let j = i;
    while (j < pairs.length && pairs[j]?.s === pairs[i]?.s) j++;
    const averageRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (pairs[k]?.y === 1) rankSum += averageRank;
    i = j;
  }
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}
