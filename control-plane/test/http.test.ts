import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepAliveClient } from "../../test/support/keep-alive-client.ts";
import { type NodeServer, startNodeServer } from "../src/adapter/node-server.ts";
import { MAX_BODY_BYTES } from "../src/app.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

async function expectProblem(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  const body = await res.json();
  expect(body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.ts:\d+/);
  return body;
}

describe("health", () => {
  it("GET /healthz is open and says nothing but ok", async () => {
    const res = await plane.call("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
  });

  it("GET /api/v1/health reports the database to any authenticated caller", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const { key } = await plane.apiKey(["tables:read"]);
    for (const token of [viewer.token, key]) {
      const res = await plane.call("GET", "/api/v1/health", { token });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.status).toBe("ok");
      expect(body.components.database).toMatchObject({ status: "ok", latency_ms: expect.any(Number) });
    }
  });
});

describe("errors", () => {
  it("unknown routes are 404 problems for authenticated callers and 401 for anonymous ones", async () => {
    await expectProblem(await plane.call("GET", "/api/v1/nothing-here", { token: ADMIN_KEY }), 404);
    await expectProblem(await plane.call("GET", "/api/v1/nothing-here"), 401);
  });

  it("malformed JSON is 400", async () => {
    const body = await expectProblem(
      await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, rawBody: '{"cloud_discount_percent": ' }),
      400,
    );
    expect(body.detail).toMatch(/json/i);
  });

  it("a body that is not JSON is refused with a 4xx problem", async () => {
    const res = await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      rawBody: "cloud_discount_percent=5",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });

  it("a missing body is 4xx, never a silent empty update", async () => {
    const res = await plane.call("POST", "/api/v1/users", { token: ADMIN_KEY });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it("validation failures are 422 with one entry per field", async () => {
    const body = await expectProblem(
      await plane.call("POST", "/api/v1/api-keys", { token: ADMIN_KEY, body: { name: 5, scopes: [] } }),
      422,
    );
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["name", "scopes"]);
  });

  it("bodies above the limit are 413", async () => {
    const huge = JSON.stringify({ customer_name: "x".repeat(MAX_BODY_BYTES + 10) });
    await expectProblem(await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, rawBody: huge }), 413);
  });
});

describe("a 413 on a keep-alive connection of the Node server", () => {
  let server: NodeServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lakesmith-keepalive-"));
    server = await startNodeServer({
      dbUrl: `file:${join(dir, "t.db")}`,
      port: 0,
      bootstrap: { adminApiKey: ADMIN_KEY },
      schedulerIntervalMs: 0,
    });
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
  const justOver = (extra: number) =>
    Buffer.from(JSON.stringify({ customer_name: "x".repeat(MAX_BODY_BYTES + extra) }));

  for (const [name, chunked] of [
    ["with a Content-Length", false],
    ["chunked, without a Content-Length", true],
  ] as const) {
    it(`answers a body just over the limit ${name} with 413 and serves the next request on the same socket`, async () => {
      const client = keepAliveClient(server.url);
      try {
        for (const extra of [1, 64 * 1024, MAX_BODY_BYTES]) {
          const refused = await client.send("PUT", "/api/v1/config", {
            body: justOver(extra),
            chunked,
            headers: auth,
          });
          expect(refused.status).toBe(413);
          expect(JSON.parse(refused.body).detail).toContain(String(MAX_BODY_BYTES));
          const next = await client.send("GET", "/api/v1/health", { headers: auth });
          expect(next.status).toBe(200);
          expect(next.socket).toBe(refused.socket);
        }
      } finally {
        client.close();
      }
    });
  }

  it("says Connection: close on the 413 of a body that declares more than it will drain", async () => {
    const socket = connect(server.port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
    });
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.write(
      `PUT /api/v1/config HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${5 * MAX_BODY_BYTES}\r\n\r\n{"customer_name":"`,
    );
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain("connection: close");
  });

  it("serves the next request on the same socket after a 401 that never read the body", async () => {
    const client = keepAliveClient(server.url);
    try {
      const body = justOver(-1024);
      const refused = await client.send("PUT", "/api/v1/config", { body, chunked: true });
      expect(refused.status).toBe(401);
      const next = await client.send("PUT", "/api/v1/config", {
        body: Buffer.from('{"customer_name":"Acme"}'),
        headers: auth,
      });
      expect(next.status).toBe(200);
      expect(next.socket).toBe(refused.socket);
    } finally {
      client.close();
    }
  });
});

describe("API docs", () => {
  it("serve /openapi.json, /docs and /redoc to Admin only", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const editor = await plane.userWithRole("Editor");
    for (const path of ["/openapi.json", "/docs", "/redoc"]) {
      expect((await plane.call("GET", path)).status, path).toBe(401);
      expect((await plane.call("GET", path, { token: viewer.token })).status, path).toBe(403);
      expect((await plane.call("GET", path, { token: editor.token })).status, path).toBe(403);
      expect((await plane.call("GET", path, { token: ADMIN_KEY })).status, path).toBe(200);
    }
  });

  it("describes the routes, their access and the problem shape", async () => {
    const doc = await (await plane.call("GET", "/openapi.json", { token: ADMIN_KEY })).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.paths["/api/v1/config"].put["x-lakesmith-access"]).toEqual({
      kind: "guarded",
      role: "Admin",
      scope: "config:write",
    });
    expect(doc.components.schemas.Problem.properties).toHaveProperty("errors");
    expect(doc.info.description).toContain("object-maintenance");
  });

  it("the pages embed the document and load their scripts from this server only", async () => {
    for (const path of ["/docs", "/redoc"]) {
      const html = await (await plane.call("GET", path, { token: ADMIN_KEY })).text();
      expect(html).toContain("/api/v1/config");
      const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
      expect(sources.length).toBeGreaterThan(0);
      for (const src of sources) {
        expect(src.startsWith("/docs/assets/"), src).toBe(true);
        const asset = await plane.call("GET", src);
        expect(asset.status, src).toBe(200);
        expect((await asset.text()).length).toBeGreaterThan(10_000);
      }
    }
  });

  it("answers 404 for an unknown docs asset", async () => {
    expect((await plane.call("GET", "/docs/assets/evil.js")).status).toBe(404);
  });
});
