import { beforeAll, describe, expect, it } from "vitest";
import { KEY, OTHER_KEY, post, type TestApp, testApp } from "./helpers.ts";

let app: TestApp;
beforeAll(async () => {
  app = await testApp();
});

const TRANSFORMATIONS = [
  "TRANSFORMATION_TYPE_NUMBERED",
  "TRANSFORMATION_TYPE_SYNTHETIC",
  "TRANSFORMATION_TYPE_ENCRYPTED",
] as const;

// Unicode (accents, emoji, CJK), a repeated name, a name inside an email address (overlapping
// findings), CRLF line breaks, and values of most types.
const ORIGINAL = [
  "Dear María José Ñúñez,\r\n",
  "your card 4111-1111-1111-1111 and IBAN GB82 WEST 1234 5698 7654 32 are on file 🙂.",
  " Write to maria.nunez@example.com or call +44 20 7946 0958; SSN 123-45-6789; host 10.0.0.1.",
  " 東京 office: 1600 Amphitheatre Parkway, Mountain View, CA 94043. Born on 1984-02-01.",
  " Thanks, María José Ñúñez",
].join("");

const EMAIL_ONLY = [{ classificationType: "EMAIL", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" }];

async function screenThenReveal(
  transformationType: (typeof TRANSFORMATIONS)[number],
  data: string,
  classificationTypes?: typeof EMAIL_ONLY,
) {
  const screened = await post(app, "/screen", {
    data,
    ...(classificationTypes ? { classificationTypes } : {}),
    transformationParams: {
      transformationType,
      ...(transformationType.endsWith("ENCRYPTED") ? { encryptionKey: KEY } : {}),
    },
  });
  expect(screened.status).toBe(200);
  const body = (await screened.json()) as {
    redactedData: string;
    redactionMaps: { redactionString: string; originalData: string }[];
    findings: unknown[];
  };
  const revealed = await post(app, "/reveal", {
    redactedData: body.redactedData,
    redactionMaps: body.redactionMaps,
    transformationType,
  });
  expect(revealed.status).toBe(200);
  return { body, originalData: ((await revealed.json()) as { originalData: string }).originalData };
}

describe("POST /screen then POST /reveal", () => {
  for (const type of TRANSFORMATIONS) {
    it(`restores the original byte for byte after ${type}`, async () => {
      const { body, originalData } = await screenThenReveal(type, ORIGINAL);
      expect(body.findings.length).toBeGreaterThanOrEqual(9);
      expect(body.redactedData).not.toContain("4111-1111-1111-1111");
      expect(body.redactedData).not.toContain("maria.nunez@example.com");
      expect(Buffer.from(originalData, "utf8").equals(Buffer.from(ORIGINAL, "utf8"))).toBe(true);
    });
  }

  it("reveals encrypted text with the key alone, no map needed", async () => {
    const { body } = await screenThenReveal("TRANSFORMATION_TYPE_ENCRYPTED", ORIGINAL);
    const res = await post(app, "/reveal", {
      redactedData: `Forwarded: ${body.redactedData}`,
      transformationType: "TRANSFORMATION_TYPE_ENCRYPTED",
      encryptionKey: KEY,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ originalData: `Forwarded: ${ORIGINAL}` });
  });

  it("answers 422 naming encryptionKey when the key is wrong", async () => {
    const { body } = await screenThenReveal("TRANSFORMATION_TYPE_ENCRYPTED", "mail a@b.io", EMAIL_ONLY);
    const res = await post(app, "/reveal", {
      redactedData: body.redactedData,
      transformationType: "TRANSFORMATION_TYPE_ENCRYPTED",
      encryptionKey: OTHER_KEY,
    });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { errors: { path: string }[] };
    expect(problem.errors[0]?.path).toBe("encryptionKey");
  });

  it("gives the same token for the same value and key across requests", async () => {
    const a = await screenThenReveal("TRANSFORMATION_TYPE_ENCRYPTED", "mail a@b.io", EMAIL_ONLY);
    const b = await screenThenReveal("TRANSFORMATION_TYPE_ENCRYPTED", "again: a@b.io", EMAIL_ONLY);
    expect(b.body.redactedData).toBe(`again: ${a.body.redactedData.slice("mail ".length)}`);
  });

  it("requires redactionMaps unless an encryptionKey is given", async () => {
    const res = await post(app, "/reveal", {
      redactedData: "x",
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: { path: string }[] }).errors[0]?.path).toBe("redactionMaps");
  });

  it("requires an encryptionKey to screen with TRANSFORMATION_TYPE_ENCRYPTED", async () => {
    const res = await post(app, "/screen", {
      data: "a@b.io",
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_ENCRYPTED" },
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: { path: string }[] }).errors[0]?.path).toBe(
      "transformationParams.encryptionKey",
    );
  });
});
