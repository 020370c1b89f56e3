/**
 * Findings are reported with offsets in Unicode code points, so clients in any language (Python
 * slicing, Rust chars) agree on them; internally JavaScript works in UTF-16 code units.
 */

/** Converts ascending UTF-16 offsets to code point offsets in one pass over the text. */
export function toCodePointOffsets(text: string, utf16Offsets: readonly number[]): number[] {
  const order = utf16Offsets.map((offset, i) => ({ offset, i })).sort((a, b) => a.offset - b.offset);
  const result = new Array<number>(utf16Offsets.length);
  let unit = 0;
  let points = 0;
  for (const { offset, i } of order) {
    while (unit < offset) {
      const code = text.charCodeAt(unit);
      // A high surrogate followed by a low one is a single code point.
      unit += code >= 0xd800 && code <= 0xdbff && unit + 1 < text.length ? 2 : 1;
      points += 1;
    }
    result[i] = points;
  }
  return result;
}
