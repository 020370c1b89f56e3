/**
 * Cloudflare Workers entry. The database is a D1 binding (`DB`) when present, otherwise a remote
 * libSQL server (`LAKESMITH_DB_URL`, `LAKESMITH_DB_AUTH_TOKEN` secrets). Migrations are applied
 * ahead of deploys (`wrangler d1 migrations apply` or `npm run db:migrate`), never per request.
 *
 * The app is built once per isolate and the first-start bootstrap runs once per isolate before the
 * first request; it is idempotent, so isolates racing on an empty database are harmless.
 */
import { AgentHub, ForwardingHub, workerAgentGateway } from "./adapter/worker-agent-hub.ts";
import { openWorkerDatabase, type WorkerEnv, workerKeyring } from "./adapter/worker-db.ts";
import { type App, buildApp } from "./app.ts";
import { bootstrap, describeGenerated } from "./bootstrap/bootstrap.ts";
import type { DocsAssets } from "./docs/assets.ts";
import { problemResponse } from "./http/problem.ts";
import { httpEmailApi } from "./notifications/transport.ts";
import type { Scheduler } from "./scheduler/scheduler.ts";
import { createServices, type Services } from "./services.ts";

export type { WorkerEnv };
export { AgentHub };

let ready: Promise<App> | undefined;
/** The scheduler of this isolate's services; the Cron Trigger (`scheduled`) ticks it. */
let scheduler: Scheduler | undefined;
/** The isolate's notifications; the Cron Trigger runs a round after the scheduler's tick. */
let notifications: Services["notifications"] | undefined;

/** The isolate's app, built on first use; a failed start is tried again by the next event. */
function appFor(env: WorkerEnv): Promise<App> {
  ready ??= start(env).catch((err) => {
    ready = undefined;
    throw err;
  });
  return ready;
}

function assetsFrom(env: WorkerEnv): DocsAssets | undefined {
  const assets = env.ASSETS;
  if (!assets) return undefined;
  return {
    async get(name) {
      const res = await assets.fetch(new Request(`https://assets.local/${name}`));
      return res.ok ? res.arrayBuffer() : null;
    },
  };
}

/** Calls to the agent hub made while serving; each request waits for them with `waitUntil`. */
let hub: ForwardingHub | undefined;

async function start(env: WorkerEnv): Promise<App> {
  hub = new ForwardingHub(env);
  const forwarding = hub;
  const gateway = workerAgentGateway(env);
  const services = createServices({
    db: openWorkerDatabase(env),
    secrets: workerKeyring(env),
    hub: () => forwarding,
    ...(gateway ? { agentGateway: () => gateway } : {}),
    ...(env.LAKESMITH_JWT_SECRET ? { jwtSecret: env.LAKESMITH_JWT_SECRET } : {}),
    ...(assetsFrom(env) ? { docsAssets: assetsFrom(env) } : {}),
    notifications: {
      email:
        env.LAKESMITH_EMAIL_API_URL && env.LAKESMITH_EMAIL_API_TOKEN
          ? httpEmailApi({
              url: env.LAKESMITH_EMAIL_API_URL,
              token: env.LAKESMITH_EMAIL_API_TOKEN,
              from: env.LAKESMITH_EMAIL_FROM ?? "Lakesmith <lakesmith@localhost>",
            })
          : undefined,
      log: (message) => console.log(message),
    },
  });
  const result = await bootstrap(services, {
    adminPassword: env.LAKESMITH_ADMIN_PASSWORD,
    adminApiKey: env.LAKESMITH_ADMIN_API_KEY,
    breakGlassPassword: env.LAKESMITH_BREAKGLASS_PASSWORD,
  });
  // Workers have no console of their own: generated credentials go to the log (`wrangler tail`).
  for (const line of describeGenerated(result)) console.log(line);
  if (result.reencryptedSecrets > 0) {
    const keyId = await services.secrets.currentKeyId();
    console.log(
      `[lakesmith] encrypted ${result.reencryptedSecrets} stored secret(s) with secrets key ${keyId}`,
    );
  }
  scheduler = services.scheduler;
  notifications = services.notifications;
  // Cloudflare's edge sets CF-Connecting-IP on every request; clients cannot override it.
  return buildApp(services, { clientAddress: (c) => c.req.header("cf-connecting-ip") });
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    try {
      const app = await appFor(env);
      const response = await app.fetch(request, env, ctx);
      if (hub) ctx.waitUntil(hub.flush());
      return response;
    } catch (err) {
      console.error("[lakesmith] start-up failed:", err);
      return problemResponse(503, "The control plane could not start; see the Worker log.");
    }
  },

  /** The Cron Trigger (`[triggers] crons` in wrangler.toml): one scheduler tick. */
  async scheduled(_controller: ScheduledController, env: WorkerEnv, ctx: ExecutionContext): Promise<void> {
    await appFor(env);
    const result = await (scheduler as Scheduler).tick();
    if (hub) ctx.waitUntil(hub.flush());
    if (result.fired > 0)
      console.log(`[lakesmith] scheduler: ${result.fired} job(s) queued from ${result.due} due schedule(s)`);
    if (result.catalogs.syncs > 0)
      console.log(`[lakesmith] scheduler: ${result.catalogs.syncs} catalog sync(s) queued`);
    const sent = await (notifications as Services["notifications"]).tick();
    if (sent.reports.length > 0) console.log(`[lakesmith] reports queued: ${sent.reports.join(", ")}`);
  },
} satisfies ExportedHandler<WorkerEnv>;
