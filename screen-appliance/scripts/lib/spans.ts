/** Span-level scoring shared by threshold tuning and `npm run eval:screen`. */

export interface Span {
  start: number;
  end: number;
}

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
}

/**
 * Matches predicted to gold spans one to one. `exact` requires identical boundaries after trimming
 * surrounding whitespace and punctuation; otherwise any character overlap counts.
 */
export function matchSpans(text: string, gold: Span[], predicted: Span[], exact: boolean): Counts {
  const g = gold.map((s) => trimSpan(text, s));
  const used = new Set<number>();
  let tp = 0;
  for (const p0 of predicted) {
    const p = trimSpan(text, p0);
    const hit = g.findIndex(
      (s, i) =>
        !used.has(i) && (exact ? s.start === p.start && s.end === p.end : s.start < p.end && p.start < s.end),
    );
    if (hit >= 0) {
      used.add(hit);
      tp++;
    }
  }
  return { tp, fp: predicted.length - tp, fn: gold.length - tp };
}

/** `span` without the whitespace and punctuation around it, as exact matching compares spans. */
export function trimSpan(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /[\s.,;:!?"'()]/u.test(text[start] ?? "")) start++;
  while (end > start && /[\s,;:!?"'()]/u.test(text[end - 1] ?? "")) end--;
  return { start, end };
}

export function scores({ tp, fp, fn }: Counts) {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f2 = precision + recall === 0 ? 0 : (5 * precision * recall) / (4 * precision + recall);
  return { precision, recall, f2 };
}

export function add(a: Counts, b: Counts): Counts {
  return { tp: a.tp + b.tp, fp: a.fp + b.fp, fn: a.fn + b.fn };
}
