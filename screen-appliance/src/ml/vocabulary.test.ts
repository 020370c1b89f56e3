import { describe, expect, it } from "vitest";
import { parseClusters, vocabularyOf, wordCluster, wordRow } from "./vocabulary.ts";

describe("word vocabulary", () => {
  it("maps a word to its row after the hashed rows, and to its clusters when it has them", () => {
    const clusters = parseClusters("3 1\n7 2\n", 2);
    const vocabulary = vocabularyOf(["haruki", "denver"], 100, clusters);
    expect(wordRow(vocabulary, "denver")).toBe(101);
    expect(wordCluster(vocabulary, "haruki")).toEqual({ fine: 3, coarse: 1 });
    expect(wordCluster(vocabulary, "absent")).toBeUndefined();
    expect(wordCluster(vocabularyOf(["haruki"], 100), "haruki")).toBeUndefined();
  });

  it("refuses a clusters file that does not match the word list", () => {
    expect(() => parseClusters("3 1\n", 2)).toThrow(/1 lines for 2 words/);
    expect(() => parseClusters("3 1\nx 2\n", 2)).toThrow(/line 2 is "x 2"/);
  });
});
