/**
 * Per-token features of the name model. Each token becomes a fixed number of hashed feature rows:
 * its own word, shape, prefixes and suffixes, membership in the gazetteer's lists (names, common
 * words, places, weekdays and months, organisations, nationality words, words that end an organisation's name), and the same cues for the two
 * tokens either side. A model trained with word vectors also reads, as one more row, the token's
 * pretrained word row (src/ml/vocabulary.ts): a name the training text never used still lands near
 * the names it did. The list is the model's contract: training and inference both call `tokenRows`,
 * and changing a feature means retraining.
 */
import { FNV1A_START, fnv1aUpdate, hashedRow } from "../ml/hash.ts";
import { type WordVocabulary, wordRow } from "../ml/vocabulary.ts";
import type { Gazetteer } from "./gazetteer.ts";
import type { Token } from "./tokenize.ts";

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

/** What the features read of one token, computed once per distinct token text. */
interface TokenCue {
  /** The word's identity in features ("<nl>" for a line break). */
  lower: string;
  /** The lowercased word itself, for its affixes. */
  word: string;
  shape: string;
  gaz: string;
  p2: string;
  p3: string;
  x2: string;
  x3: string;
  x4: string;
  len: string;
  /** "true" when the token ends a sentence or line, so the next token starts one. */
  breaks: string;
}

type CueField = keyof TokenCue;

/** The cue fields in the order of the arrays `tokenRows` reads (by index: faster than by name). */
const CUE_FIELDS: readonly CueField[] = [
  "lower",
  "word",
  "shape",
  "gaz",
  "p2",
  "p3",
  "x2",
  "x3",
  "x4",
  "len",
  "breaks",
];
const LOWER = CUE_FIELDS.indexOf("lower");
const WORD = CUE_FIELDS.indexOf("word");

const NONE: TokenCue = {
  lower: "<none>",
  word: "<none>",
  shape: "<none>",
  gaz: "-",
  p2: "<n",
  p3: "<no",
  x2: "e>",
  x3: "ne>",
  x4: "one>",
  len: "6",
  breaks: "true",
};

function cue(text: string, gazetteer: Gazetteer): TokenCue {
  const lower = text.toLowerCase();
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
  return {
    lower: text === "\n" ? "<nl>" : lower,
    word: lower,
    shape: shape(text),
    gaz,
    p2: lower.slice(0, 2),
    p3: lower.slice(0, 3),
    x2: lower.slice(-2),
    x3: lower.slice(-3),
    x4: lower.slice(-4),
    len: String(Math.min(lower.length, 12)),
    breaks: String(/[\n.!?:]/.test(text)),
  };
}

/**
 * The features of a token, in row order: each is its name and the cue fields it reads, a field of
 * the token at an offset from it. Its string is `name=part|part...` ("bias" alone has no parts).
 */
const FEATURES: readonly (readonly [
  name: string,
  parts: readonly (readonly [offset: number, field: CueField])[],
])[] = [
  ["bias", []],
  ["w", [[0, "lower"]]],
  ["s", [[0, "shape"]]],
  ["g", [[0, "gaz"]]],
  [
    "gs",
    [
      [0, "gaz"],
      [0, "shape"],
    ],
  ],
  ["p2", [[0, "p2"]]],
  ["p3", [[0, "p3"]]],
  ["x2", [[0, "x2"]]],
  ["x3", [[0, "x3"]]],
  ["x4", [[0, "x4"]]],
  ["len", [[0, "len"]]],
  // Whether the token starts a line or sentence, with its shape: capitals there say less.
  [
    "start",
    [
      [-1, "breaks"],
      [0, "shape"],
    ],
  ],
  ["w-1", [[-1, "lower"]]],
  ["w-2", [[-2, "lower"]]],
  ["w+1", [[1, "lower"]]],
  ["w+2", [[2, "lower"]]],
  ["s-1", [[-1, "shape"]]],
  ["s+1", [[1, "shape"]]],
  ["g-1", [[-1, "gaz"]]],
  ["g+1", [[1, "gaz"]]],
  ["g-2", [[-2, "gaz"]]],
  ["g+2", [[2, "gaz"]]],
  [
    "w-1w",
    [
      [-1, "lower"],
      [0, "lower"],
    ],
  ],
  [
    "ww+1",
    [
      [0, "lower"],
      [1, "lower"],
    ],
  ],
  [
    "w-2w-1",
    [
      [-2, "lower"],
      [-1, "lower"],
    ],
  ],
  [
    "w+1w+2",
    [
      [1, "lower"],
      [2, "lower"],
    ],
  ],
  [
    "s-1ss+1",
    [
      [-1, "shape"],
      [0, "shape"],
      [1, "shape"],
    ],
  ],
  [
    "g-1gg+1",
    [
      [-1, "gaz"],
      [0, "gaz"],
      [1, "gaz"],
    ],
  ],
  [
    "w-1s",
    [
      [-1, "lower"],
      [0, "shape"],
    ],
  ],
  [
    "sw+1",
    [
      [0, "shape"],
      [1, "lower"],
    ],
  ],
  [
    "g-1s",
    [
      [-1, "gaz"],
      [0, "shape"],
    ],
  ],
  [
    "gs+1",
    [
      [0, "shape"],
      [1, "gaz"],
    ],
  ],
];

/** Hashed feature rows per token: one per feature. */
const HASHED_PER_TOKEN = FEATURES.length;

/** Rows per token: the hashed features, then the pretrained word row (row 0 without one). */
export const FEATURES_PER_TOKEN = HASHED_PER_TOKEN + 1;

/** Each feature's hash state after `name=` (or after "bias"), so rows hash only the parts. */
const FEATURE_STATES = Int32Array.from(FEATURES, ([name, parts]) =>
  fnv1aUpdate(FNV1A_START, parts.length ? `${name}=` : name),
);
/** The features' parts flattened: feature k's are PART_OFFSET/PART_FIELD[PARTS_END[k-1]..PARTS_END[k]). */
const PART_OFFSET = Int32Array.from(FEATURES.flatMap(([, parts]) => parts.map(([offset]) => offset)));
const PART_FIELD = Int32Array.from(
  FEATURES.flatMap(([, parts]) => parts.map(([, field]) => CUE_FIELDS.indexOf(field))),
);
let partsSoFar = 0;
const PARTS_END = Int32Array.from(FEATURES, ([, parts]) => (partsSoFar += parts.length));
/** A token's cue fields in CUE_FIELDS order. */
type CueValues = readonly string[];
const valuesOf = (c: TokenCue): CueValues => CUE_FIELDS.map((field) => c[field]);
const NONE_VALUES = valuesOf(NONE);

// Cues of the token texts seen so far, per gazetteer: most texts repeat most of their words.
const CUE_CACHE_LIMIT = 100_000;
const cueCaches = new WeakMap<Gazetteer, Map<string, CueValues>>();

function cuesOf(tokens: readonly Token[], gazetteer: Gazetteer): CueValues[] {
  let cache = cueCaches.get(gazetteer);
  if (!cache) {
    cache = new Map();
    cueCaches.set(gazetteer, cache);
  }
  return tokens.map(({ text }) => {
    let values = cache.get(text);
    if (!values) {
      if (cache.size >= CUE_CACHE_LIMIT) cache.clear();
      values = valuesOf(cue(text, gazetteer));
      cache.set(text, values);
    }
    return values;
  });
}

/** Stands for a word's identity in the features of a token treated as never seen. */
export const UNSEEN_WORD = "\u0000unseen";

function hide(cues: CueValues[], unseen: ReadonlySet<number> | undefined): CueValues[] {
  if (!unseen) return cues;
  return cues.map((c, i) => (unseen.has(i) ? c.map((v, f) => (f === LOWER ? UNSEEN_WORD : v)) : c));
}

/**
 * The feature strings of token `i`, in row order: what `tokenRows` hashes. The words of `unseen`
 * read as UNSEEN_WORD, and a feature naming one is padding in `tokenRows`.
 */
export function tokenFeatures(
  tokens: readonly Token[],
  i: number,
  gazetteer: Gazetteer,
  unseen?: ReadonlySet<number>,
): string[] {
  if (!tokens[i]) return [];
  const cues = hide(cuesOf(tokens, gazetteer), unseen);
  const field = (offset: number, name: CueField) =>
    (cues[i + offset] ?? NONE_VALUES)[CUE_FIELDS.indexOf(name)];
  return FEATURES.map(([name, parts]) =>
    parts.length ? `${name}=${parts.map(([offset, f]) => field(offset, f)).join("|")}` : name,
  );
}

/**
 * The [tokens, FEATURES_PER_TOKEN] row matrix of a tokenised text, row-major: each feature string of
 * `tokenFeatures` hashed to its row, without building the strings (the hash runs over the parts).
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
  const plain = cuesOf(tokens, gazetteer);
  const cues = hide(plain, unseen);
  for (let i = 0; i < tokens.length; i++) {
    const base = i * FEATURES_PER_TOKEN;
    let from = 0;
    for (let k = 0; k < HASHED_PER_TOKEN; k++) {
      let h = FEATURE_STATES[k] as number;
      let hidden = false;
      const to = PARTS_END[k] as number;
      for (let j = from; j < to; j++) {
        const value = (cues[i + (PART_OFFSET[j] as number)] ?? NONE_VALUES)[
          PART_FIELD[j] as number
        ] as string;
        if (value === UNSEEN_WORD) hidden = true;
        if (j > from) h = fnv1aUpdate(h, "|");
        h = fnv1aUpdate(h, value);
      }
      from = to;
      rows[base + k] = hidden ? 0 : hashedRow(h >>> 0, buckets);
    }
    if (vocabulary) {
      const row = wordRow(vocabulary, (plain[i] as CueValues)[WORD] as string);
      if (row !== undefined) rows[base + HASHED_PER_TOKEN] = row;
    }
  }
  return rows;
}
