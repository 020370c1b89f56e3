import { beforeAll, describe, expect, it } from "vitest";
import { ordinaryLexicon } from "../scripts/lib/ordinary-text.ts";
import { nameGazetteer } from "../src/ner/gazetteer.ts";
import { post, type TestApp, testApp } from "./helpers.ts";

let app: TestApp;
beforeAll(async () => {
  app = await testApp();
});

interface ScreenBody {
  redactedData: string;
  transformationType: string;
  findings: {
    classificationType: string;
    likelihoodType: string;
    start: number;
    end: number;
    replacement: string;
  }[];
  redactionMaps: { redactionString: string; originalData: string }[];
  biasResults?: { biasType: string; level: string; score: number }[];
  toxicityResults?: { toxicityType: string; level: string; score: number }[];
}

async function screen(body: unknown): Promise<ScreenBody> {
  const res = await post(app, "/screen", body);
  expect(res.status).toBe(200);
  return (await res.json()) as ScreenBody;
}

describe("POST /screen", () => {
  it("with only data, scans every type at POSSIBLE and numbers the redactions", async () => {
    const data = "Hi, I'm John Smith, email john.smith@example.com, phone (415) 555-2671, SSN 123-45-6789.";
    const body = await screen({ data });
    expect(body.transformationType).toBe("TRANSFORMATION_TYPE_NUMBERED");
    expect(body.redactedData).toBe(
      "Hi, I'm [PERSON_NAME_1] [PERSON_NAME_2], email [EMAIL_1], phone [PHONE_NUMBER_1], SSN [US_SOCIAL_SECURITY_NUMBER_1].",
    );
    expect(body.findings.map((f) => f.classificationType)).toEqual([
      "PERSON_NAME",
      "EMAIL",
      "PHONE_NUMBER",
      "US_SOCIAL_SECURITY_NUMBER",
    ]);
    expect(body.biasResults).toBeUndefined();
    expect(body.toxicityResults).toBeUndefined();
  });

  it("reports each finding's type, likelihood, code point offsets in the original and replacement", async () => {
    const data = "🙂🙂 mail: zoë@example.org";
    const body = await screen({
      data,
      classificationTypes: [{ classificationType: "EMAIL", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" }],
    });
    expect(body.findings).toEqual([
      {
        classificationType: "EMAIL",
        likelihoodType: "LIKELIHOOD_TYPE_VERY_LIKELY",
        start: 9,
        end: 24,
        replacement: "[EMAIL_1]",
      },
    ]);
    expect([...data].slice(9, 24).join("")).toBe("zoë@example.org");
  });

  it("scans only the requested classification types", async () => {
    const body = await screen({
      data: "Mail a@b.io or call +1 415 555 2671",
      classificationTypes: [{ classificationType: "PHONE_NUMBER", likelihoodType: "LIKELIHOOD_TYPE_MEDIUM" }],
    });
    expect(body.redactedData).toBe("Mail a@b.io or call [PHONE_NUMBER_1]");
  });

  it("applies the requested likelihood: a bare date is a date of birth only at UNLIKELY", async () => {
    const data = "The meeting is on 2024-03-05.";
    const at = (likelihoodType: string) =>
      screen({ data, classificationTypes: [{ classificationType: "DATE_OF_BIRTH", likelihoodType }] });
    expect((await at("LIKELIHOOD_TYPE_POSSIBLE")).findings).toEqual([]);
    expect((await at("LIKELIHOOD_TYPE_UNLIKELY")).findings).toHaveLength(1);
  });

  it("accepts LIKELIHOOD_TYPE_MEDIUM from the spec as POSSIBLE", async () => {
    const data = "The meeting is on 2024-03-05, born 1984-02-01.";
    const body = await screen({
      data,
      classificationTypes: [
        { classificationType: "DATE_OF_BIRTH", likelihoodType: "LIKELIHOOD_TYPE_MEDIUM" },
      ],
    });
    expect(body.findings.map((f) => data.slice(f.start, f.end))).toEqual(["1984-02-01"]);
  });

  it("uses the requested transformation", async () => {
    const body = await screen({
      data: "Mail a@b.io",
      classificationTypes: [{ classificationType: "EMAIL", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" }],
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_SYNTHETIC" },
    });
    expect(body.transformationType).toBe("TRANSFORMATION_TYPE_SYNTHETIC");
    expect(body.redactedData).toMatch(/^Mail [^@\s]+@[^@\s]+$/);
    expect(body.redactedData).not.toContain("a@b.io");
  });

  it("returns a level and a score per requested bias and toxicity type", async () => {
    const body = await screen({
      data: "People from that country are all lazy and stupid.",
      biasTypes: ["RACE_ETHNICITY", "NATIONALITY_LOCATION", "APPEARANCE"],
      toxicityTypes: ["HATE", "PHYSICAL_SAFETY"],
    });
    expect(body.biasResults?.map((b) => b.biasType)).toEqual([
      "RACE_ETHNICITY",
      "NATIONALITY_LOCATION",
      "APPEARANCE",
    ]);
    expect(body.toxicityResults?.map((t) => t.toxicityType)).toEqual(["HATE", "PHYSICAL_SAFETY"]);
    for (const r of [...(body.biasResults ?? []), ...(body.toxicityResults ?? [])]) {
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
      expect(["LOW", "MEDIUM", "HIGH"]).toContain(r.level);
    }
  });

  it("scores an openly hateful text higher for HATE than a friendly one", async () => {
    const hate = "kill all those dirty n*****s, they are animals";
    const friendly = "thanks so much for the lovely dinner last night";
    const score = async (data: string) =>
      (await screen({ data, classificationTypes: [], toxicityTypes: ["HATE"] })).toxicityResults?.[0]
        ?.score ?? -1;
    expect(await score(hate)).toBeGreaterThan(await score(friendly));
  });

  it("scores a sentence about race higher for RACE_ETHNICITY than for APPEARANCE", async () => {
    const body = await screen({
      data: "Black people are always so loud and violent in this neighborhood.",
      classificationTypes: [],
      biasTypes: ["RACE_ETHNICITY", "APPEARANCE"],
    });
    const [race, appearance] = body.biasResults ?? [];
    expect(race?.score ?? 0).toBeGreaterThan(appearance?.score ?? 1);
  });

  it("leaves the text unchanged when no classification types are requested", async () => {
    const body = await screen({ data: "a@b.io", classificationTypes: [] });
    expect(body.redactedData).toBe("a@b.io");
    expect(body.findings).toEqual([]);
  });
});

describe("POST /screen on ordinary business text", () => {
  // Examples from the evaluation half of the lexicons, leaving out words that are also first or
  // last names ("June", "Sofia", "Ocean"): those are ambiguous and may be redacted.
  const lexicon = ordinaryLexicon("eval");
  const names = nameGazetteer();
  const sample = (words: string[], n: number) => {
    const plain = words.filter((w) => !names.first.has(w.toLowerCase()) && !names.last.has(w.toLowerCase()));
    return plain.filter((_, i) => i % Math.ceil(plain.length / n) === 0);
  };
  const classes: [string, string[]][] = [
    ["weekday", sample(lexicon.weekday, 7)],
    ["month", sample(lexicon.month, 12)],
    ["city", sample(lexicon.city, 16)],
    ["country or region", sample(lexicon.country, 12)],
    ["product", sample(lexicon.product, 12)],
    ["nationality word", sample(lexicon.demonym, 12)],
    ["job title", sample(lexicon.title, 12)],
    [
      "company",
      sample(
        lexicon.company.filter((w) => w.length > 3),
        12,
      ),
    ],
  ];

  const screenNames = (data: string) =>
    screen({
      data,
      classificationTypes: [
        { classificationType: "PERSON_NAME", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" },
      ],
    });

  async function personNames(data: string): Promise<string[]> {
    const body = await screenNames(data);
    return body.findings.map((f) => [...data].slice(f.start, f.end).join(""));
  }

  it.each(classes)("keeps every %s while redacting the person named beside it", async (_, words) => {
    for (const word of words) {
      const data = `${word} works for the team, said Margaret Okafor.`;
      expect(await personNames(data), data).toEqual(["Margaret Okafor"]);
      const inside = `Please ask Tomasz Wieczorek about the ${word} plan.`;
      expect(await personNames(inside), inside).toEqual(["Tomasz Wieczorek"]);
    }
  });

  it("finds a surname again after the full name and numbers each word once", async () => {
    const data = "The film was directed by Maciej Borkowski and starring Borkowski.";
    const body = await screenNames(data);
    expect(body.redactedData).toBe(
      "The film was directed by [PERSON_NAME_1] [PERSON_NAME_2] and starring [PERSON_NAME_2].",
    );
  });

  it("keeps a common noun that starts a sentence", async () => {
    for (const noun of sample(lexicon.noun, 16)) {
      const data = `${noun.charAt(0).toUpperCase()}${noun.slice(1)} costs went up, Helena Brandt wrote.`;
      expect(await personNames(data), data).toEqual(["Helena Brandt"]);
    }
  });
});
