/** A 413 leaves the keep-alive connection usable: the next request on the same socket is answered. */
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepAliveClient } from "../../test/support/keep-alive-client.ts";
import { serveApp } from "../src/http/serve.ts";
import { testApp } from "./helpers.ts";

const LIMIT = 1024 * 1024;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  const served = await serveApp(await testApp({ maxBodyBytes: LIMIT }), {
    port: 0,
    hostname: "127.0.0.1",
    maxBodyBytes: LIMIT,
  });
  server = served.server;
  baseUrl = `http://127.0.0.1:${served.port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = { "content-type": "application/json" };
const justOver = (extra: number) => Buffer.from(JSON.stringify({ data: "x".repeat(LIMIT + extra) }));

describe("a 413 on a keep-alive connection of the appliance", () => {
  for (const [name, chunked] of [
    ["with a Content-Length", false],
    ["chunked, without a Content-Length", true],
  ] as const) {
    it(`answers a body just over the limit ${name} with 413 and serves the next request on the same socket`, async () => {
      const client = keepAliveClient(baseUrl);
      try {
        for (const extra of [1, 64 * 1024, LIMIT]) {
          const refused = await client.send("POST", "/screen", {
            body: justOver(extra),
            chunked,
            headers: json,
          });
          expect(refused.status).toBe(413);
          expect(JSON.parse(refused.body).detail).toContain(`${LIMIT} bytes`);
          const next = await client.send("POST", "/screen", {
            body: Buffer.from(JSON.stringify({ data: "mail ann@example.com" })),
            headers: json,
          });
          expect(next.status).toBe(200);
          expect(JSON.parse(next.body).findings.length).toBeGreaterThan(0);
          expect(next.socket).toBe(refused.socket);
        }
      } finally {
        client.close();
      }
    });
  }
});
