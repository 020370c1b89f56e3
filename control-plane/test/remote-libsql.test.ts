/**
 * The control plane on a remote libSQL URL with an auth token (LAKESMITH_DB_URL and
 * LAKESMITH_DB_AUTH_TOKEN), against the test-only Hrana-over-HTTP server in `support/`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { buildApp } from "../src/app.ts";
import { bootstrap } from "../src/bootstrap/bootstrap.ts";
import { Keyring } from "../src/secrets/keyring.ts";
import { createServices } from "../src/services.ts";
import { ADMIN_KEY } from "./harness.ts";
import { startLibsqlHttpServer } from "./support/libsql-http-server.ts";

const TOKEN = "remote-libsql-test-token";
/** The installation's secrets key: the same for every start, as `LAKESMITH_SECRETS_KEY` would be. */
const secrets = Keyring.random();
const dir = mkdtempSync(join(tmpdir(), "lakesmith-remote-"));
let server: Awaited<ReturnType<typeof startLibsqlHttpServer>>;

beforeAll(async () => {
  server = await startLibsqlHttpServer(join(dir, "remote.db"), TOKEN);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a remote libSQL database", () => {
  it("refuses a wrong auth token at start", async () => {
    await expect(openNodeDatabase(server.url, "wrong-token")).rejects.toThrow();
  });

  it("migrates, bootstraps and serves the API", async () => {
    const { db, client } = await openNodeDatabase(server.url, TOKEN);
    try {
      const services = createServices({ db, secrets });
      await bootstrap(services, { adminApiKey: ADMIN_KEY, adminPassword: "remote-admin-password" });
      const app = buildApp(services);
      const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

      const health = await (await app.request("/api/v1/health", { headers })).json();
      expect(health.components.database.status).toBe("ok");
      const put = await app.request("/api/v1/config", {
        method: "PUT",
        headers,
        body: JSON.stringify({ cloud_discount_percent: 12, daily_report_recipients: ["a@example.com"] }),
      });
      expect(put.status).toBe(200);
      const user = await app.request("/api/v1/users", {
        method: "POST",
        headers,
        body: JSON.stringify({
          full_name: "Remote User",
          email: "remote@example.com",
          role: "Viewer",
          auth_type: "oidc",
        }),
      });
      expect(user.status).toBe(201);
      const login = await app.request("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: "remote-admin-password" }),
      });
      expect(login.status).toBe(200);
    } finally {
      client.close();
    }
  });

  it("keeps the data for the next start and applies no migration twice", async () => {
    const { db, client } = await openNodeDatabase(server.url, TOKEN);
    try {
      const services = createServices({ db, secrets });
      const result = await bootstrap(services, {});
      expect(result.firstStart).toBe(false);
      const config = await services.config.get();
      expect(config.values.cloud_discount_percent).toBe(12);
      expect(config.values.daily_report_recipients).toEqual(["a@example.com"]);
    } finally {
      client.close();
    }
  });
});
