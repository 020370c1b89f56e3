/**
 * Every list in the API has one of the two shapes of `http/pagination.ts`: `{items, total, offset,
 * limit}` with `offset`/`limit` query parameters, or (document 2's keyset lists, whose page has a
 * `next_page_token`) `{items, total, page_size, next_page_token}` with `page_size`/`page_token`.
 * Walks the OpenAPI document, so a new list endpoint is checked without being named here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

describe("list endpoints", () => {
  it("all return {items, total, offset, limit} and honour offset and limit", async () => {
    type Schema = { $ref?: string; properties?: Record<string, unknown> };
    type Get = { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> };
    const doc = (await (await plane.call("GET", "/openapi.json", { token: ADMIN_KEY })).json()) as {
      paths: Record<string, { get?: Get }>;
      components: { schemas: Record<string, Schema> };
    };
    const lists = Object.entries(doc.paths)
      .filter(([path, item]) => item.get && !path.includes("{"))
      .filter(([, item]) => {
        const schema = item.get?.responses?.["200"]?.content?.["application/json"]?.schema;
        const ref = schema?.$ref?.split("/").at(-1);
        const resolved = ref ? doc.components.schemas[ref] : schema;
        return resolved?.properties?.items !== undefined;
      })
      .map(([path, item]) => {
        const schema = item.get?.responses?.["200"]?.content?.["application/json"]?.schema;
        const ref = schema?.$ref?.split("/").at(-1);
        const resolved = ref ? doc.components.schemas[ref] : schema;
        return { path, keyset: resolved?.properties?.next_page_token !== undefined };
      });
    const keyset = lists.filter((l) => l.keyset).map((l) => l.path);
    expect(keyset).toEqual(expect.arrayContaining(["/api/v1/catalogs"]));
    for (const path of keyset) {
      const res = await plane.call("GET", `${path}?page_size=1`, { token: ADMIN_KEY });
      expect(res.status, path).toBe(200);
      const body = await res.json();
      expect(Object.keys(body).sort(), path).toEqual(["items", "next_page_token", "page_size", "total"]);
      expect(body.page_size, path).toBe(1);
      expect(body.items.length, path).toBeLessThanOrEqual(1);
      for (const bad of ["page_size=0", "page_token=not-a-token"]) {
        const res = await plane.call("GET", `${path}?${bad}`, { token: ADMIN_KEY });
        expect(res.status, `${path}?${bad}`).toBe(422);
      }
    }
    const offsetLists = lists.filter((l) => !l.keyset).map((l) => l.path);
    expect(offsetLists).toEqual(
      expect.arrayContaining(["/api/v1/api-keys", "/api/v1/agents", "/api/v1/jobs", "/api/v1/tables"]),
    );
    for (const path of offsetLists) {
      const res = await plane.call("GET", `${path}?offset=1&limit=1`, { token: ADMIN_KEY });
      expect(res.status, path).toBe(200);
      const body = await res.json();
      expect(Object.keys(body).sort(), path).toEqual(["items", "limit", "offset", "total"]);
      expect(body, path).toMatchObject({ offset: 1, limit: 1 });
      expect(body.items.length, path).toBeLessThanOrEqual(1);
      const bad = await plane.call("GET", `${path}?limit=0`, { token: ADMIN_KEY });
      expect(bad.status, path).toBe(422);
    }
  });
});
