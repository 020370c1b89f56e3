/**
 * Development check of a name model folder (`npx tsx scripts/lib/ner-devcheck.ts <model dir>
 * [sentences per template]`, 160 by default as in train-ner): fills the development templates with
 * development names, tunes the thresholds on them as training does, and prints span P/R/F2, recall
 * on names in and not in the gazetteer's name lists, the same sentences lexicon-blind (every
 * development name word taken out of the first- and last-name lists, as if no lexicon held it: the
 * held-out records' names are half unlisted) and the most frequent false findings. Recipes are
 * compared with it; it reads no held-out record.
 */
import { join } from "node:path";
import { readModelSpec } from "../../src/ml/model-spec.ts";
import { openSession, runBagModel } from "../../src/ml/session.ts";
import { readVocabulary } from "../../src/ml/vocabulary.ts";
import { decodeNames } from "../../src/ner/decode.ts";
import { FEATURES_PER_TOKEN, tokenRows } from "../../src/ner/features.ts";
import { type Gazetteer, nameGazetteer } from "../../src/ner/gazetteer.ts";
import { type Token, tokenize } from "../../src/ner/tokenize.ts";
import { readTemplates, templateSplit } from "./datasets.ts";
import { NameHoldout, nameWords } from "./name-holdout.ts";
import { type ScoredSentence, tuneThresholds } from "./ner-thresholds.ts";
import { type LabeledSentence, PiiSentenceGenerator } from "./pii-generator.ts";
import { add, type Counts, matchSpans, scores } from "./spans.ts";

/** train-ner's seed; its development generator takes SEED + 1. */
const SEED = 20261122;
const dir = process.argv[2];
if (!dir) throw new Error("usage: ner-devcheck.ts <model dir> [sentences per template]");
const perTemplate = Number(process.argv[3] ?? 160);

const spec = await readModelSpec(join(dir, "person-ner.json"));
const vocabulary = spec.words ? await readVocabulary(join(dir, spec.words.file), spec.buckets) : undefined;
const { session } = await openSession(join(dir, "person-ner.onnx"), "cpu");
const probabilities = (tokens: Token[], gazetteer: Gazetteer) =>
  runBagModel(
    session,
    tokenRows(tokens, gazetteer, spec.buckets, undefined, vocabulary),
    new Float32Array(tokens.length).fill(1),
    tokens.length,
    FEATURES_PER_TOKEN,
  );

const gazetteer = nameGazetteer();
const generator = new PiiSentenceGenerator(SEED + 1, "dev", new NameHoldout());
const dev: LabeledSentence[] = [];
readTemplates().forEach((template, i) => {
  if (!template.trim() || templateSplit(i) !== "dev") return;
  for (let k = 0; k < perTemplate; k++) dev.push(generator.generate(template));
});
const scored: ScoredSentence[] = [];
for (const sentence of dev) {
  const tokens = tokenize(sentence.text);
  scored.push({ sentence, tokens, probs: await probabilities(tokens, gazetteer) });
}
const best = tuneThresholds(scored, gazetteer, 0.9);

const recall = { listed: [0, 0], unlisted: [0, 0] };
const falseFindings = new Map<string, number>();
for (const { sentence, tokens, probs } of scored) {
  const found = decodeNames(tokens, probs, best.threshold, best.continuation, gazetteer, best.unlisted).map(
    (s) => sentence.text.slice(s.start, s.end),
  );
  const gold = sentence.persons.map((s) => sentence.text.slice(s.start, s.end));
  for (const f of found) if (!gold.includes(f)) falseFindings.set(f, (falseFindings.get(f) ?? 0) + 1);
  for (const g of gold) {
    const listed = nameWords(g).some((w) => gazetteer.first.has(w) || gazetteer.last.has(w));
    const r = recall[listed ? "listed" : "unlisted"];
    r[1] = (r[1] ?? 0) + 1;
    if (found.includes(g)) r[0] = (r[0] ?? 0) + 1;
  }
}

const devWords = new Set(
  dev.flatMap((d) => d.persons.flatMap((p) => nameWords(d.text.slice(p.start, p.end)))),
);
const blind: Gazetteer = {
  ...gazetteer,
  first: new Set([...gazetteer.first].filter((w) => !devWords.has(w))),
  last: new Set([...gazetteer.last].filter((w) => !devWords.has(w))),
};
let blindCounts: Counts = { tp: 0, fp: 0, fn: 0 };
for (const { sentence, tokens } of scored) {
  const probs = await probabilities(tokens, blind);
  const found = decodeNames(tokens, probs, best.threshold, best.continuation, blind, best.unlisted);
  blindCounts = add(blindCounts, matchSpans(sentence.text, sentence.persons, found, true));
}

const f = (x: number) => x.toFixed(4);
const share = (r: number[]) => `${((r[0] ?? 0) / (r[1] || 1)).toFixed(3)} of ${r[1]}`;
const b = scores(blindCounts);
console.log(
  `${dev.length} development sentences, thresholds start ${best.threshold} continue ${best.continuation} ` +
    `unlisted ${best.unlisted}: P ${f(best.precision)} R ${f(best.recall)} F2 ${f(best.f2)}; recall of listed ` +
    `names ${share(recall.listed)}, unlisted ${share(recall.unlisted)}; lexicon-blind P ${f(b.precision)} ` +
    `R ${f(b.recall)} F2 ${f(b.f2)}`,
);
const top = [...falseFindings].sort((x, y) => y[1] - x[1]).slice(0, 40);
console.log(`false findings: ${top.map(([text, n]) => `${text} x${n}`).join(" | ")}`);
