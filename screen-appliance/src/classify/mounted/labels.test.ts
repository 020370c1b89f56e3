import { describe, expect, it } from "vitest";
import { BIAS, mapLabels, TOXICITY } from "./labels.ts";

/** type -> labels, negatives and ignored labels, as /health reports them. */
function read(family: typeof BIAS | typeof TOXICITY, names: string[]) {
  const labels = mapLabels<string>(family, names, "config.json");
  const types: Record<string, string[]> = {};
  for (const l of labels) if (l.type) types[l.type] = [...(types[l.type] ?? []), l.name];
  return {
    types,
    negative: labels.filter((l) => l.negative).map((l) => l.name),
    ignored: labels.filter((l) => !l.type && !l.negative).map((l) => l.name),
  };
}

describe("reading a text classifier's id2label as toxicity types", () => {
  it("reads the Jigsaw labels (unitary/toxic-bert): identity_hate is HATE, threat is PHYSICAL_SAFETY, general toxicity is not hate", () => {
    expect(read(TOXICITY, ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"])).toEqual(
      {
        types: { PHYSICAL_SAFETY: ["threat"], HATE: ["identity_hate"] },
        negative: [],
        ignored: ["toxic", "severe_toxic", "obscene", "insult"],
      },
    );
  });

  it("reads Detoxify's unbiased labels, where identity mentions (male, muslim...) are not findings", () => {
    const names = [
      "toxicity",
      "severe_toxicity",
      "obscene",
      "identity_attack",
      "insult",
      "threat",
      "sexual_explicit",
    ];
    expect(read(TOXICITY, [...names, "male", "muslim", "black"])).toMatchObject({
      types: { HATE: ["identity_attack"], PHYSICAL_SAFETY: ["threat"] },
      ignored: [
        "toxicity",
        "severe_toxicity",
        "obscene",
        "insult",
        "sexual_explicit",
        "male",
        "muslim",
        "black",
      ],
    });
  });

  it("understands a negative class next to a hate class (NOT-HATE, nothate, non_hate, neutral)", () => {
    for (const negative of ["NOT-HATE", "nothate", "non_hate", "neutral", "Normal", "Non-Toxic"]) {
      expect(read(TOXICITY, [negative, "HATE"])).toEqual({
        types: { HATE: ["HATE"] },
        negative: [negative],
        ignored: [],
      });
    }
  });

  it("compares names in lowercase without spaces, '_', '-', '/' and '.'", () => {
    expect(
      read(TOXICITY, ["Identity Hate", "IDENTITY-ATTACK", "hate/threatening", "Physical_Safety"]).types,
    ).toEqual({
      HATE: ["Identity Hate", "IDENTITY-ATTACK", "hate/threatening"],
      PHYSICAL_SAFETY: ["Physical_Safety"],
    });
  });

  it("refuses labels that name no type (a general toxic/non-toxic model, or LABEL_0/LABEL_1), naming them and the expected names", () => {
    expect(() => read(TOXICITY, ["non-toxic", "toxic"])).toThrow(
      "config.json: none of the labels (non-toxic, toxic) names a toxicity type this appliance reports",
    );
    expect(() => read(TOXICITY, ["LABEL_0", "LABEL_1"])).toThrow(
      /expected one of HATE: hate, .*; PHYSICAL_SAFETY: physicalsafety, threat/,
    );
  });
});

describe("reading a text classifier's id2label as bias types", () => {
  it("reads CrowS-Pairs bias types; the types the API does not have are ignored", () => {
    const crows = ["race-color", "socioeconomic", "gender", "nationality", "physical-appearance", "religion"];
    expect(read(BIAS, crows)).toEqual({
      types: {
        RACE_ETHNICITY: ["race-color"],
        NATIONALITY_LOCATION: ["nationality"],
        APPEARANCE: ["physical-appearance"],
      },
      negative: [],
      ignored: ["socioeconomic", "gender", "religion"],
    });
  });

  it("reads other spellings and our own type names, several labels per type", () => {
    expect(
      read(BIAS, ["Race", "ethnicity", "National Origin", "APPEARANCE", "unbiased", "RACE_ETHNICITY"]),
    ).toEqual({
      types: {
        RACE_ETHNICITY: ["Race", "ethnicity", "RACE_ETHNICITY"],
        NATIONALITY_LOCATION: ["National Origin"],
        APPEARANCE: ["APPEARANCE"],
      },
      negative: ["unbiased"],
      ignored: [],
    });
  });

  it("refuses a general biased/non-biased model", () => {
    expect(() => read(BIAS, ["Non-biased", "Biased"])).toThrow(
      "none of the labels (Non-biased, Biased) names a bias type this appliance reports",
    );
  });
});
