// The workerd suite: a smoke subset of the API through the Worker build (src/worker.ts), inside the
// real Workers runtime, against a real SQLite engine (a local D1 database with our migrations).
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { OIDC_TEST_CLIENT } from "./test/support/oidc-client.ts";
import { startOidcProvider } from "./test/support/oidc-provider.ts";

const migrations = await readD1Migrations(fileURLToPath(new URL("./drizzle", import.meta.url)));
// A real OpenID Connect provider on loopback for the OIDC login through the Worker (sso.test.ts); the
// Worker reaches it with its own fetch. Its servers don't hold the process open.
const oidc = await startOidcProvider([OIDC_TEST_CLIENT("https://lakesmith.test")], { unref: true });

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: fileURLToPath(new URL("../wrangler.toml", import.meta.url)) },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          TEST_OIDC_ISSUER: oidc.issuer,
          LAKESMITH_ADMIN_PASSWORD: "workerd-admin-password",
          LAKESMITH_ADMIN_API_KEY: "lsk_workerdtestkey0000000000000000000000000000",
          LAKESMITH_JWT_SECRET: "workerd-test-signing-secret-0000000000000",
          // 32 bytes in base64, as `wrangler secret put LAKESMITH_SECRETS_KEY` would hold.
          LAKESMITH_SECRETS_KEY: "d29ya2VyZC10ZXN0LXNlY3JldHMta2V5LTAwMDAwMDA=",
          // The HTTP email API (a third-party service): notifications.test.ts answers it with a fetch mock.
          LAKESMITH_EMAIL_API_URL: "https://email-api.test/emails",
          LAKESMITH_EMAIL_API_TOKEN: "workerd-email-api-token",
          LAKESMITH_EMAIL_FROM: "lakesmith@example.com",
        },
      },
    }),
  ],
  test: {
    include: ["test/workers/**/*.test.ts"],
    setupFiles: ["./test/workers/apply-migrations.ts"],
  },
});
