/**
 * What the Worker and its Durable Objects share: their bindings and secrets, and how the database
 * is opened from them (a D1 binding `DB` when present, otherwise a remote libSQL server).
 */
import { createClient } from "@libsql/client/web";
import { drizzle as drizzleD1 } from "drizzle-orm/d1";
import { drizzle as drizzleLibsql } from "drizzle-orm/libsql/web";
import type { Db } from "../db/index.ts";
import * as schema from "../db/schema.ts";
import { Keyring } from "../secrets/keyring.ts";

export interface WorkerEnv {
  DB?: D1Database;
  ASSETS?: Fetcher;
  /** The `AgentHub` Durable Object that holds every agent's WebSocket. */
  AGENT_HUB?: DurableObjectNamespace;
  LAKESMITH_DB_URL?: string;
  LAKESMITH_DB_AUTH_TOKEN?: string;
  LAKESMITH_JWT_SECRET?: string;
  /** Encrypts the secrets stored in the database; required (`wrangler secret put LAKESMITH_SECRETS_KEY`). */
  LAKESMITH_SECRETS_KEY?: string;
  /** Comma-separated older keys, for decryption only, during a rotation. */
  LAKESMITH_SECRETS_KEY_PREVIOUS?: string;
  LAKESMITH_ADMIN_PASSWORD?: string;
  LAKESMITH_ADMIN_API_KEY?: string;
  LAKESMITH_BREAKGLASS_PASSWORD?: string;
  /** An HTTP email API for notifications (`notifications/transport.ts`, `httpEmailApi`): its endpoint, */
  LAKESMITH_EMAIL_API_URL?: string;
  /** its bearer token (`wrangler secret put LAKESMITH_EMAIL_API_TOKEN`), */
  LAKESMITH_EMAIL_API_TOKEN?: string;
  /** and the From address. */
  LAKESMITH_EMAIL_FROM?: string;
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

/**
 * The secrets keyring from the Worker's secrets. A Worker has no disk to keep a generated key on, so
 * the key is required; without it the start fails (503) and the log says how to set it.
 */
export function workerKeyring(env: WorkerEnv): Keyring {
  if (!env.LAKESMITH_SECRETS_KEY) {
    throw new Error(
      "LAKESMITH_SECRETS_KEY is not set: run `npx wrangler secret put LAKESMITH_SECRETS_KEY` and paste 32 random bytes in base64 (`openssl rand -base64 32`); keep a copy, the stored secrets cannot be read without it.",
    );
  }
  return Keyring.fromEnv(env.LAKESMITH_SECRETS_KEY, env.LAKESMITH_SECRETS_KEY_PREVIOUS);
}
