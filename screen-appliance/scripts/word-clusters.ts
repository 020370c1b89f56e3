/**
 * `npm run words:clusters -w screen-appliance`: writes models/word-clusters.txt, each word of
 * models/words.txt with its fine and coarse cluster (lib/word-clusters.ts). Deterministic; rerun when
 * the word list changes (lib/word-vectors.ts), then retrain the models that read the clusters.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterLines, wordClusters } from "./lib/word-clusters.ts";
import { loadWordVectors } from "./lib/word-vectors.ts";

const MODELS = process.env.WORDS_OUT ?? join(import.meta.dirname, "../models");
const started = Date.now();
const wordVectors = loadWordVectors();
const shipped = readFileSync(join(MODELS, "words.txt"), "utf8");
if (shipped !== `${wordVectors.words.join("\n")}\n`)
  throw new Error(`${MODELS}/words.txt is not the current word list: retrain the models first`);
writeFileSync(join(MODELS, "word-clusters.txt"), clusterLines(wordClusters(wordVectors)));
console.log(
  `wrote word-clusters.txt for ${wordVectors.words.length} words in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
