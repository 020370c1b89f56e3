import { describe, expect, it } from "vitest";
import { featureRow } from "../ml/hash.ts";
import { vocabularyOf } from "../ml/vocabulary.ts";
import { FEATURES_PER_TOKEN, tokenFeatures, tokenRows, UNSEEN_WORD } from "./features.ts";
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

  it("hash each token's feature strings, as listed by tokenFeatures, to its rows", () => {
    const texts = [
      "Dr. O'Brien-Smith met Zoë Łukasiewicz in Gdańsk on Friday.\nCall 555-0100!",
      "東京で会いましょう, said Jean-Luc. She's here: ALL CAPS, mixed123 and a tab\tend",
      "x",
    ];
    for (const text of texts) {
      const tokens = tokenize(text);
      // Training hides some words' identity: the features naming them read as padding instead.
      for (const unseen of [undefined, new Set([1, 4])]) {
        const rows = tokenRows(tokens, gazetteer, BUCKETS, unseen);
        tokens.forEach((_, i) => {
          const expected = tokenFeatures(tokens, i, gazetteer, unseen).map((f) =>
            f.includes(UNSEEN_WORD) ? 0 : featureRow(f, BUCKETS),
          );
          expect([...rows.subarray(i * FEATURES_PER_TOKEN, (i + 1) * FEATURES_PER_TOKEN - 1)]).toEqual(
            expected,
          );
        });
        // Beyond each token's padded word row (no vocabulary here), the hidden words' features are 0.
        if (unseen && tokens.length > 4)
          expect(rows.filter((r) => r === 0).length).toBeGreaterThan(tokens.length);
      }
    }
  });
});
