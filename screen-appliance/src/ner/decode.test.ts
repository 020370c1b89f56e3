import { describe, expect, it } from "vitest";
import { decodeNames } from "./decode.ts";
import { nameGazetteer } from "./gazetteer.ts";
import { tokenize } from "./tokenize.ts";

/** Builds O/B/I probabilities from a name probability per token (split evenly between B and I). */
function probs(values: number[]): Float32Array {
  return Float32Array.from(values.flatMap((p) => [1 - p, p / 2, p / 2]));
}

function names(
  text: string,
  p: number[],
  threshold = 0.5,
  continuation = 0.2,
  gazetteer = false,
  unlisted = 0,
) {
  const tokens = tokenize(text);
  expect(tokens).toHaveLength(p.length);
  return decodeNames(
    tokens,
    probs(p),
    threshold,
    continuation,
    gazetteer ? nameGazetteer() : undefined,
    unlisted,
  ).map((f) => text.slice(f.start, f.end));
}

const capitalise = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

describe("name decoding", () => {
  it("starts a name above the threshold and continues it above the lower continuation threshold", () => {
    expect(names("met Ada Lovelace today", [0, 0.9, 0.3, 0.1])).toEqual(["Ada Lovelace"]);
    expect(names("met Ada Lovelace today", [0, 0.3, 0.9, 0.1])).toEqual(["Lovelace"]);
  });

  it("keeps the period of an initial inside the name but drops trailing punctuation", () => {
    expect(names("Ken N. Fukuda called", [0.9, 0.9, 0, 0.9, 0])).toEqual(["Ken N. Fukuda"]);
    expect(names("ask Ken.", [0, 0.9, 0])).toEqual(["Ken"]);
  });

  it("never continues a name across a line break", () => {
    expect(names("Ada\nLovelace", [0.9, 0, 0.9])).toEqual(["Ada", "Lovelace"]);
  });

  it("widens a name to an adjacent capitalised word that is not a common English word", () => {
    expect(names("Name: Toshimi Arata", [0, 0, 0.9, 0], 0.5, 0.2, true)).toEqual(["Toshimi Arata"]);
    expect(names("Toshimi Great", [0.9, 0], 0.5, 0.2, true)).toEqual(["Toshimi"]);
    // Common words that complete a listed first name + last name pair join too.
    expect(names("I'm John Smith, hi", [0, 0.9, 0, 0, 0], 0.5, 0.2, true)).toEqual(["John Smith"]);
    expect(names("called Crystal Murdock", [0, 0, 0.9], 0.5, 0.2, true)).toEqual(["Crystal Murdock"]);
    expect(names("Call Ana", [0, 0.9], 0.5, 0.2, true)).toEqual(["Ana"]);
  });

  it("rates a name by its mean probability", () => {
    const tokens = tokenize("Ada Lovelace");
    expect(decodeNames(tokens, probs([0.95, 0.95]), 0.5)[0]?.likelihood).toBe("LIKELIHOOD_TYPE_VERY_LIKELY");
    expect(decodeNames(tokens, probs([0.6, 0.6]), 0.5)[0]?.likelihood).toBe("LIKELIHOOD_TYPE_POSSIBLE");
  });

  it("drops a confident span made only of a known place, weekday, month or product that is no name", () => {
    const g = nameGazetteer();
    const plain = (words: Iterable<string>) =>
      [...words].filter((w) => /^\p{L}+$/u.test(w) && !g.first.has(w) && !g.last.has(w)).slice(0, 5);
    for (const set of [g.places, g.times, g.organisations]) {
      for (const word of plain(set)) {
        const capitalised = word.charAt(0).toUpperCase() + word.slice(1);
        expect(names(`see ${capitalised} soon`, [0, 0.95, 0], 0.5, 0.2, true)).toEqual([]);
        expect(names(`Dr. ${capitalised} called`, [0, 0, 0.95, 0], 0.5, 0.2, true)).toEqual([capitalised]);
      }
    }
  });

  it("drops a span that is part of a known multi-word place with the words beside it", () => {
    const g = nameGazetteer();
    // Known places of two or three words, one of them a listed first name ("Saint Martin").
    const phrases = [...g.places]
      .filter((p) => /^[\p{L}]+(?: [\p{L}]+){1,2}$/u.test(p))
      .filter((p) => p.split(" ").some((w) => g.first.has(w)))
      .slice(0, 8);
    expect(phrases.length).toBe(8);
    for (const phrase of phrases) {
      const words = phrase.split(" ").map(capitalise);
      const at = words.findIndex((w) => g.first.has(w.toLowerCase()));
      const p = [0, 0, ...words.map((_, i) => (i === at ? 0.95 : 0)), 0];
      expect(names(`we visited ${words.join(" ")} today`, p, 0.5, 0.2, true)).toEqual([]);
    }
    // The same name beside words that make no known place stays.
    expect(names("we visited Martin Okafor today", [0, 0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual([
      "Martin Okafor",
    ]);
    expect(names("Saint Martin", [0, 0.95], 0.5, 0.2, true)).toEqual([]);
  });

  it("widens a lower-case name to a lower-case neighbour of five letters or more that is no English word", () => {
    expect(names("we met connie abramowitz today", [0, 0, 0, 0.9, 0], 0.5, 0.2, true)).toEqual([
      "connie abramowitz",
    ]);
    expect(names("met toby rønning today", [0, 0.9, 0, 0], 0.5, 0.2, true)).toEqual(["toby rønning"]);
    // A common word and a short one ("asap", "tmrw") stay out.
    expect(names("ask toby again", [0, 0.9, 0], 0.5, 0.2, true)).toEqual(["toby"]);
    expect(names("call toby asap", [0, 0.9, 0], 0.5, 0.2, true)).toEqual(["toby"]);
  });

  it("drops a lone common word that opens a sentence but keeps it inside a name", () => {
    expect(names("Spin costs rose", [0.9, 0, 0], 0.5, 0.2, true)).toEqual([]);
    expect(names("said Spin Okafor", [0, 0.9, 0.9], 0.5, 0.2, true)).toEqual(["Spin Okafor"]);
  });

  it("drops a nationality word, even one that is also a surname, unless an honorific precedes it", () => {
    const g = nameGazetteer();
    const demonyms = [...g.demonyms].filter((w) => /^\p{L}+$/u.test(w));
    const samples = [
      ...demonyms.filter((w) => g.last.has(w)).slice(0, 3),
      ...demonyms.filter((w) => !g.last.has(w)).slice(0, 5),
    ];
    expect(samples.length).toBeGreaterThan(5);
    for (const word of samples.map(capitalise)) {
      expect(names(`the ${word} office`, [0, 0.95, 0], 0.5, 0.2, true)).toEqual([]);
      expect(names(`Mr ${word} called`, [0, 0.95, 0], 0.5, 0.2, true)).toEqual([word]);
    }
  });

  it("drops a lone lower-case English word but keeps a lower-case name that is no word", () => {
    expect(names("the riff and building", [0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual([]);
    expect(names("call me višeslav", [0, 0, 0.95], 0.5, 0.2, true)).toEqual(["višeslav"]);
  });

  it("drops a name-like span followed by a word that ends an organisation's name", () => {
    const g = nameGazetteer();
    const orgWords = [...g.orgWords].filter((w) => /^\p{L}{4,}$/u.test(w)).slice(0, 8);
    expect(orgWords.length).toBe(8);
    for (const org of orgWords) {
      expect(names(`Where: Upton ${capitalise(org)}.`, [0, 0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual([]);
      expect(names(`Where: UPTON ${org.toUpperCase()}.`, [0, 0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual([]);
      expect(names(`Where: UPTON ${capitalise(org)}.`, [0, 0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual([]);
      // A lower-case word after a capitalised name is ordinary text ("Upton club members").
      expect(names(`Where: Upton ${org}.`, [0, 0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual(["Upton"]);
    }
  });

  it("keeps the period of a closing abbreviation such as Sr.", () => {
    expect(names("ask Zrina Nielsen Sr. now", [0, 0.9, 0.9, 0.9, 0, 0], 0.5, 0.2, true)).toEqual([
      "Zrina Nielsen Sr.",
    ]);
    expect(names("ask Zrina Nielsen. Now", [0, 0.9, 0.9, 0, 0], 0.5, 0.2, true)).toEqual(["Zrina Nielsen"]);
  });

  it("needs the unlisted threshold for a span no name list, honorific or other mention supports", () => {
    // "Zoolander" is in no name list; "Mette" is a first name.
    expect(names("Zoolander is a film", [0.9, 0, 0, 0], 0.5, 0.2, true, 0.95)).toEqual([]);
    expect(names("Zoolander is a film", [0.97, 0, 0, 0], 0.5, 0.2, true, 0.95)).toEqual(["Zoolander"]);
    expect(names("Mette is a singer", [0.9, 0, 0, 0], 0.5, 0.2, true, 0.95)).toEqual(["Mette"]);
    expect(names("Dr. Zoolander is here", [0, 0, 0.9, 0, 0], 0.5, 0.2, true, 0.95)).toEqual(["Zoolander"]);
  });

  it("finds a name again wherever one of its words is repeated in the text", () => {
    const text = "directed by Maciej Borkowski and starring Borkowski , not Maciej";
    expect(names(text, [0, 0, 0.95, 0.9, 0, 0, 0.01, 0, 0, 0.02], 0.5, 0.2, true)).toEqual([
      "Maciej Borkowski",
      "Borkowski",
      "Maciej",
    ]);
    // Only a name found in full is repeated, and only with the same capitals.
    expect(names("met Borkowski and borkowski", [0, 0.95, 0, 0], 0.5, 0.2, true)).toEqual(["Borkowski"]);
  });
});
