/**
 * Picks the name decoder's thresholds (start, continuation, unlisted; see src/ner/decode.ts and
 * support.ts) on development sentences: the best span F2 among the combinations whose span
 * precision reaches a floor, or the best F2 overall when none does. Only development sentences
 * (development templates filled with development names) are ever passed here.
 */
import { decodeNames } from "../../src/ner/decode.ts";
import type { Gazetteer } from "../../src/ner/gazetteer.ts";
import type { Token } from "../../src/ner/tokenize.ts";
import { readTemplates, templateSplit } from "./datasets.ts";
import { NameHoldout } from "./name-holdout.ts";
import { type LabeledSentence, PiiSentenceGenerator } from "./pii-generator.ts";
import { add, type Counts, matchSpans, scores } from "./spans.ts";

/** The development sentences' seed: the same whatever seed trains the model, so recipes compare. */
const DEV_SEED = 20261123;

/**
 * The development sentences: each development template filled `perTemplate` times with
 * development names, in template order (what train-ner tunes on and ner-devcheck scores).
 */
export function developmentSentences(perTemplate: number, holdout = new NameHoldout()): LabeledSentence[] {
  const generator = new PiiSentenceGenerator(DEV_SEED, "dev", holdout);
  const dev: LabeledSentence[] = [];
  readTemplates().forEach((template, index) => {
    if (!template.trim() || templateSplit(index) !== "dev") return;
    for (let i = 0; i < perTemplate; i++) dev.push(generator.generate(template));
  });
  return dev;
}

export interface ScoredSentence {
  sentence: LabeledSentence;
  tokens: Token[];
  /** [tokens, 3] probabilities of O, B, I. */
  probs: Float32Array;
}

export interface ChosenThresholds {
  threshold: number;
  continuation: number;
  unlisted: number;
  precision: number;
  recall: number;
  f2: number;
}

const STARTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const CONTINUATIONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3];
/** 0: unsupported spans need no more than any other. */
const UNLISTED = [0, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999];

export function tuneThresholds(
  dev: readonly ScoredSentence[],
  gazetteer: Gazetteer,
  minPrecision: number,
): ChosenThresholds {
  const candidates: ChosenThresholds[] = [];
  for (const threshold of STARTS)
    for (const continuation of CONTINUATIONS.filter((c) => c <= threshold))
      for (const unlisted of UNLISTED) {
        let counts: Counts = { tp: 0, fp: 0, fn: 0 };
        for (const { sentence, tokens, probs } of dev) {
          const found = decodeNames(tokens, probs, threshold, continuation, gazetteer, unlisted);
          counts = add(counts, matchSpans(sentence.text, sentence.persons, found, true));
        }
        candidates.push({ threshold, continuation, unlisted, ...scores(counts) });
      }
  const floor = candidates.filter((c) => c.precision >= minPrecision);
  return (floor.length > 0 ? floor : candidates).reduce((a, b) => (b.f2 > a.f2 ? b : a));
}
