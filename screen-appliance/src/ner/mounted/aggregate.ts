/**
 * Token predictions → PERSON_NAME findings. Tokens are grouped into words (a WordPiece `##` piece,
 * or a token that touches the previous one letter to letter, continues its word), and each word
 * takes the label with the highest probability averaged over its tokens, so a name is never cut
 * inside a word (Hugging Face's "average" aggregation). Person words then form entities by their
 * BIO/BIOES tags: B/S starts one, I/E (or a plain IO label) continues the one before. Names do not
 * span line breaks, and leading or trailing punctuation is not part of a name. An entity's score is
 * the mean over its words of the probability of any person label, the same quantity the built-in
 * model's P(B) + P(I) is, so both map onto likelihoods by `likelihoodOfName`.
 */
import type { Finding } from "../../detect/types.ts";
import { likelihoodOfName } from "../decode.ts";
import type { Label } from "./labels.ts";
import type { TokenSpan } from "./offsets.ts";

interface Word {
  start: number;
  end: number;
  label: Label;
  personProb: number;
  /** The word has a letter or digit (punctuation does not start or end a name). */
  letters: boolean;
}

// Scripts written without spaces: each of their tokens is a word of its own.
const UNSPACED = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

function joins(text: string, leftEnd: number, rightStart: number): boolean {
  const left = [...text.slice(Math.max(0, leftEnd - 2), leftEnd)].at(-1) ?? "";
  const right = String.fromCodePoint(text.codePointAt(rightStart) ?? 32);
  return WORD_CHAR.test(left) && WORD_CHAR.test(right) && !UNSPACED.test(left) && !UNSPACED.test(right);
}

/**
 * `probs` holds `labels.length` probabilities per token; `subword[i]` is true when token i is
 * marked as the continuation of a word by the tokenizer (WordPiece `##`).
 */
export function namesFromTokens(
  text: string,
  spans: readonly TokenSpan[],
  probs: Float32Array,
  labels: readonly Label[],
  subword: readonly boolean[],
): Finding[] {
  const words = wordsOf(text, spans, probs, labels, subword);
  const entities: Word[][] = [];
  let open: Word[] | undefined;
  for (const word of words) {
    const previous = open?.at(-1);
    const lineBreak = previous !== undefined && text.slice(previous.end, word.start).includes("\n");
    if (!word.label.person || lineBreak) open = undefined;
    if (!word.label.person) continue;
    const { position } = word.label;
    if (!open || position === "begin" || position === "single") {
      open = [];
      entities.push(open);
    }
    open.push(word);
    if (position === "single" || position === "end") open = undefined;
  }
  return entities.flatMap(toFinding);
}

function wordsOf(
  text: string,
  spans: readonly TokenSpan[],
  probs: Float32Array,
  labels: readonly Label[],
  subword: readonly boolean[],
): Word[] {
  const n = labels.length;
  const groups: { start: number; end: number; tokens: number[] }[] = [];
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i] as TokenSpan;
    if (span.end <= span.start) continue;
    const last = groups.at(-1);
    if (
      last &&
      (subword[i] || span.start < last.end || (span.start === last.end && joins(text, last.end, span.start)))
    ) {
      last.end = Math.max(last.end, span.end);
      last.tokens.push(i);
    } else {
      groups.push({ start: span.start, end: span.end, tokens: [i] });
    }
  }
  return groups.map(({ start, end, tokens }) => {
    const mean = new Float64Array(n);
    for (const t of tokens)
      for (let c = 0; c < n; c++) mean[c] = (mean[c] ?? 0) + (probs[t * n + c] ?? 0) / tokens.length;
    let best = 0;
    let personProb = 0;
    for (let c = 0; c < n; c++) {
      if ((mean[c] ?? 0) > (mean[best] ?? 0)) best = c;
      if (labels[c]?.person) personProb += mean[c] ?? 0;
    }
    return {
      start,
      end,
      label: labels[best] as Label,
      personProb,
      letters: WORD_CHAR.test(text.slice(start, end)),
    };
  });
}

function toFinding(entity: Word[]): Finding[] {
  let first = 0;
  let last = entity.length - 1;
  while (first <= last && !entity[first]?.letters) first++;
  while (last >= first && !entity[last]?.letters) last--;
  if (first > last) return [];
  const kept = entity.slice(first, last + 1);
  const score = kept.reduce((sum, w) => sum + w.personProb, 0) / kept.length;
  return [
    {
      type: "PERSON_NAME",
      likelihood: likelihoodOfName(score),
      start: (kept[0] as Word).start,
      end: (kept.at(-1) as Word).end,
    },
  ];
}
