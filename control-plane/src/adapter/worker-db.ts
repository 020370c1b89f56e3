/**
 * What the Worker and its Durable Objects share: their bindings and secrets, and how the database
 * is opened from them (a D1 binding `DB` when present, otherwise a remote libSQL server).
 */
import { createClient } from "@libsql/client/web";
import { drizzle as drizzleD1 } from "drizzle-orm/d1";
import { drizzle as drizzleLibsql } from "drizzle-orm/libsql/web";
import type { Db } from "../db/index.ts";
import * as schema from "../db/schema.ts";

export interface WorkerEnv {
  DB?: D1Database;
  ASSETS?: Fetcher;
  /** The `AgentHub` Durable Object that holds every agent's WebSocket. */
  AGENT_HUB?: DurableObjectNamespace;
  LAKESMITH_DB_URL?: string;
  LAKESMITH_DB_AUTH_TOKEN?: string;
  LAKESMITH_JWT_SECRET?: string;
  LAKESMITH_ADMIN_PASSWORD?: string;
  LAKESMITH_ADMIN_API_KEY?: string;
  LAKESMITH_BREAKGLASS_PASSWORD?: string;
}

export function openWorkerDatabase(env: WorkerEnv): Db {
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
