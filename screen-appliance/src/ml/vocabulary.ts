/**
 * Pretrained word rows. A model trained with word vectors (scripts/lib/word-vectors.ts) holds, after
 * its hashed rows, one row per word of a vocabulary file: the word's pretrained vector mapped into
 * the model's hidden space by a projection learnt in training, baked into the table at export. A word
 * the training text never used still lands near the words it is used like (a first name near other
 * first names, a slur near its spelling variants), which the hashed rows cannot give.
 *
 * The file lists one word per line; word i is table row `offset + i` (the hashed rows come first).
 */
import { readFile } from "node:fs/promises";

export interface WordVocabulary {
  /** Table row of the file's first word: the model's hashed row count. */
  readonly offset: number;
  readonly index: ReadonlyMap<string, number>;
}

export function vocabularyOf(words: readonly string[], offset: number): WordVocabulary {
  return { offset, index: new Map(words.map((w, i) => [w, i])) };
}

export async function readVocabulary(path: string, offset: number): Promise<WordVocabulary> {
  const words = (await readFile(path, "utf8")).split("\n").filter((w) => w.length > 0);
  return vocabularyOf(words, offset);
}

/** The table row of `word` (lower case), or undefined when the vocabulary lacks it. */
export function wordRow(vocabulary: WordVocabulary, word: string): number | undefined {
  const i = vocabulary.index.get(word);
  return i === undefined ? undefined : vocabulary.offset + i;
}
