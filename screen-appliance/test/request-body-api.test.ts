import { beforeAll, describe, expect, it } from "vitest";
import { post, problem, type TestApp, testApp } from "./helpers.ts";

// What the appliance accepts as a request body before it looks at any field: JSON, as UTF-8, with
// Content-Type: application/json, each member named once.

let app: TestApp;
beforeAll(async () => {
  app = await testApp();
});

/** POST with the given headers; a string body is sent as UTF-8 bytes so no Content-Type is implied. */
function send(path: string, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return app.request(path, { method: "POST", headers, body: bytes });
}

const SCREEN_BODY = JSON.stringify({ data: "mail a@b.io" });
const REVEAL_BODY = JSON.stringify({
  redactedData: "[EMAIL_1]",
  redactionMaps: [{ redactionString: "[EMAIL_1]", originalData: "a@b.io" }],
  transformationType: "TRANSFORMATION_TYPE_NUMBERED",
});
const ROUTES: [string, string][] = [
  ["/screen", SCREEN_BODY],
  ["/reveal", REVEAL_BODY],
];

describe("request content type", () => {
  for (const [route, body] of ROUTES) {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      it(`refuses a ${contentType} body on ${route} with 415 naming application/json`, async () => {
        const res = await send(route, body, { "content-type": contentType });
        expect(res.status).toBe(415);
        const detail = (await problem(res)).detail;
        expect(detail).toContain(contentType);
        expect(detail).toContain("Content-Type: application/json");
      });
    }

    it(`refuses a body without a Content-Type on ${route} with 415 naming application/json`, async () => {
      const res = await send(route, body);
      expect(res.status).toBe(415);
      expect((await problem(res)).detail).toContain("Content-Type: application/json");
    });

    it(`accepts application/json on ${route} in any case and with charset=utf-8`, async () => {
      for (const contentType of [
        "application/json",
        "Application/JSON; charset=UTF-8",
        'application/json;charset="utf-8"',
      ]) {
        const res = await send(route, body, { "content-type": contentType });
        expect(res.status, contentType).toBe(200);
      }
    });
  }

  it("refuses a +json media type with 415, since it names another format", async () => {
    const res = await send("/screen", SCREEN_BODY, { "content-type": "application/merge-patch+json" });
    expect(res.status).toBe(415);
    expect((await problem(res)).detail).toContain("Content-Type: application/json");
  });

  it("refuses a charset other than UTF-8 with 415 rather than decoding the bytes as UTF-8", async () => {
    const res = await send("/screen", SCREEN_BODY, {
      "content-type": "application/json; charset=iso-8859-1",
    });
    expect(res.status).toBe(415);
    expect((await problem(res)).detail).toContain("UTF-8");
  });

  it("refuses a compressed body with 415 naming Content-Encoding", async () => {
    const res = await send("/screen", SCREEN_BODY, {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    expect(res.status).toBe(415);
    expect((await problem(res)).detail).toContain("Content-Encoding gzip");
  });

  it("answers 422 on (body) for bytes that are not UTF-8 instead of replacing them", async () => {
    const latin1 = Uint8Array.from(Buffer.from('{"data":"Mar\xeda a@b.io"}', "latin1"));
    const res = await send("/screen", latin1, { "content-type": "application/json" });
    expect(res.status).toBe(422);
    const body = await problem(res);
    expect(body.errors).toEqual([{ path: "(body)", message: "must be JSON encoded as UTF-8" }]);
  });

  it("answers 422 for a body that is not JSON on /reveal too, with the parser's reason", async () => {
    const res = await post(app, "/reveal", '{"redactedData": ');
    expect(res.status).toBe(422);
    const error = (await problem(res)).errors?.[0];
    expect(error?.path).toBe("(body)");
    expect(error?.message).toContain("must be a JSON object (");
  });

  it("refuses a field given twice with 422 naming it instead of keeping the last", async () => {
    const res = await post(
      app,
      "/reveal",
      '{"redactedData": "x", "redactionMaps": [{"redactionString": "x", "originalData": "a", "originalData": "b"}], "transformationType": "TRANSFORMATION_TYPE_NUMBERED"}',
    );
    expect(res.status).toBe(422);
    expect((await problem(res)).errors).toEqual([
      { path: "redactionMaps.0.originalData", message: "is given twice; send each field once" },
    ]);
  });
});
