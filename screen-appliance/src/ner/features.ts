/**
 * Per-token features of the name model. Each token becomes a fixed number of hashed feature rows:
 * its own word, shape, prefixes and suffixes, membership in the gazetteer's lists (names, common
 * words, places, weekdays and months, organisations, nationality words, words that end an organisation's name), and the same cues for the two
 * tokens either side. A model trained with word vectors also reads, as one more row, the token's
 * pretrained word row (src/ml/vocabulary.ts): a name the training text never used still lands near
 * the names it did. The list is the model's contract: training and inference both call `tokenRows`,
 * and changing a feature means retraining.
 */
import { featureRow } from "../ml/hash.ts";
import { type WordVocabulary, wordRow } from "../ml/vocabulary.ts";
import type { Gazetteer } from "./gazetteer.ts";
import type { Token } from "./tokenize.ts";

/** Hashed feature rows per token; shorter feature lists are padded with row 0. */
const HASHED_PER_TOKEN = 32;

/** Rows per token: the hashed features, then the pretrained word row (row 0 without one). */
export const FEATURES_PER_TOKEN = HASHED_PER_TOKEN + 1;

/** "McDonald" -> "XxXx", "42" -> "d", "N." parts -> "X": runs of the same class collapse. */
export function shape(word: string): string {
  let out = "";
  let previous = "";
  for (const ch of word) {
    const code = ch.charCodeAt(0);
    // ASCII is decided by code range; only other scripts pay for Unicode property tests.
    const c =
      code >= 65 && code <= 90
        ? "X"
        : code >= 97 && code <= 122
          ? "x"
          : code >= 48 && code <= 57
            ? "d"
            : code < 128
              ? ch
              : /\p{Lu}/u.test(ch)
                ? "X"
                : /\p{Ll}/u.test(ch)
                  ? "x"
                  : /\p{N}/u.test(ch)
                    ? "d"
                    : ch;
    if (c !== previous) out += c;
    previous = c;
  }
  return out;
}

interface TokenCue {
  /** The word's identity in features ("<nl>" for a line break). */
  lower: string;
  /** The lowercased word itself, for its affixes. */
  word: string;
  shape: string;
  gaz: string;
}

const NONE: TokenCue = { lower: "<none>", word: "<none>", shape: "<none>", gaz: "-" };

function cue(token: Token | undefined, gazetteer: Gazetteer): TokenCue {
  if (!token) return NONE;
  const lower = token.text.toLowerCase();
  let gaz = "";
  if (gazetteer.first.has(lower)) gaz += "F";
  if (gazetteer.last.has(lower)) gaz += "L";
  if (gazetteer.words.has(lower)) gaz += "W";
  else if (gazetteer.vocabulary.has(lower)) gaz += "V";
  if (gazetteer.places.has(lower)) gaz += "C";
  if (gazetteer.times.has(lower)) gaz += "T";
  if (gazetteer.organisations.has(lower)) gaz += "O";
  if (gazetteer.demonyms.has(lower)) gaz += "D";
  if (gazetteer.orgWords.has(lower)) gaz += "K";
  gaz ||= "-";
  return { lower: token.text === "\n" ? "<nl>" : lower, word: lower, shape: shape(token.text), gaz };
}

/** The feature strings of token `i`; `cues` may hold the tokens' cues computed once for the text. */
export function tokenFeatures(
  tokens: readonly Token[],
  i: number,
  gazetteer: Gazetteer,
  cues: readonly TokenCue[] = tokens.map((t) => cue(t, gazetteer)),
): string[] {
  const here = tokens[i];
  if (!here) return [];
  const c = cues[i] ?? NONE;
  const p1 = cues[i - 1] ?? NONE;
  const p2 = cues[i - 2] ?? NONE;
  const n1 = cues[i + 1] ?? NONE;
  const n2 = cues[i + 2] ?? NONE;
  const w = c.lower;
  const a = c.word;
  const lineStart = !tokens[i - 1] || /[\n.!?:]/.test(tokens[i - 1]?.text ?? "");
  return [
    "bias",
    `w=${w}`,
    `s=${c.shape}`,
    `g=${c.gaz}`,
    `gs=${c.gaz}|${c.shape}`,
    `p2=${a.slice(0, 2)}`,
    `p3=${a.slice(0, 3)}`,
    `x2=${a.slice(-2)}`,
    `x3=${a.slice(-3)}`,
    `x4=${a.slice(-4)}`,
    `len=${Math.min(a.length, 12)}`,
    `start=${lineStart}|${c.shape}`,
    `w-1=${p1.lower}`,
    `w-2=${p2.lower}`,
    `w+1=${n1.lower}`,
    `w+2=${n2.lower}`,
    `s-1=${p1.shape}`,
    `s+1=${n1.shape}`,
    `g-1=${p1.gaz}`,
    `g+1=${n1.gaz}`,
    `g-2=${p2.gaz}`,
    `g+2=${n2.gaz}`,
    `w-1w=${p1.lower}|${w}`,
    `ww+1=${w}|${n1.lower}`,
    `w-2w-1=${p2.lower}|${p1.lower}`,
    `w+1w+2=${n1.lower}|${n2.lower}`,
    `s-1ss+1=${p1.shape}|${c.shape}|${n1.shape}`,
    `g-1gg+1=${p1.gaz}|${c.gaz}|${n1.gaz}`,
    `w-1s=${p1.lower}|${c.shape}`,
    `sw+1=${c.shape}|${n1.lower}`,
    `g-1s=${p1.gaz}|${c.shape}`,
    `gs+1=${c.shape}|${n1.gaz}`,
  ];
}

/** Stands for a word's identity in the features of a token treated as never seen. */
const UNSEEN = "\u0000unseen";

/**
 * The [tokens, FEATURES_PER_TOKEN] row matrix of a tokenised text, row-major.
 *
 * `unseen` (training only): token indices whose word is treated as one the model never saw.
 * Every feature built from that word's identity (its own `w=`, the pairs it is part of, the
 * neighbours' `w-1=`, `w+1=`, ...) becomes row 0, exactly as a word missing from the training text
 * adds nothing at inference; shape, affixes and lexicon flags stay. Marking tokens at random,
 * whatever their label, teaches the model to find names it has not memorised.
 *
 * `vocabulary`: each token whose lowercased word it lists also gets that word's pretrained row, the
 * last of its rows. An unseen token keeps it: a name the model never saw still has its pretrained
 * vector at inference, and that is what the model should learn to read.
 */
export function tokenRows(
  tokens: readonly Token[],
  gazetteer: Gazetteer,
  buckets: number,
  unseen?: ReadonlySet<number>,
  vocabulary?: WordVocabulary,
): Int32Array {
  const rows = new Int32Array(tokens.length * FEATURES_PER_TOKEN);
  const plain = tokens.map((t) => cue(t, gazetteer));
  const cues = unseen ? plain.map((c, i) => (unseen.has(i) ? { ...c, lower: UNSEEN } : c)) : plain;
  for (let i = 0; i < tokens.length; i++) {
    const features = tokenFeatures(tokens, i, gazetteer, cues);
    for (let k = 0; k < Math.min(features.length, HASHED_PER_TOKEN); k++) {
      const feature = features[k] as string;
      rows[i * FEATURES_PER_TOKEN + k] =
        unseen && feature.includes(UNSEEN) ? 0 : featureRow(feature, buckets);
    }
    if (vocabulary) {
      const row = wordRow(vocabulary, (plain[i] as TokenCue).word);
      if (row !== undefined) rows[i * FEATURES_PER_TOKEN + HASHED_PER_TOKEN] = row;
    }
  }
  return rows;
}
