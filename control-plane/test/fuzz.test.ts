/**
 * Sends malformed bodies, queries, ids and headers to every route in the OpenAPI document and
 * asserts that each answer is a 2xx or a 4xx problem: never a 500, never a stack trace.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { fillPath, type Operation, operationsOf } from "./openapi-walk.ts";

let plane: TestPlane;
let operations: Operation[];
/** Operations that may carry a body (fetch refuses a body on GET and HEAD). */
let withBody: Operation[];
beforeAll(async () => {
  plane = await startTestPlane();
  operations = await operationsOf(plane);
  withBody = operations.filter((op) => op.method !== "GET" && op.method !== "HEAD");
});
afterAll(() => plane.close());

async function expectHandled(res: Response, what: string) {
  const text = await res.text();
  expect(res.status, `${what} -> ${res.status} ${text.slice(0, 200)}`).toBeLessThan(500);
  expect(text, what).not.toMatch(/\n\s+at .+:\d+:\d+/);
  if (res.status >= 400) expect(res.headers.get("content-type"), what).toContain("application/problem+json");
}

const jsonish = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "{",
    "[",
    "null",
    "true",
    "1e999",
    '{"a":',
    '{"__proto__":{"x":1}}',
    "\u0000",
    '"\\ud800"',
    "{}".repeat(50),
  ),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string(), fc.jsonValue()).map((o) => JSON.stringify(o)),
);
const weirdSegment = fc.oneof(
  fc.string({ minLength: 1 }).map(encodeURIComponent),
  fc.constantFrom(
    "%ZZ",
    "%",
    "..",
    "%2e%2e",
    "%00",
    "a%2Fb",
    "x".repeat(5000),
    "ünïcødé",
    "🦆",
    "'; drop table users;--",
  ),
);
const weirdQuery = fc.oneof(
  fc.dictionary(fc.constantFrom("offset", "limit", "status", "name", "q", "x"), fc.string()).map((d) =>
    Object.entries(d)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join("&"),
  ),
  fc.constantFrom(
    "offset=-1",
    "limit=abc",
    "limit=1e9",
    "offset=1.5",
    "limit=&limit=2",
    "%ZZ=1",
    "a[]=1&a[]=2",
    "limit=9007199254740993",
  ),
);

describe("fuzzing every route", () => {
  it("survives malformed JSON bodies", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withBody), jsonish, async (op, body) => {
        const res = await plane.call(op.method, fillPath(op.path), { token: ADMIN_KEY, rawBody: body });
        await expectHandled(res, `${op.method} ${op.path} body=${body.slice(0, 80)}`);
      }),
      { numRuns: 400 },
    );
  });

  it("survives malformed ids and queries", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...operations), weirdSegment, weirdQuery, async (op, id, query) => {
        const path = `${fillPath(op.path, id)}?${query}`;
        const res = await plane.call(op.method, path, {
          token: ADMIN_KEY,
          ...(op.hasBody ? { body: {} } : {}),
        });
        await expectHandled(res, `${op.method} ${path.slice(0, 120)}`);
      }),
      { numRuns: 400 },
    );
  });

  it("survives wrong content types and odd credentials", async () => {
    const contentTypes = fc.constantFrom(
      "text/plain",
      "application/xml",
      "multipart/form-data",
      "application/json; charset=latin1",
      "",
    );
    const credentials = fc.oneof(
      fc.string().map((s) => `Bearer ${s}`),
      fc.constantFrom(
        "Bearer lsk_",
        "Bearer a.b.c",
        "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
        "Bearer lsr_x",
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withBody), contentTypes, credentials, async (op, type, auth) => {
        let res = await plane.call(op.method, fillPath(op.path), {
          token: ADMIN_KEY,
          rawBody: "{}",
          headers: { "content-type": type },
        });
        await expectHandled(res, `${op.method} ${op.path} content-type=${type}`);
        res = await plane
          .call(op.method, fillPath(op.path), { headers: { authorization: auth } })
          .catch(() => null as never);
        if (res) await expectHandled(res, `${op.method} ${op.path} auth=${auth.slice(0, 40)}`);
      }),
      { numRuns: 200 },
    );
  });
});
