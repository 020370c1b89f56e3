/**
 * Node entry: `npm start`. Serves the API on PORT with libSQL (an embedded file by default),
 * applies migrations and the first-start bootstrap, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { resolve } from "node:path";
import { serve } from "@hono/node-server";
import { openNodeDatabase } from "./adapter/node-db.ts";
import { nodeDocsAssets } from "./adapter/node-docs-assets.ts";
import { buildApp } from "./app.ts";
import { bootstrap, describeGenerated } from "./bootstrap/bootstrap.ts";
import { parseNodeEnv } from "./env.ts";
import { createServices } from "./services.ts";

async function main(): Promise<void> {
  const env = parseNodeEnv(process.env);
  const dbUrl = resolveFileUrl(env.LAKESMITH_DB_URL, process.env.INIT_CWD ?? process.cwd());
  const { db, client } = await openNodeDatabase(dbUrl, env.LAKESMITH_DB_AUTH_TOKEN);
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
      `Lakesmith control plane listening on http://${env.HOST}:${info.port} (database ${redact(dbUrl)})`,
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

/**
 * Makes a relative `file:` URL relative to where the user ran the command: npm runs workspace
 * scripts inside the workspace folder, but `npm start` at the root should keep `./.lakesmith/`
 * at the root. npm records the original folder in INIT_CWD.
 */
function resolveFileUrl(url: string, baseDir: string): string {
  if (!url.startsWith("file:") || url.startsWith("file::memory:")) return url;
  const path = url.slice("file:".length);
  return path.startsWith("/") ? url : `file:${resolve(baseDir, path)}`;
}

/** Hides credentials in a database URL before it is logged. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@").replace(/([?&]authToken=)[^&]*/i, "$1***");
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
