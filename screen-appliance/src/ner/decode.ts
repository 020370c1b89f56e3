/**
 * Turns per-token tag probabilities (O, B, I) into name spans with hysteresis: a name starts at a
 * token whose P(B) + P(I) reaches `threshold` and continues through following tokens that reach
 * the lower `continuation` threshold (the model is less sure of "Smith" in "John Smith" than of
 * "John"); both thresholds are tuned on development templates. A run of tokens is one name. The model
 * separates B from I poorly on unseen names, and two different names rarely touch, so B inside a
 * run does not split it. The period of an initial ("Jaroslava P. Sedláčková") bridges two name
 * tokens, and the period of a closing abbreviation ("Sr.") stays with it; other trailing
 * punctuation is not part of a name. With a gazetteer, a span the lexicon says is no name is
 * dropped (veto.ts), a word the lexicon knows as no name never joins a neighbouring name, a span
 * nothing supports needs the higher `unlisted` threshold, and a name repeated in the text is
 * found at each mention (support.ts).
 */
import type { Finding, Likelihood } from "../detect/types.ts";
import type { Gazetteer } from "./gazetteer.ts";
import { applySupport, type DecodedSpan } from "./support.ts";
import type { Token } from "./tokenize.ts";
import { isKnownNonName, lexiconVetoes } from "./veto.ts";

export const TAGS = ["O", "B-PERSON", "I-PERSON"] as const;

export function likelihoodOfName(p: number): Likelihood {
  if (p >= 0.9) return "LIKELIHOOD_TYPE_VERY_LIKELY";
  if (p >= 0.7) return "LIKELIHOOD_TYPE_LIKELY";
  return "LIKELIHOOD_TYPE_POSSIBLE";
}

export function decodeNames(
  tokens: readonly Token[],
  probs: Float32Array,
  threshold: number,
  continuation = threshold,
  gazetteer?: Gazetteer,
  unlisted = 0,
): Finding[] {
  const spans: DecodedSpan[] = [];
  let open: DecodedSpan | undefined;
  const nameProb = (i: number) => (probs[i * 3 + 1] ?? 0) + (probs[i * 3 + 2] ?? 0);
  for (let i = 0; i < tokens.length; i++) {
    let p = nameProb(i);
    const initialPeriod =
      open !== undefined &&
      tokens[i]?.text === "." &&
      /^\p{Lu}$/u.test(tokens[i - 1]?.text ?? "") &&
      nameProb(i + 1) >= continuation;
    if (initialPeriod) p = Math.max(p, threshold);
    if (p < (open ? continuation : threshold) || tokens[i]?.text === "\n") {
      open = undefined;
      continue;
    }
    if (open) {
      open.last = i;
      open.sum += p;
    } else {
      open = { first: i, last: i, sum: p };
      spans.push(open);
    }
  }
  let decoded = spans;
  if (gazetteer) {
    for (const span of spans) widenToNeighbours(tokens, span, gazetteer);
    decoded = applySupport(
      tokens,
      spans.filter((span) => !lexiconVetoes(tokens, span, gazetteer)),
      unlisted,
      gazetteer,
    );
  }
  const findings: Finding[] = [];
  for (const span of decoded) {
    let last = span.last;
    while (last >= span.first && !/[\p{L}\p{N}]/u.test(tokens[last]?.text ?? "")) last--;
    if (last < span.first) continue;
    const first = tokens[span.first] as Token;
    const end = (tokens[last] as Token).end;
    const period = tokens[last + 1];
    const abbreviation =
      gazetteer !== undefined &&
      last > span.first &&
      period?.text === "." &&
      period.start === end &&
      gazetteer.honorifics.has((tokens[last] as Token).text.toLowerCase());
    findings.push({
      type: "PERSON_NAME",
      likelihood: likelihoodOfName(span.sum / (span.last - span.first + 1)),
      start: first.start,
      end: abbreviation ? period.end : end,
    });
  }
  return findings;
}

const MAX_NAME_TOKENS = 4;
const CAPITALISED = /^\p{Lu}[\p{Ll}\p{M}]+(?:[-'’]\p{Lu}?[\p{Ll}\p{M}]+)*$/u;
/** A lower-case word (the name's side), and one of five or more letters (the neighbour's). */
const LOWER_CASE = /^\p{Ll}[\p{Ll}\p{M}]*(?:[-'’][\p{Ll}\p{M}]+)*$/u;
const LOWER_WORD = /^\p{Ll}[\p{Ll}\p{M}]{4,}(?:[-'’][\p{Ll}\p{M}]+)*$/u;

/**
 * The model often finds one word of a two-word name ("Toshimi" of "Toshimi Arata"). A neighbour
 * on the same line, separated by one space, capitalised, and not an honorific, a word that ends an
 * organisation's name or a known non-name, joins the name when it is no common English word
 * (surnames and many first names are too varied for any list; "Call Ana" stays apart because
 * "call" is a common word), or when the word before the pair is a listed first name ("John
 * Smith", "Janet Burns", "Crystal Murdock": common words that are names here). Next to a
 * lower-case name word, a lower-case neighbour of five or more letters that is in neither English
 * word list joins ("connie abramowitz", "toby rønning").
 */
function widenToNeighbours(
  tokens: readonly Token[],
  span: { first: number; last: number },
  gazetteer: Gazetteer,
): void {
  const lower = (t: Token | undefined) => t?.text.toLowerCase() ?? "";
  const joins = (left: Token | undefined, right: Token | undefined, candidate: Token | undefined) => {
    if (!left || !right || !candidate || right.start - left.end !== 1) return false;
    const c = lower(candidate);
    if (gazetteer.honorifics.has(c) || gazetteer.orgWords.has(c) || isKnownNonName(c, gazetteer))
      return false;
    const inName = candidate === left ? right : left;
    // In lower-case text a name's other word is lower case too ("connie abramowitz"); short
    // words ("asap", "tmrw") are left out, as chat abbreviations are no English word either.
    if (LOWER_CASE.test(inName.text) && LOWER_WORD.test(candidate.text))
      return !gazetteer.words.has(c) && !gazetteer.vocabulary.has(c);
    if (!CAPITALISED.test(candidate.text)) return false;
    // A common word joins after a listed first name ("John Smith") or as one before the name ("Crystal Murdock").
    return !gazetteer.words.has(c) || gazetteer.first.has(lower(left));
  };
  const size = () => span.last - span.first + 1;
  while (size() < MAX_NAME_TOKENS && joins(tokens[span.last], tokens[span.last + 1], tokens[span.last + 1])) {
    span.last += 1;
  }
  while (
    size() < MAX_NAME_TOKENS &&
    joins(tokens[span.first - 1], tokens[span.first], tokens[span.first - 1])
  ) {
    span.first -= 1;
  }
}
