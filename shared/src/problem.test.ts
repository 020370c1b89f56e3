import { describe, expect, it } from "vitest";
import { invalidField, problemResponse } from "./problem.ts";

describe("problem responses", () => {
  it("are application/problem+json with type, title, status, detail and field errors", async () => {
    const err = invalidField("limit", "must be at most 1000");
    const res = problemResponse(err.status, err.message, err.errors);
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual({
      type: "https://lakesmith.dev/problems/validation-error",
      title: "Unprocessable Content",
      status: 422,
      detail: "limit: must be at most 1000",
      errors: [{ path: "limit", message: "must be at most 1000" }],
    });
  });
});
