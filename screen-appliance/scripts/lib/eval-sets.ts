/**
 * The labelled bias and toxicity evaluation set of one type, from two sources:
 *
 * - dataset: the held-out rows of lib/classifier-data.ts (every fifth row of each source; training
 *   reads only the rest), labelled for this type by the same mapping training uses;
 * - templated: frames x targets x predicates of lib/harm-lexicon.ts (harmful predicate -> positive,
 *   its benign twin -> negative), written for the evaluation and never used in training. Added only
 *   for types with fewer than MIN_DATASET_POSITIVES held-out positives, so types with enough real
 *   data are measured on real data alone.
 *
 * The frames here differ from the contrast set's (lib/contrast.ts); targets and predicates are shared.
 */
import type { LabeledText } from "./classifier-data.ts";
import { fill, HARM_LEXICON } from "./harm-lexicon.ts";

export const MIN_DATASET_POSITIVES = 100;

export interface EvalRow {
  text: string;
  label: 0 | 1;
  source: "dataset" | "templated";
}

/** Every frame x target x predicate: harmful predicates positive, benign twins negative. */
export function templatedRows(type: keyof typeof HARM_LEXICON): EvalRow[] {
  const { frames, targets, harmful, benign } = HARM_LEXICON[type];
  const rows: EvalRow[] = [];
  for (const frame of frames)
    for (const target of targets) {
      for (const p of harmful) rows.push({ text: fill(frame, target, p), label: 1, source: "templated" });
      for (const p of benign) rows.push({ text: fill(frame, target, p), label: 0, source: "templated" });
    }
  return rows;
}

/** `labelIndex` is the type's position in each row's `targets`; only held-out rows are taken. */
export function evaluationSet(
  type: keyof typeof HARM_LEXICON,
  rows: readonly LabeledText[],
  labelIndex: number,
): EvalRow[] {
  const dataset: EvalRow[] = rows
    .filter((r) => r.split === "test" && r.text.trim())
    .map((r) => ({ text: r.text, label: r.targets[labelIndex] === 1 ? 1 : 0, source: "dataset" }));
  const positives = dataset.filter((r) => r.label === 1).length;
  return positives >= MIN_DATASET_POSITIVES ? dataset : [...dataset, ...templatedRows(type)];
}
