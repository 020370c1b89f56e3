/**
 * Pretrained word rows. A model trained with word vectors (scripts/lib/word-vectors.ts) holds, after
 * its hashed rows, one row per word of a vocabulary file: the word's pretrained vector mapped into
 * the model's hidden space by a projection learnt in training, baked into the table at export. A word
 * the training text never used still lands near the words it is used like (a first name near other
 * first names, a slur near its spelling variants), which the hashed rows cannot give.
 *
 * The file lists one word per line; word i is table row `offset + i` (the hashed rows come first).
 * A model may also read the words' clusters (scripts/lib/word-clusters.ts): a second file, one line
 * per word in the same order, `<fine> <coarse>`.
 */
import { readFile } from "node:fs/promises";

export interface WordVocabulary {
  /** Table row of the file's first word: the model's hashed row count. */
  readonly offset: number;
  readonly index: ReadonlyMap<string, number>;
  /** Each word's fine and coarse cluster, when the model reads them. */
  readonly clusters?: WordClusters;
}

export interface WordClusters {
  readonly fine: Uint16Array;
  readonly coarse: Uint16Array;
}

export function vocabularyOf(
  words: readonly string[],
  offset: number,
  clusters?: WordClusters,
): WordVocabulary {
  return { offset, index: new Map(words.map((w, i) => [w, i])), ...(clusters ? { clusters } : {}) };
}

export function parseClusters(text: string, words: number): WordClusters {
  const lines = text.split("\n").filter((l) => l.length > 0);
  if (lines.length !== words) throw new Error(`word clusters: ${lines.length} lines for ${words} words`);
  const fine = new Uint16Array(words);
  const coarse = new Uint16Array(words);
  lines.forEach((line, i) => {
    const [f, c] = line.split(" ").map(Number);
    if (!Number.isInteger(f) || !Number.isInteger(c))
      throw new Error(`word clusters: line ${i + 1} is "${line}"`);
    fine[i] = f as number;
    coarse[i] = c as number;
  });
  return { fine, coarse };
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

/** The fine and coarse cluster of `word` (lower case), or undefined without clusters or the word. */
export function wordCluster(
  vocabulary: WordVocabulary,
  word: string,
): { fine: number; coarse: number } | undefined {
  const i = vocabulary.index.get(word);
  const clusters = vocabulary.clusters;
  if (i === undefined || !clusters) return undefined;
  return { fine: clusters.fine[i] ?? 0, coarse: clusters.coarse[i] ?? 0 };
}
