import { describe, expect, it } from "vitest";
import { templatesOf } from "./datasets.ts";
import { type NameHalf, NameHoldout, nameHalf, nameWords } from "./name-holdout.ts";
import { type LabeledSentence, NAME_SUFFIXES, PiiSentenceGenerator } from "./pii-generator.ts";

const holdout = new NameHoldout();
const suffixes = new Set(NAME_SUFFIXES.flatMap(nameWords));

/** The name words of every person in `count` sentences of each kind the generator writes. */
function personWords(half: NameHalf, count: number): string[] {
  const generator = new PiiSentenceGenerator(7, half, holdout);
  const templates = templatesOf(half === "train" ? "train" : "dev").map((t) => t.text);
  const sentences: LabeledSentence[] = [];
  for (let i = 0; i < count; i++)
    sentences.push(
      generator.generate(templates[i % templates.length] as string),
      generator.nameInContext(),
      generator.ordinary(),
    );
  return sentences.flatMap((s) =>
    s.persons
      .flatMap((p) => nameWords(s.text.slice(p.start, p.end)))
      .filter((w) => w.length > 1 && !suffixes.has(w)),
  );
}

describe("names held out of the name model's training", () => {
  it("collects the words of the held-out records' names", () => {
    expect(holdout.heldOut.size).toBeGreaterThan(100);
    expect(holdout.describe()).toMatch(/^names held out: none of the \d+ words/);
  });

  it("never draws a held-out name word, and keeps training and development names apart", () => {
    const train = personWords("train", 300);
    const dev = personWords("dev", 300);
    expect(train.length).toBeGreaterThan(600);
    expect(dev.length).toBeGreaterThan(600);
    expect(train.filter((w) => holdout.heldOut.has(w))).toEqual([]);
    expect(dev.filter((w) => holdout.heldOut.has(w))).toEqual([]);
    expect(train.filter((w) => nameHalf(w) !== "train")).toEqual([]);
    expect(dev.filter((w) => nameHalf(w) !== "dev")).toEqual([]);
  });
});
