// The workerd suite: a smoke subset of the API through the Worker build (src/worker.ts), inside the
// real Workers runtime, against a real SQLite engine (a local D1 database with our migrations).
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const migrations = await readD1Migrations(fileURLToPath(new URL("./drizzle", import.meta.url)));

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: fileURLToPath(new URL("../wrangler.toml", import.meta.url)) },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          LAKESMITH_ADMIN_PASSWORD: "workerd-admin-password",
          LAKESMITH_ADMIN_API_KEY: "lsk_workerdtestkey0000000000000000000000000000",
          LAKESMITH_JWT_SECRET: "workerd-test-signing-secret-0000000000000",
          // 32 bytes in base64, as `wrangler secret put LAKESMITH_SECRETS_KEY` would hold.
          LAKESMITH_SECRETS_KEY: "d29ya2VyZC10ZXN0LXNlY3JldHMta2V5LTAwMDAwMDA=",
        },
      },
    }),
  ],
  test: {
    include: ["test/workers/**/*.test.ts"],
    setupFiles: ["./test/workers/apply-migrations.ts"],
  },
});
