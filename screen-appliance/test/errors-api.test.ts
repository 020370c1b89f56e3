import { beforeAll, describe, expect, it } from "vitest";
import { post, type TestApp, testApp } from "./helpers.ts";

let app: TestApp;
beforeAll(async () => {
  app = await testApp({ maxBodyBytes: 2048 });
});

async function problem(res: Response) {
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  return (await res.json()) as {
    type: string;
    title: string;
    status: number;
    detail: string;
    errors?: { path: string; message: string }[];
  };
}

describe("bad input", () => {
  it("answers 413 for a body over the configured limit", async () => {
    const res = await post(app, "/screen", { data: "x".repeat(4096) });
    expect(res.status).toBe(413);
    expect((await problem(res)).detail).toContain("2048 bytes");
  });

  it("answers 422 for a body that is not JSON", async () => {
    const res = await post(app, "/screen", "{not json");
    expect(res.status).toBe(422);
    expect((await problem(res)).errors?.[0]?.path).toBe("(body)");
  });

  it("answers 422 naming data when it is missing or not a string", async () => {
    for (const body of [{}, { data: 42 }]) {
      const res = await post(app, "/screen", body);
      expect(res.status).toBe(422);
      expect((await problem(res)).errors?.[0]?.path).toBe("data");
    }
  });

  const enumCases: [string, unknown, string, string][] = [
    [
      "classificationType",
      { classificationTypes: [{ classificationType: "PASSPORT", likelihoodType: "LIKELIHOOD_TYPE_LIKELY" }] },
      "classificationTypes.0.classificationType",
      "PERSON_NAME",
    ],
    [
      "likelihoodType",
      { classificationTypes: [{ classificationType: "EMAIL", likelihoodType: "HIGH" }] },
      "classificationTypes.0.likelihoodType",
      "LIKELIHOOD_TYPE_MEDIUM",
    ],
    [
      "transformationType",
      { transformationParams: { transformationType: "TRANSFORMATION_TYPE_HASH" } },
      "transformationParams.transformationType",
      "TRANSFORMATION_TYPE_ENCRYPTED",
    ],
    ["bias type", { biasTypes: ["RELIGION"] }, "biasTypes.0", "NATIONALITY_LOCATION"],
    ["toxicity type", { toxicityTypes: ["SPAM"] }, "toxicityTypes.0", "PHYSICAL_SAFETY"],
  ];
  for (const [what, extra, path, allowed] of enumCases) {
    it(`answers 422 naming the field and the allowed values for an unknown ${what}`, async () => {
      const res = await post(app, "/screen", { data: "hello", ...(extra as object) });
      expect(res.status).toBe(422);
      const body = await problem(res);
      expect(body.errors?.[0]?.path).toBe(path);
      expect(body.errors?.[0]?.message).toContain(allowed);
    });
  }

  it("answers 422 for a misspelt field instead of ignoring it", async () => {
    const res = await post(app, "/screen", { data: "hello", classificationType: [] });
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toContain("classificationType");
  });

  it("answers 422 for an unknown transformationType on /reveal", async () => {
    const res = await post(app, "/reveal", {
      redactedData: "x",
      redactionMaps: [],
      transformationType: "NOPE",
    });
    expect(res.status).toBe(422);
    expect((await problem(res)).errors?.[0]?.path).toBe("transformationType");
  });

  it("answers 404 as a problem for an unknown route", async () => {
    const res = await app.request("/nope");
    expect(res.status).toBe(404);
    expect((await problem(res)).status).toBe(404);
  });
});
