/**
 * Context words: a number next to "card" or "phone" is more likely what it looks like. Detectors
 * look a fixed window either side of a candidate, case-insensitively, on word boundaries.
 */

const WINDOW = 48;

/** True when one of `words` occurs within the window before (or after, if `after`) the span. */
export function hasContext(
  text: string,
  start: number,
  end: number,
  words: RegExp,
  { before = WINDOW, after = WINDOW }: { before?: number; after?: number } = {},
): boolean {
  const left = text.slice(Math.max(0, start - before), start);
  const right = text.slice(end, end + after);
  return words.test(left) || words.test(right);
}

/** Builds a case-insensitive whole-word pattern from a list of context words. */
export function contextWords(words: readonly string[]): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.join("|")})(?![\\p{L}\\p{N}])`, "iu");
}
