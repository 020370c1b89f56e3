/**
 * Cloudflare Workers entry. The database is a D1 binding (`DB`) when present, otherwise a remote
 * libSQL server (`LAKESMITH_DB_URL`, `LAKESMITH_DB_AUTH_TOKEN` secrets). Migrations are applied
 * ahead of deploys (`wrangler d1 migrations apply` or `npm run db:migrate`), never per request.
 *
 * The app is built once per isolate and the first-start bootstrap runs once per isolate before the
 * first request; it is idempotent, so isolates racing on an empty database are harmless.
 */
import { createClient } from "@libsql/client/web";
import { drizzle as drizzleD1 } from "drizzle-orm/d1";
import { drizzle as drizzleLibsql } from "drizzle-orm/libsql/web";
import { type App, buildApp } from "./app.ts";
import { bootstrap, describeGenerated } from "./bootstrap/bootstrap.ts";
import type { Db } from "./db/index.ts";
import * as schema from "./db/schema.ts";
import type { DocsAssets } from "./docs/assets.ts";
import { problemResponse } from "./http/problem.ts";
import { createServices } from "./services.ts";

export interface WorkerEnv {
  DB?: D1Database;
  ASSETS?: Fetcher;
  LAKESMITH_DB_URL?: string;
  LAKESMITH_DB_AUTH_TOKEN?: string;
  LAKESMITH_JWT_SECRET?: string;
  LAKESMITH_ADMIN_PASSWORD?: string;
  LAKESMITH_ADMIN_API_KEY?: string;
  LAKESMITH_BREAKGLASS_PASSWORD?: string;
}

let ready: Promise<App> | undefined;

function openDatabase(env: WorkerEnv): Db {
  if (env.DB) return drizzleD1(env.DB, { schema }) as unknown as Db;
  if (env.LAKESMITH_DB_URL) {
    const client = createClient({
      url: env.LAKESMITH_DB_URL,
      ...(env.LAKESMITH_DB_AUTH_TOKEN ? { authToken: env.LAKESMITH_DB_AUTH_TOKEN } : {}),
    });
    return drizzleLibsql(client, { schema }) as unknown as Db;
  }
  throw new Error("No database: bind a D1 database as DB or set the LAKESMITH_DB_URL secret.");
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

async function start(env: WorkerEnv): Promise<App> {
  const services = createServices({
    db: openDatabase(env),
    ...(env.LAKESMITH_JWT_SECRET ? { jwtSecret: env.LAKESMITH_JWT_SECRET } : {}),
    ...(assetsFrom(env) ? { docsAssets: assetsFrom(env) } : {}),
  });
  const result = await bootstrap(services, {
    adminPassword: env.LAKESMITH_ADMIN_PASSWORD,
    adminApiKey: env.LAKESMITH_ADMIN_API_KEY,
    breakGlassPassword: env.LAKESMITH_BREAKGLASS_PASSWORD,
  });
  // Workers have no console of their own: generated credentials go to the log (`wrangler tail`).
  for (const line of describeGenerated(result)) console.log(line);
  return buildApp(services);
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    try {
      ready ??= start(env).catch((err) => {
        ready = undefined;
        throw err;
      });
      const app = await ready;
      return app.fetch(request, env, ctx);
    } catch (err) {
      console.error("[lakesmith] start-up failed:", err);
      return problemResponse(503, "The control plane could not start; see the Worker log.");
    }
  },
} satisfies ExportedHandler<WorkerEnv>;
