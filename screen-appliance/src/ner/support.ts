/**
 * What supports a decoded name beyond the model's probability, and names repeated in the text.
 *
 * A span is supported when a word of it is in a first- or last-name list, when an honorific stands
 * before it, or when it is one word of a supported multi-word name found elsewhere in the same text
 * ("... directed by Maciej Borkowski and starring Borkowski"). An unsupported span ("Zoolander is a
 * 2017 film") is kept only when its mean probability reaches the `unlisted` threshold, tuned on
 * development names with the others.
 *
 * A repeated mention is found even where the model missed it: every capitalised word of a kept
 * multi-word name is a name wherever else it stands in the text, as one refers to a person by
 * the surname after naming them in full.
 */
import type { Gazetteer } from "./gazetteer.ts";
import type { Token } from "./tokenize.ts";
import { afterHonorific } from "./veto.ts";

export interface DecodedSpan {
  first: number;
  last: number;
  /** Sum of the tokens' name probabilities. */
  sum: number;
}

const WORD = /^\p{Lu}[\p{L}\p{M}'’-]+$/u;

const mean = (span: DecodedSpan) => span.sum / (span.last - span.first + 1);

function words(tokens: readonly Token[], span: DecodedSpan): string[] {
  return tokens
    .slice(span.first, span.last + 1)
    .map((t) => t.text)
    .filter((t) => /\p{L}/u.test(t));
}

export function applySupport(
  tokens: readonly Token[],
  spans: readonly DecodedSpan[],
  unlisted: number,
  gazetteer: Gazetteer,
): DecodedSpan[] {
  const listed = (span: DecodedSpan) =>
    words(tokens, span).some(
      (w) => gazetteer.first.has(w.toLowerCase()) || gazetteer.last.has(w.toLowerCase()),
    );
  const supportedAlone = (span: DecodedSpan) =>
    mean(span) >= unlisted || listed(span) || afterHonorific(tokens, span.first, gazetteer);
  const full = spans.filter((s) => words(tokens, s).length > 1 && supportedAlone(s));
  const repeated = new Map<string, number>();
  for (const span of full)
    for (const w of words(tokens, span))
      if (WORD.test(w) && !gazetteer.honorifics.has(w.toLowerCase())) repeated.set(w, mean(span));
  const kept = spans.filter(
    (s) => full.includes(s) || (words(tokens, s).length <= 1 && (supportedAlone(s) || isRepeated(tokens, s))),
  );
  function isRepeated(all: readonly Token[], span: DecodedSpan): boolean {
    const only = words(all, span);
    return only.length === 1 && repeated.has(only[0] as string);
  }
  const inside = new Set(
    kept.flatMap((s) => Array.from({ length: s.last - s.first + 1 }, (_, k) => s.first + k)),
  );
  const mentions: DecodedSpan[] = [];
  tokens.forEach((token, i) => {
    const p = repeated.get(token.text);
    if (p !== undefined && !inside.has(i)) mentions.push({ first: i, last: i, sum: p });
  });
  return [...kept, ...mentions].sort((a, b) => a.first - b.first);
}
