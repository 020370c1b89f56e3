import { describe, expect, it } from "vitest";
import { textFeatures } from "./features.ts";

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
    expect(textFeatures("They are lazy")).toContain("g=lazy");
  });

  it("include bigrams and skip-bigrams", () => {
    const f = textFeatures("I will hurt him");
    expect(f).toEqual(expect.arrayContaining(["b=will|hurt", "s=i|hurt", "s=will|him"]));
  });
});
