import { describe, expect, it } from "vitest";
import { featureRow } from "../ml/hash.ts";
import { vocabularyOf } from "../ml/vocabulary.ts";
import { MAX_FEATURES, textFeatures, textRows, textWords } from "./features.ts";

describe("classifier features", () => {
  it("relate what is said to the group it is said of, whatever the group", () => {
    const a = textFeatures("Honestly Mexicans are dishonest.");
    const b = textFeatures("Honestly Norwegians are dishonest.");
    expect(a).toContain("g=dishonest");
    expect(b).toContain("g=dishonest");
    expect(a).toContain("group");
    // Without a group or a person, the predicate is only a word.
    expect(textFeatures("The report is dishonest.")).not.toContain("g=dishonest");
  });

  it("name the kind of group, so an ethnic group reads apart from a nation or a religion", () => {
    expect(textFeatures("Biracial people are everywhere")).toEqual(
      expect.arrayContaining(["group=ethnic", "group=collective"]),
    );
    const national = textFeatures("Norwegians are everywhere");
    expect(national).toContain("group=national");
    expect(national).not.toContain("group=ethnic");
    expect(textFeatures("Sikhs are everywhere")).toContain("group=religion");
    expect(textFeatures("The weather is fine").some((f) => f.startsWith("group="))).toBe(false);
  });

  it("mark words under a negation", () => {
    const f = textFeatures("They are not lazy");
    expect(f).toContain("n=lazy");
    expect(f).toContain("gn=lazy");
    expect(f).not.toContain("g=lazy");
    expect(textFeatures("They aren't lazy")).toContain("n=lazy");
    // Every way of writing "can not" negates what follows.
    for (const text of ["They cannot be trusted", "They can't be trusted", "They can not be trusted"])
      expect(textFeatures(text)).toEqual(expect.arrayContaining(["n=trusted", "v=n2", "gv=n2"]));
    expect(textFeatures("They are lazy")).toContain("g=lazy");
  });

  it("include bigrams and skip-bigrams", () => {
    const f = textFeatures("I will hurt him");
    expect(f).toEqual(expect.arrayContaining(["b=will|hurt", "s=i|hurt", "s=will|him"]));
  });

  it("add each word's pretrained row after the hashed rows, when the model has a vocabulary", () => {
    const buckets = 1 << 10;
    const vocabulary = vocabularyOf(["they", "are", "lazy"], buckets);
    const plain = textRows("They are so lazy", buckets);
    const withWords = textRows("They are so lazy", buckets, vocabulary);
    expect(plain.rows.every((r) => r > 0 && r < buckets)).toBe(true);
    // "so" is not in the vocabulary: three word rows, in text order, after the same hashed rows.
    expect([...withWords.rows.slice(plain.rows.length)]).toEqual([buckets, buckets + 1, buckets + 2]);
    expect([...withWords.rows.slice(0, plain.rows.length)]).toEqual([...plain.rows]);
    expect(withWords.scale).toBeCloseTo(1 / Math.sqrt(plain.rows.length + 3), 6);
  });

  it("read words lower case, with runs of a letter cut to two and curly apostrophes straight", () => {
    expect(textWords("Soooo BAAAD: they’re NOT ok, Zoë!!! 42x")).toEqual([
      "soo",
      "baad",
      "they're",
      "not",
      "ok",
      "zoë",
      "42x",
    ]);
  });

  it("hash each feature string, as listed by textFeatures, to its row, up to MAX_FEATURES", () => {
    const buckets = 1 << 12;
    const long = Array.from({ length: 800 }, (_, i) => `word${i} they aren't soooo lazy`).join(" ");
    for (const text of ["Mexicans cannot be trusted, they’re nooot honest", "ok", "", long]) {
      const features = textFeatures(text);
      expect([...textRows(text, buckets).rows]).toEqual(features.map((f) => featureRow(f, buckets)));
    }
    expect(textFeatures(long)).toHaveLength(MAX_FEATURES);
  });
});
