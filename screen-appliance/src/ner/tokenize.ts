/**
 * Word tokens for the name model: runs of letters and digits (with inner apostrophes and hyphens,
 * "O'Brien", "Jean-Luc"), every other non-space character on its own, and line breaks (names do not span lines).
 */

export interface Token {
  text: string;
  start: number;
  end: number;
}

// A possessive "'s" is its own token, so "Austin's" yields the name "Austin".
const TOKEN =
  /[\p{L}\p{M}\p{N}]+(?:(?:['’](?![sS](?![\p{L}\p{M}\p{N}]))|-)[\p{L}\p{M}\p{N}]+)*|['’][sS](?![\p{L}\p{M}\p{N}])|\n|\S/gu;

export function tokenize(text: string): Token[] {
  return [...text.matchAll(TOKEN)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));
}
