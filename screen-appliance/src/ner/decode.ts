/**
 * Turns per-token tag probabilities (O, B, I) into name spans with hysteresis: a name starts at a
 * token whose P(B) + P(I) reaches `threshold` and continues through following tokens that reach
 * the lower `continuation` threshold (the model is less sure of "Smith" in "John Smith" than of
 * "John"); both thresholds are tuned on development templates. A run of tokens is one name. The model
 * separates B from I poorly on unseen names, and two different names rarely touch, so B inside a
 * run does not split it. The period of an initial ("Jaroslava P. Sedláčková") bridges two name
 * tokens; other trailing punctuation is not part of a name. Lexicon veto (with a gazetteer): a
 * span made only of known places, weekdays, months, organisations or products that are not also
 * in a first- or last-name list, or a known multi-word place or organisation ("Costa Rica"), is dropped unless an honorific stands before it ("Mr. Denver"),
 * and such a word never joins a neighbouring name. So is a lone common word that opens a sentence
 * and is in no name list ("Spin costs went up").
 */
import type { Finding, Likelihood } from "../detect/types.ts";
import type { Gazetteer } from "./gazetteer.ts";
import type { Token } from "./tokenize.ts";

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
): Finding[] {
  const spans: { first: number; last: number; sum: number }[] = [];
  let open: { first: number; last: number; sum: number } | undefined;
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
  const findings: Finding[] = [];
  for (const span of spans) {
    if (gazetteer) widenToNeighbours(tokens, span, gazetteer);
    if (
      gazetteer &&
      !afterHonorific(tokens, span.first, gazetteer) &&
      onlyKnownNonNames(tokens, span, gazetteer)
    ) {
      continue;
    }
    let last = span.last;
    while (last >= span.first && !/[\p{L}\p{N}]/u.test(tokens[last]?.text ?? "")) last--;
    if (last < span.first) continue;
    const first = tokens[span.first] as Token;
    findings.push({
      type: "PERSON_NAME",
      likelihood: likelihoodOfName(span.sum / (span.last - span.first + 1)),
      start: first.start,
      end: (tokens[last] as Token).end,
    });
  }
  return findings;
}

const MAX_NAME_TOKENS = 4;
/** Strong name context that overrides the lexicon veto: an honorific before ("Mr. Denver", "Dr Lyon"). */
function afterHonorific(tokens: readonly Token[], first: number, gazetteer: Gazetteer): boolean {
  const before = tokens[first - 1]?.text === "." ? tokens[first - 2] : tokens[first - 1];
  return before !== undefined && gazetteer.honorifics.has(before.text.toLowerCase());
}

/** A place, weekday, month, organisation or product that no name list holds. */
export function isKnownNonName(word: string, gazetteer: Gazetteer): boolean {
  const w = word.toLowerCase();
  return (
    (gazetteer.places.has(w) || gazetteer.times.has(w) || gazetteer.organisations.has(w)) &&
    !gazetteer.first.has(w) &&
    !gazetteer.last.has(w)
  );
}

/** The span is a known place or organisation phrase ("Costa Rica"), or every word of it is a known non-name. */
function onlyKnownNonNames(
  tokens: readonly Token[],
  span: { first: number; last: number },
  gazetteer: Gazetteer,
) {
  if (loneSentenceStartWord(tokens, span, gazetteer)) return true;
  const phrase = tokens
    .slice(span.first, span.last + 1)
    .map((t) => t.text.toLowerCase())
    .join(" ");
  if (span.last > span.first && (gazetteer.places.has(phrase) || gazetteer.organisations.has(phrase)))
    return true;
  let words = 0;
  for (let i = span.first; i <= span.last; i++) {
    const text = tokens[i]?.text ?? "";
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    if (!isKnownNonName(text, gazetteer)) return false;
    words++;
  }
  return words > 0;
}

/**
 * One capitalised common word opening a sentence ("Spin costs went up") that no name list holds:
 * its capital comes from the sentence, not from a name.
 */
function loneSentenceStartWord(
  tokens: readonly Token[],
  span: { first: number; last: number },
  gazetteer: Gazetteer,
): boolean {
  const before = tokens[span.first - 1]?.text;
  if (span.first !== span.last || (before !== undefined && !/^[\n.!?:"“]$/u.test(before))) return false;
  const w = (tokens[span.first]?.text ?? "").toLowerCase();
  return (
    (gazetteer.words.has(w) || gazetteer.vocabulary.has(w)) &&
    !gazetteer.first.has(w) &&
    !gazetteer.last.has(w)
  );
}
const CAPITALISED = /^\p{Lu}[\p{Ll}\p{M}]+(?:[-'’]\p{Lu}?[\p{Ll}\p{M}]+)*$/u;

/**
 * The model often finds one word of a two-word name ("Toshimi" of "Toshimi Arata"). A neighbour
 * on the same line, separated by one space, capitalised and not a common English word, joins the
 * name (surnames and many first names are too varied for any list; "Call Ana" stays apart because
 * "call" is a common word).
 */
function widenToNeighbours(
  tokens: readonly Token[],
  span: { first: number; last: number },
  gazetteer: Gazetteer,
): void {
  const joins = (a: Token | undefined, b: Token | undefined, candidate: Token | undefined) =>
    a !== undefined &&
    b !== undefined &&
    candidate !== undefined &&
    b.start - a.end === 1 &&
    CAPITALISED.test(candidate.text) &&
    !gazetteer.words.has(candidate.text.toLowerCase()) &&
    !isKnownNonName(candidate.text, gazetteer);
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
