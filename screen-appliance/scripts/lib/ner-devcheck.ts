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
import { nameWords } from "./name-holdout.ts";
import { developmentSentences, type ScoredSentence, tuneThresholds } from "./ner-thresholds.ts";
import { add, type Counts, matchSpans, type Span, scores, trimSpan } from "./spans.ts";

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
const dev = developmentSentences(perTemplate);
const scored: ScoredSentence[] = [];
for (const sentence of dev) {
  const tokens = tokenize(sentence.text);
  scored.push({ sentence, tokens, probs: await probabilities(tokens, gazetteer) });
}
const best = tuneThresholds(scored, gazetteer, 0.9);

const recall = { listed: [0, 0], unlisted: [0, 0] };
const falseFindings = new Map<string, number>();
/** Exact-match errors by kind, with examples (predicted / gold). */
const errors = new Map<string, string[]>();
const error = (kind: string, example: string) => errors.set(kind, [...(errors.get(kind) ?? []), example]);
for (const { sentence, tokens, probs } of scored) {
  const spans = decodeNames(tokens, probs, best.threshold, best.continuation, gazetteer, best.unlisted);
  for (const [kind, example] of exactErrors(sentence.text, sentence.persons, spans)) error(kind, example);
  const found = spans.map((s) => sentence.text.slice(s.start, s.end));
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
console.log("exact-match errors by kind (predicted / gold):");
for (const [kind, examples] of [...errors].sort((x, y) => y[1].length - x[1].length))
  console.log(`  ${kind} ${examples.length}: ${examples.slice(0, 12).join(" | ")}`);

/**
 * The exact-match errors of one sentence: a prediction that overlaps no gold name ("false"), one
 * that overlaps a gold name with other boundaries ("longer", "shorter", "shifted"; "split" when
 * several predictions share one gold name, "merged" when one covers several), and a gold name no
 * prediction overlaps ("missed"). Boundaries are compared after the evaluation's trimming.
 */
function exactErrors(text: string, goldSpans: Span[], predicted: Span[]): [string, string][] {
  const gold = goldSpans.map((s) => trimSpan(text, s));
  const found = predicted.map((s) => trimSpan(text, s));
  const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;
  const same = (a: Span, b: Span) => a.start === b.start && a.end === b.end;
  const show = (s: Span) => JSON.stringify(text.slice(s.start, s.end));
  const out: [string, string][] = [];
  for (const p of found) {
    if (gold.some((g) => same(g, p))) continue;
    const hit = gold.filter((g) => overlaps(g, p));
    const g = hit[0];
    if (!g) out.push(["false", show(p)]);
    else if (hit.length > 1) out.push(["merged", `${show(p)} / ${hit.map(show).join(" + ")}`]);
    else if (found.filter((q) => overlaps(g, q)).length > 1) out.push(["split", `${show(p)} / ${show(g)}`]);
    else {
      const kind =
        p.start <= g.start && p.end >= g.end
          ? "longer"
          : p.start >= g.start && p.end <= g.end
            ? "shorter"
            : "shifted";
      out.push([kind, `${show(p)} / ${show(g)}`]);
    }
  }
  for (const g of gold) if (!found.some((p) => overlaps(g, p))) out.push(["missed", show(g)]);
  return out;
}
