import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = await (await plane.call("GET", "/openapi.json", { token: ADMIN_KEY })).json();
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
  });

  it("documents a bearer security scheme and the errors every guarded route can give", async () => {
    const doc = await (await plane.call("GET", "/openapi.json", { token: ADMIN_KEY })).json();
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const getConfig = doc.paths["/api/v1/config"].get;
    expect(Object.keys(getConfig.responses)).toEqual(expect.arrayContaining(["200", "401", "403"]));
    expect(doc.paths["/api/v1/auth/login"].post.security).toEqual([]);
  });
});
