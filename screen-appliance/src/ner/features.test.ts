import { describe, expect, it } from "vitest";
import { featureRow } from "../ml/hash.ts";
import { vocabularyOf } from "../ml/vocabulary.ts";
import { FEATURES_PER_TOKEN, tokenFeatures, tokenRows } from "./features.ts";
import { nameGazetteer } from "./gazetteer.ts";
import { tokenize } from "./tokenize.ts";

const BUCKETS = 1 << 10;
/** The pretrained word row is each token's last. */
const WORD_ROW = FEATURES_PER_TOKEN - 1;

describe("name model features", () => {
  const gazetteer = nameGazetteer();
  const tokens = tokenize("Haruki met Bob.");
  const vocabulary = vocabularyOf(["met", "haruki", "the"], BUCKETS);
  const wordRows = (rows: Int32Array) => tokens.map((_, i) => rows[i * FEATURES_PER_TOKEN + WORD_ROW]);

  it("add each token's pretrained word row, looked up lower case, after the hashed rows", () => {
    const rows = tokenRows(tokens, gazetteer, BUCKETS, undefined, vocabulary);
    // "Bob" and "." are not in the vocabulary: padding.
    expect(wordRows(rows)).toEqual([BUCKETS + 1, BUCKETS, 0, 0]);
    // Hashed rows stay below the word rows.
    for (let i = 0; i < rows.length; i++)
      if (i % FEATURES_PER_TOKEN !== WORD_ROW) expect(rows[i]).toBeLessThan(BUCKETS);
  });

  it("leave the hashed rows as they are and pad the word row without a vocabulary", () => {
    const plain = tokenRows(tokens, gazetteer, BUCKETS);
    const withWords = tokenRows(tokens, gazetteer, BUCKETS, undefined, vocabulary);
    expect(wordRows(plain)).toEqual([0, 0, 0, 0]);
    for (let i = 0; i < plain.length; i++)
      if (i % FEATURES_PER_TOKEN !== WORD_ROW) expect(withWords[i]).toBe(plain[i]);
  });

  it("keep the word row of a token trained as never seen, while its identity features go", () => {
    const unseen = tokenRows(tokens, gazetteer, BUCKETS, new Set([0]), vocabulary);
    const seen = tokenRows(tokens, gazetteer, BUCKETS, undefined, vocabulary);
    expect(unseen[WORD_ROW]).toBe(BUCKETS + 1);
    // Its own word feature (`w=`, the second row) is padding; the next token's `w-1=` too.
    expect(unseen[1]).toBe(0);
    expect(seen[1]).not.toBe(0);
    expect(unseen.filter((r) => r === 0).length).toBeGreaterThan(seen.filter((r) => r === 0).length);
  });

  describe("with word clusters", () => {
    // "met" is in fine cluster 7 (coarse 1), "haruki" in 40 (coarse 3), "the" in 7 (coarse 1).
    const clustered = vocabularyOf(["met", "haruki", "the"], BUCKETS, {
      fine: Uint16Array.from([7, 40, 7]),
      coarse: Uint16Array.from([1, 3, 1]),
    });
    const rowsOf = (rows: Int32Array, i: number) =>
      new Set(rows.subarray(i * FEATURES_PER_TOKEN, (i + 1) * FEATURES_PER_TOKEN));
    const row = (feature: string) => featureRow(feature, BUCKETS);

    it("add the token's and its neighbours' cluster features", () => {
      const rows = tokenRows(tokens, gazetteer, BUCKETS, undefined, clustered);
      const haruki = rowsOf(rows, 0);
      expect(haruki.has(row("cf=40"))).toBe(true);
      expect(haruki.has(row("cc=3"))).toBe(true);
      expect(haruki.has(row("cf+1=7"))).toBe(true);
      // "Bob" is not in the vocabulary: its cluster is the fixed out-of-vocabulary value.
      const met = rowsOf(rows, 1);
      expect(met.has(row("cf=7"))).toBe(true);
      expect(met.has(row("cf-1=40"))).toBe(true);
      expect(met.has(row("cf+1=-"))).toBe(true);
      expect(rowsOf(rows, 2).has(row("cf=-"))).toBe(true);
    });

    it("add none without clusters: the same rows as a vocabulary without them", () => {
      const plain = tokenRows(tokens, gazetteer, BUCKETS, undefined, vocabulary);
      const withClusters = tokenRows(tokens, gazetteer, BUCKETS, undefined, clustered);
      expect(rowsOf(plain, 0).has(row("cf=40"))).toBe(false);
      const extra = [...withClusters].filter((r, i) => r !== plain[i]);
      expect(extra.length).toBe(tokens.length * 12);
      // The word features are the same list either way.
      expect(tokenFeatures(tokens, 0, gazetteer).some((f) => f.startsWith("cf"))).toBe(false);
    });

    it("keep an unseen token's own clusters; its neighbours see them unless told to hide them", () => {
      const kept = tokenRows(tokens, gazetteer, BUCKETS, new Set([0]), clustered);
      expect(rowsOf(kept, 0).has(row("cf=40"))).toBe(true);
      expect(rowsOf(kept, 1).has(row("cf-1=40"))).toBe(true);
      const hidden = tokenRows(tokens, gazetteer, BUCKETS, new Set([0]), clustered, "hidden");
      expect(rowsOf(hidden, 0).has(row("cf=40"))).toBe(true);
      expect(rowsOf(hidden, 1).has(row("cf-1=40"))).toBe(false);
    });
  });
});
