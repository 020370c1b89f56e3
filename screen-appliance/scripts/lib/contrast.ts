/**
 * Contrast pairs for one bias or toxicity type: each harmful sentence with a benign twin built from
 * the same frame and target and the aligned benign predicate of lib/harm-lexicon.ts, so the two
 * differ in a few words. Written for the evaluation, never used in training; the frames are the
 * lexicon's `contrastFrames`, distinct from the labelled set's.
 */
import { fill, HARM_LEXICON } from "./harm-lexicon.ts";

export interface ContrastPair {
  harmful: string;
  benign: string;
}

export function contrastPairs(type: keyof typeof HARM_LEXICON): ContrastPair[] {
  const { contrastFrames, targets, harmful, benign } = HARM_LEXICON[type];
  const pairs: ContrastPair[] = [];
  for (const frame of contrastFrames)
    for (const target of targets)
      harmful.forEach((p, i) => {
        pairs.push({ harmful: fill(frame, target, p), benign: fill(frame, target, benign[i] ?? "") });
      });
  return pairs;
}
