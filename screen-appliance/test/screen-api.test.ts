import { beforeAll, describe, expect, it } from "vitest";
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
