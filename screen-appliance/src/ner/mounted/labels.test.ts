import { describe, expect, it } from "vitest";
import { parseLabel, readLabels } from "./labels.ts";

describe("reading id2label as a tagging scheme", () => {
  it("reads BIO, BIOES/BILOU and plain IO labels, with - or _", () => {
    const read = (name: string) => {
      const { position, person } = parseLabel(name);
      return [position, person];
    };
    expect(read("O")).toEqual(["outside", false]);
    expect(read("B-PER")).toEqual(["begin", true]);
    expect(read("I-PERSON")).toEqual(["inside", true]);
    expect(read("B_PER")).toEqual(["begin", true]);
    expect(read("S-PER")).toEqual(["single", true]);
    expect(read("U-PER")).toEqual(["single", true]);
    expect(read("E-PER")).toEqual(["end", true]);
    expect(read("L-PER")).toEqual(["end", true]);
    expect(read("PER")).toEqual(["inside", true]);
    expect(read("I-first_name")).toEqual(["inside", true]);
    expect(read("B-LASTNAME")).toEqual(["begin", true]);
  });

  it("ignores entity types that are not people (LOC, ORG, MISC, DATE)", () => {
    for (const name of ["B-LOC", "I-ORG", "B-MISC", "DATE", "B-GPE"])
      expect(parseLabel(name).person).toBe(false);
  });

  it("returns the labels indexed by id, in any key order", () => {
    expect(readLabels({ 1: "B-PER", 0: "O", 2: "I-PER" }, "config.json").map((l) => l.name)).toEqual([
      "O",
      "B-PER",
      "I-PER",
    ]);
  });

  it("refuses ids that are not 0..n-1, a missing id2label, or labels without a person", () => {
    expect(() => readLabels({ 0: "O", 2: "B-PER" }, "c.json")).toThrow(
      "c.json: id2label must map the ids 0..1",
    );
    expect(() => readLabels(undefined, "c.json")).toThrow('c.json has no "id2label" object');
    expect(() => readLabels({ 0: "O", 1: "B-LOC" }, "c.json")).toThrow(
      "none of the labels (O, B-LOC) names a person",
    );
  });
});
