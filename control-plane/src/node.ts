/**
 * Node entry: `npm start`. Serves the API on PORT with libSQL (an embedded file by default),
 * applies migrations and the first-start bootstrap, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { serve } from "@hono/node-server";
import { openNodeDatabase } from "./adapter/node-db.ts";
import { nodeDocsAssets } from "./adapter/node-docs-assets.ts";
import { buildApp } from "./app.ts";
import { bootstrap, describeGenerated } from "./bootstrap/bootstrap.ts";
import { parseNodeEnv } from "./env.ts";
import { createServices } from "./services.ts";

async function main(): Promise<void> {
  const env = parseNodeEnv(process.env);
  const { db, client } = await openNodeDatabase(env.LAKESMITH_DB_URL, env.LAKESMITH_DB_AUTH_TOKEN);
  const services = createServices({
    db,
    docsAssets: nodeDocsAssets(),
    ...(env.LAKESMITH_JWT_SECRET ? { jwtSecret: env.LAKESMITH_JWT_SECRET } : {}),
  });
  const result = await bootstrap(services, {
    adminPassword: env.LAKESMITH_ADMIN_PASSWORD,
    adminApiKey: env.LAKESMITH_ADMIN_API_KEY,
    breakGlassPassword: env.LAKESMITH_BREAKGLASS_PASSWORD,
  });
  for (const line of describeGenerated(result)) console.log(line);

  const app = buildApp(services);
  const server = serve({ fetch: app.fetch, port: env.PORT, hostname: env.HOST }, (info) => {
    console.log(
      `Lakesmith control plane listening on http://${env.HOST}:${info.port} (database ${redact(env.LAKESMITH_DB_URL)})`,
    );
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing the server`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close(() => {
      client.close();
      console.log("stopped");
      process.exit(0);
    });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** Hides credentials in a database URL before it is logged. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@").replace(/([?&]authToken=)[^&]*/i, "$1***");
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
