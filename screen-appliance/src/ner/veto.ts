/**
 * The lexicon veto of name decoding: spans the model found that the gazetteer says are no name.
 * Each rule is a class of false finding, decided from lexicons, never from a list of words:
 *
 * - every word of the span is a known place, weekday, month, organisation or product that no
 *   name list holds, or a nationality word ("Friday", "Gdańsk", "Swedish"), or the span is a known
 *   multi-word place or organisation ("Costa Rica") or part of one with the words beside it on its
 *   line ("Martin" of "Saint Martin");
 * - one capitalised common word that opens a sentence and is in no name list ("Spin costs went up");
 * - one lower-case word that is an English word ("the riff and ..."): without a capital there is
 *   no evidence of a name beyond the context;
 * - a word after the span's first, or one of up to three words that follow it on the same line
 *   (all capitalised, or all lower case), ends an organisation's name ("Rand Corporation", "UPTON
 *   SCUDAMORE Country Club").
 *
 * An honorific before the span ("Mr. Denver", "Dr Lyon") overrides every rule.
 */
import type { Gazetteer } from "./gazetteer.ts";
import type { Token } from "./tokenize.ts";

interface Span {
  first: number;
  last: number;
}

export function lexiconVetoes(tokens: readonly Token[], span: Span, gazetteer: Gazetteer): boolean {
  if (afterHonorific(tokens, span.first, gazetteer)) return false;
  return (
    onlyKnownNonNames(tokens, span, gazetteer) ||
    loneSentenceStartWord(tokens, span, gazetteer) ||
    loneLowerCaseWord(tokens, span, gazetteer) ||
    organisationFollows(tokens, span, gazetteer)
  );
}

/** Strong name context that overrides the lexicon veto: an honorific before ("Mr. Denver", "Dr Lyon"). */
export function afterHonorific(tokens: readonly Token[], first: number, gazetteer: Gazetteer): boolean {
  const before = tokens[first - 1]?.text === "." ? tokens[first - 2] : tokens[first - 1];
  return before !== undefined && gazetteer.honorifics.has(before.text.toLowerCase());
}

/**
 * A place, weekday, month, organisation or product that no name list holds, or a nationality word
 * ("Swedish", "Iraqi"; also "English", which is a surname too: alone it is the adjective).
 */
export function isKnownNonName(word: string, gazetteer: Gazetteer): boolean {
  const w = word.toLowerCase();
  if (gazetteer.demonyms.has(w)) return true;
  return (
    (gazetteer.places.has(w) || gazetteer.times.has(w) || gazetteer.organisations.has(w)) &&
    !gazetteer.first.has(w) &&
    !gazetteer.last.has(w)
  );
}

/** Tokens a known phrase may reach beyond each end of a span ("Bonaire, Sint Eustatius and Saba"). */
const MAX_PHRASE_REACH = 3;

/**
 * The span is a known place or organisation phrase ("Costa Rica"), or lies inside one on its line
 * ("Martin" of "Saint Martin", "Wallis" of "Wallis and Futuna"), or every word of it is a known
 * non-name.
 */
function onlyKnownNonNames(tokens: readonly Token[], span: Span, gazetteer: Gazetteer): boolean {
  const phrase = (from: number, to: number) =>
    tokens
      .slice(from, to + 1)
      .map((t) => t.text.toLowerCase())
      .join(" ");
  const known = (p: string) => gazetteer.places.has(p) || gazetteer.organisations.has(p);
  // The span itself, then the phrases reaching beyond it on its line; one word alone is no phrase.
  for (let from = span.first; from >= Math.max(0, span.first - MAX_PHRASE_REACH); from--) {
    if (from < span.first && tokens[from]?.text === "\n") break;
    for (let to = span.last; to <= Math.min(tokens.length - 1, span.last + MAX_PHRASE_REACH); to++) {
      if (to > span.last && tokens[to]?.text === "\n") break;
      if (to > from && known(phrase(from, to))) return true;
    }
  }
  let words = 0;
  for (let i = span.first; i <= span.last; i++) {
    const text = tokens[i]?.text ?? "";
    if (!/[\p{L}\p{N}]/u.test(text)) continue;
    if (!isKnownNonName(text, gazetteer)) return false;
    words++;
  }
  return words > 0;
}

const isCommonWord = (w: string, gazetteer: Gazetteer) =>
  gazetteer.words.has(w) || gazetteer.vocabulary.has(w);

/**
 * One capitalised common word opening a sentence ("Spin costs went up") that no name list holds:
 * its capital comes from the sentence, not from a name.
 */
function loneSentenceStartWord(tokens: readonly Token[], span: Span, gazetteer: Gazetteer): boolean {
  const before = tokens[span.first - 1]?.text;
  if (span.first !== span.last || (before !== undefined && !/^[\n.!?:"“]$/u.test(before))) return false;
  const w = (tokens[span.first]?.text ?? "").toLowerCase();
  return isCommonWord(w, gazetteer) && !gazetteer.first.has(w) && !gazetteer.last.has(w);
}

/** One lower-case English word, whatever the name lists say ("riff" is also a first name). */
function loneLowerCaseWord(tokens: readonly Token[], span: Span, gazetteer: Gazetteer): boolean {
  const text = tokens[span.first]?.text ?? "";
  return span.first === span.last && text === text.toLowerCase() && isCommonWord(text, gazetteer);
}

const MAX_ORGANISATION_TAIL = 3;

/**
 * A word of the span after its first, or one of up to three words after the span on the same line
 * and capitalised as the span's last word is (capitalised or upper case, or lower case), ends an
 * organisation's name.
 */
function organisationFollows(tokens: readonly Token[], span: Span, gazetteer: Gazetteer): boolean {
  const caseOf = (t: string) =>
    /^\p{Lu}/u.test(t) ? "capitalised" : t === t.toLowerCase() ? "lower" : "mixed";
  for (let i = span.first + 1; i <= span.last; i++)
    if (gazetteer.orgWords.has(tokens[i]?.text.toLowerCase() ?? "")) return true;
  const wanted = caseOf(tokens[span.last]?.text ?? "");
  for (let i = span.last + 1; i <= span.last + MAX_ORGANISATION_TAIL; i++) {
    const token = tokens[i];
    const previous = tokens[i - 1];
    if (!token || !previous || token.start - previous.end !== 1 || !/^\p{L}/u.test(token.text)) return false;
    if (caseOf(token.text) !== wanted) return false;
    if (gazetteer.orgWords.has(token.text.toLowerCase())) return true;
  }
  return false;
}
