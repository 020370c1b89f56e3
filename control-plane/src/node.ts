/**
 * Node entry: `npm start`. Serves the API on PORT with libSQL (an embedded file by default),
 * applies migrations and the first-start bootstrap, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { dirname, resolve } from "node:path";
import { nodeDocsAssets } from "./adapter/node-docs-assets.ts";
import { type LocalAgent, startLocalAgent } from "./adapter/node-local-agent.ts";
import { startNodeServer } from "./adapter/node-server.ts";
import { smtpMailer } from "./adapter/node-smtp.ts";
import { describeGenerated } from "./bootstrap/bootstrap.ts";
import { parseNodeEnv } from "./env.ts";

async function main(): Promise<void> {
  const env = parseNodeEnv(process.env);
  const baseDir = process.env.INIT_CWD ?? process.cwd();
  const dbUrl = resolveFileUrl(env.LAKESMITH_DB_URL, baseDir);
  const server = await startNodeServer({
    dbUrl,
    dbAuthToken: env.LAKESMITH_DB_AUTH_TOKEN,
    port: env.PORT,
    host: env.HOST,
    docsAssets: nodeDocsAssets(),
    jwtSecret: env.LAKESMITH_JWT_SECRET,
    secretsKey: env.LAKESMITH_SECRETS_KEY,
    secretsKeyPrevious: env.LAKESMITH_SECRETS_KEY_PREVIOUS,
    bootstrap: {
      adminPassword: env.LAKESMITH_ADMIN_PASSWORD,
      adminApiKey: env.LAKESMITH_ADMIN_API_KEY,
      breakGlassPassword: env.LAKESMITH_BREAKGLASS_PASSWORD,
    },
    trustProxyHops: env.LAKESMITH_TRUST_PROXY_HOPS,
    mailer: smtpMailer({
      url: env.LAKESMITH_SMTP_URL,
      host: env.LAKESMITH_SMTP_HOST,
      port: env.LAKESMITH_SMTP_PORT,
      user: env.LAKESMITH_SMTP_USER,
      password: env.LAKESMITH_SMTP_PASSWORD,
      from: env.LAKESMITH_SMTP_FROM,
    }),
    log: (level, message, fields) => console[level === "warn" ? "warn" : "log"](message, fields ?? ""),
  });
  for (const line of describeGenerated(server.bootstrapped)) console.log(line);
  if (server.bootstrapped.reencryptedSecrets > 0) {
    const keyId = await server.services.secrets.currentKeyId();
    console.log(
      `Encrypted ${server.bootstrapped.reencryptedSecrets} stored secret(s) with secrets key ${keyId}`,
    );
  }
  console.log(
    `Lakesmith control plane listening on http://${env.HOST}:${server.port} (database ${redact(dbUrl)})`,
  );
  // `npm start` runs the whole system: one agent beside the embedded database (docs/operations.md, "`npm start`: its files, stopping it, the local agent").
  const embedded = dbUrl.startsWith("file:") && !dbUrl.startsWith("file::memory:");
  let localAgent: LocalAgent | undefined;
  if (env.LAKESMITH_LOCAL_AGENT === "1" || (embedded && env.LAKESMITH_LOCAL_AGENT !== "0")) {
    const stateDir = embedded ? dirname(dbUrl.slice("file:".length)) : resolve(baseDir, ".lakesmith");
    localAgent = await startLocalAgent(server.services, server.url, stateDir, process.env);
    console.log(`Local agent started (pid ${localAgent.child.pid}), allowed to use ${stateDir}/data`);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing the server`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    (localAgent?.stop() ?? Promise.resolve())
      .then(() => server.stop())
      .then(
        () => {
          console.log("stopped");
          process.exit(0);
        },
        () => process.exit(1),
      );
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
