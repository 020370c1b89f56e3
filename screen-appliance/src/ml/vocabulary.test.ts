import { describe, expect, it } from "vitest";
import { vocabularyOf, wordRow } from "./vocabulary.ts";

describe("word vocabulary", () => {
  it("maps a word to its row after the hashed rows, and nothing else", () => {
    const vocabulary = vocabularyOf(["haruki", "denver"], 100);
    expect(wordRow(vocabulary, "haruki")).toBe(100);
    expect(wordRow(vocabulary, "denver")).toBe(101);
    expect(wordRow(vocabulary, "Denver")).toBeUndefined();
    expect(wordRow(vocabulary, "absent")).toBeUndefined();
  });
});
