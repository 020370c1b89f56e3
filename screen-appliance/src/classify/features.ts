/**
 * Features of the bias and toxicity classifiers: lowercased word unigrams and bigrams plus
 * character trigrams inside words (which survive the misspellings and elongations of social media
 * text), hashed into the model's table. The bag is scaled by 1/sqrt(count) so long and short
 * texts land in the same range.
 */
import { featureRow } from "../ml/hash.ts";

/** Texts longer than this many features are truncated; screening texts are mostly short. */
export const MAX_FEATURES = 4096;

export function textFeatures(text: string): string[] {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []).map((w) =>
    // Collapse runs of three or more letters ("soooo" -> "soo").
    w.replace(/(\p{L})\1{2,}/gu, "$1$1"),
  );
  const features: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    features.push(`u=${w}`);
    if (i + 1 < words.length) features.push(`b=${w}|${words[i + 1]}`);
    const padded = `<${w}>`;
    for (let j = 0; j + 3 <= padded.length; j++) features.push(`c=${padded.slice(j, j + 3)}`);
  }
  return features.slice(0, MAX_FEATURES);
}

// The bias and toxicity models score the same text one after the other; remember the last one.
let last: { text: string; buckets: number; bag: { rows: Int32Array; scale: number } } | undefined;

/** Rows of one text, and the bag scale. */
export function textRows(text: string, buckets: number): { rows: Int32Array; scale: number } {
  if (last && last.text === text && last.buckets === buckets) return last.bag;
  const features = textFeatures(text);
  const rows = Int32Array.from(features, (f) => featureRow(f, buckets));
  const bag = { rows, scale: 1 / Math.sqrt(Math.max(1, rows.length)) };
  last = { text, buckets, bag };
  return bag;
}
