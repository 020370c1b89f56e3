import { beforeAll, describe, expect, it } from "vitest";
import { KEY, OTHER_KEY, post, problem, type TestApp, testApp } from "./helpers.ts";

let app: TestApp;
beforeAll(async () => {
  app = await testApp({ maxBodyBytes: 2048 });
});

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

describe("POST /screen fields", () => {
  for (const transformationType of ["TRANSFORMATION_TYPE_NUMBERED", "TRANSFORMATION_TYPE_SYNTHETIC"]) {
    it(`refuses an encryptionKey with ${transformationType} with 422 naming transformationParams.encryptionKey`, async () => {
      const res = await post(app, "/screen", {
        data: "mail a@b.io",
        transformationParams: { transformationType, encryptionKey: KEY },
      });
      expect(res.status).toBe(422);
      const error = (await problem(res)).errors?.[0];
      expect(error?.path).toBe("transformationParams.encryptionKey");
      expect(error?.message).toBe(
        `only TRANSFORMATION_TYPE_ENCRYPTED takes a key; ${transformationType} does not encrypt, so leave encryptionKey out`,
      );
    });
  }

  it("requires an encryptionKey with TRANSFORMATION_TYPE_ENCRYPTED and says how to make one", async () => {
    const res = await post(app, "/screen", {
      data: "mail a@b.io",
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_ENCRYPTED" },
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("transformationParams.encryptionKey");
    expect(error?.message).toContain("openssl rand -base64 32");
  });

  it("names an unknown field inside an item by its own path", async () => {
    const res = await post(app, "/screen", {
      data: "hello",
      classificationTypes: [
        { classificationType: "EMAIL", likelihoodType: "LIKELIHOOD_TYPE_LIKELY", likelyhood: "x" },
      ],
    });
    expect(res.status).toBe(422);
    expect((await problem(res)).errors).toEqual([
      {
        path: "classificationTypes.0.likelyhood",
        message: "is not a field of this request; check its spelling",
      },
    ]);
  });

  it("answers 422 naming the field for null or a wrong type instead of applying a default", async () => {
    const cases: [object, string][] = [
      [{ transformationParams: null }, "transformationParams"],
      [{ classificationTypes: {} }, "classificationTypes"],
      [{ biasTypes: "RACE_ETHNICITY" }, "biasTypes"],
      [{ toxicityTypes: [1] }, "toxicityTypes.0"],
    ];
    for (const [extra, path] of cases) {
      const res = await post(app, "/screen", { data: "hello", ...extra });
      expect(res.status, path).toBe(422);
      expect((await problem(res)).errors?.[0]?.path).toBe(path);
    }
  });

  it("refuses data that holds [ENC: under TRANSFORMATION_TYPE_ENCRYPTED with 422 naming data and where", async () => {
    const res = await post(app, "/screen", {
      data: "🙂 see [ENC:EMAIL:abc] and a@b.io",
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_ENCRYPTED", encryptionKey: KEY },
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("data");
    expect(error?.message).toContain('contains "[ENC:" at offset 6');
  });
});

describe("POST /reveal fields", () => {
  /** A token as /screen writes it, for "a@b.io" under KEY. */
  async function encryptedEmail(): Promise<string> {
    const res = await post(app, "/screen", {
      data: "a@b.io",
      classificationTypes: [{ classificationType: "EMAIL", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" }],
      transformationParams: { transformationType: "TRANSFORMATION_TYPE_ENCRYPTED", encryptionKey: KEY },
    });
    return ((await res.json()) as { redactedData: string }).redactedData;
  }

  const revealWithKey = (redactedData: string, encryptionKey = KEY) =>
    post(app, "/reveal", {
      redactedData,
      transformationType: "TRANSFORMATION_TYPE_ENCRYPTED",
      encryptionKey,
    });

  it("refuses an encryptionKey with TRANSFORMATION_TYPE_NUMBERED with 422 naming encryptionKey", async () => {
    const res = await post(app, "/reveal", {
      redactedData: "[EMAIL_1]",
      redactionMaps: [{ redactionString: "[EMAIL_1]", originalData: "a@b.io" }],
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
      encryptionKey: KEY,
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("encryptionKey");
    expect(error?.message).toContain("TRANSFORMATION_TYPE_NUMBERED does not encrypt");
  });

  it("refuses redactionMaps and encryptionKey together with 422 naming redactionMaps", async () => {
    const token = await encryptedEmail();
    const res = await post(app, "/reveal", {
      redactedData: token,
      redactionMaps: [{ redactionString: token, originalData: "someone else" }],
      transformationType: "TRANSFORMATION_TYPE_ENCRYPTED",
      encryptionKey: KEY,
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("redactionMaps");
    expect(error?.message).toContain("not both");
  });

  it("refuses an empty redactionString with 422 naming redactionMaps.1.redactionString", async () => {
    const res = await post(app, "/reveal", {
      redactedData: "[EMAIL_1]",
      redactionMaps: [
        { redactionString: "[EMAIL_1]", originalData: "a@b.io" },
        { redactionString: "", originalData: "c@d.io" },
      ],
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("redactionMaps.1.redactionString");
    expect(error?.message).toContain("must not be empty");
  });

  it("refuses one redactionString mapped to two originals with 422 naming the second", async () => {
    const res = await post(app, "/reveal", {
      redactedData: "[EMAIL_1]",
      redactionMaps: [
        { redactionString: "[EMAIL_1]", originalData: "a@b.io" },
        { redactionString: "[EMAIL_1]", originalData: "c@d.io" },
      ],
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("redactionMaps.1.redactionString");
    expect(error?.message).toContain("redactionMaps.0.redactionString");
  });

  it("accepts the same map entry twice", async () => {
    const entry = { redactionString: "[EMAIL_1]", originalData: "a@b.io" };
    const res = await post(app, "/reveal", {
      redactedData: "to [EMAIL_1]",
      redactionMaps: [entry, entry],
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ originalData: "to a@b.io" });
  });

  it("answers 422 naming the field for an unknown field or a wrong type", async () => {
    const cases: [object, string][] = [
      [
        { redactedData: 7, redactionMaps: [], transformationType: "TRANSFORMATION_TYPE_NUMBERED" },
        "redactedData",
      ],
      [
        { redactedData: "x", redactionMaps: {}, transformationType: "TRANSFORMATION_TYPE_NUMBERED" },
        "redactionMaps",
      ],
      [
        {
          redactedData: "x",
          redactionMaps: [{ redactionString: "x", originalData: "y", classificationType: "EMAIL" }],
          transformationType: "TRANSFORMATION_TYPE_NUMBERED",
        },
        "redactionMaps.0.classificationType",
      ],
      [
        {
          redactedData: "x",
          redactionMaps: [],
          transformationType: "TRANSFORMATION_TYPE_NUMBERED",
          key: "k",
        },
        "key",
      ],
    ];
    for (const [body, path] of cases) {
      const res = await post(app, "/reveal", body);
      expect(res.status, path).toBe(422);
      expect((await problem(res)).errors?.[0]?.path).toBe(path);
    }
  });

  it("refuses a malformed encrypted token with 422 naming redactedData and its offset in code points", async () => {
    const token = await encryptedEmail();
    const payload = token.slice("[ENC:EMAIL:".length, -1);
    const malformed: [string, string][] = [
      [`${token.slice(0, 24)}]`, "its payload was cut or edited"],
      [token.slice(0, -1), "it is not of the form [ENC:<TYPE>:<base64url>]"],
      [`[ENC:EMAIL:${payload}=]`, "it is not of the form"],
      [`[ENC:EMAIL:+${payload.slice(1)}]`, "it is not of the form"],
      [`[ENC:EMAIL:]`, "it is not of the form"],
      [`[ENC:email:${payload}]`, "it is not of the form"],
      [`[ENC:PASSPORT:${payload}]`, "PASSPORT is not a classification type"],
      [`[ENC:${payload}]`, "it is not of the form"],
    ];
    for (const [bad, reason] of malformed) {
      const res = await revealWithKey(`🙂 ${token} then ${bad} end`);
      expect(res.status, bad).toBe(422);
      const error = (await problem(res)).errors?.[0];
      expect(error?.path, bad).toBe("redactedData");
      expect(error?.message, bad).toContain(
        `has a malformed encrypted token at offset ${2 + [...token].length + 6}: ${reason}`,
      );
    }
  });

  it("answers 422 naming encryptionKey for a well-formed token whose ciphertext was edited, as for a wrong key", async () => {
    const token = await encryptedEmail();
    const at = "[ENC:EMAIL:".length + 10;
    const edited = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
    for (const [redactedData, key] of [
      [edited, KEY],
      [token, OTHER_KEY],
    ] as const) {
      const res = await revealWithKey(`x ${redactedData}`, key);
      expect(res.status).toBe(422);
      expect((await problem(res)).errors).toEqual([
        {
          path: "encryptionKey",
          message: "does not decrypt the token at offset 2; wrong key or altered token",
        },
      ]);
    }
  });

  it("hands back text without encrypted tokens unchanged", async () => {
    const text = "No tokens here: [EMAIL_1], ENC:EMAIL, [ENC and [encrypted].";
    const res = await revealWithKey(text);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ originalData: text });
  });
});
