import { describe, expect, it } from "vitest";
import { decodeNames } from "./decode.ts";
import { nameGazetteer } from "./gazetteer.ts";
import { tokenize } from "./tokenize.ts";

/** Builds O/B/I probabilities from a name probability per token (split evenly between B and I). */
function probs(values: number[]): Float32Array {
  return Float32Array.from(values.flatMap((p) => [1 - p, p / 2, p / 2]));
}

function names(text: string, p: number[], threshold = 0.5, continuation = 0.2, gazetteer = false) {
  const tokens = tokenize(text);
  expect(tokens).toHaveLength(p.length);
  return decodeNames(tokens, probs(p), threshold, continuation, gazetteer ? nameGazetteer() : undefined).map(
    (f) => text.slice(f.start, f.end),
  );
}

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

  it("drops a lone common word that opens a sentence but keeps it inside a name", () => {
    expect(names("Spin costs rose", [0.9, 0, 0], 0.5, 0.2, true)).toEqual([]);
    expect(names("said Spin Okafor", [0, 0.9, 0.9], 0.5, 0.2, true)).toEqual(["Spin Okafor"]);
  });
});
