/**
 * A control plane for tests: a fresh embedded libSQL file with the real migrations, the real app,
 * and helpers to call it as the bootstrap admin key, a logged-in user or anonymously.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@lakesmith/shared";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { nodeDocsAssets } from "../src/adapter/node-docs-assets.ts";
import { nodeSamlEngine } from "../src/adapter/node-saml.ts";
import { buildApp } from "../src/app.ts";
import { bootstrap } from "../src/bootstrap/bootstrap.ts";
import type { Role } from "../src/db/schema.ts";
import type { LeaseTimings } from "../src/jobs/timings.ts";
import type { Transports } from "../src/notifications/dispatcher.ts";
import { Keyring } from "../src/secrets/keyring.ts";
import { createServices } from "../src/services.ts";

export const ADMIN_KEY = `lsk_${"t".repeat(40)}`;
export const ADMIN_PASSWORD = "admin-password-for-tests";

export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export type TestPlane = Awaited<ReturnType<typeof startTestPlane>>;

/**
 * No agent answers over a socket here, so by default a validate answers 202 at once instead of
 * waiting `preflightWaitMs` for an answer that can't come.
 */
const TEST_TIMINGS: Partial<LeaseTimings> = { preflightWaitMs: 0 };

export async function startTestPlane(
  options: { clock?: Clock; leaseTimings?: Partial<LeaseTimings>; notifications?: Transports } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-test-"));
  const dbUrl = `file:${join(dir, "test.db")}`;
  const database = await openNodeDatabase(dbUrl);
  const { db } = database;
  const services = createServices({
    db,
    secrets: Keyring.random(),
    saml: nodeSamlEngine,
    ...(database.statements ? { statements: database.statements } : {}),
    docsAssets: nodeDocsAssets(),
    leaseTimings: { ...TEST_TIMINGS, ...options.leaseTimings },
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.notifications ? { notifications: options.notifications } : {}),
  });
  await bootstrap(services, { adminPassword: ADMIN_PASSWORD, adminApiKey: ADMIN_KEY });
  const app = buildApp(services);

  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
    const headers = new Headers(opts.headers);
    if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
    let body: string | undefined = opts.rawBody;
    if (body === undefined && opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
    return app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) });
  }

  async function login(username: string, password: string) {
    const res = await call("POST", "/api/v1/auth/login", { body: { username, password } });
    if (res.status !== 200) throw new Error(`login as ${username} failed: ${res.status} ${await res.text()}`);
    return (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
  }

  /** Creates a password user with the role and returns its id and an access token. */
  async function userWithRole(
    role: Role,
    username = `${role.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}`,
  ) {
    const password = `${username}-password`;
    const res = await call("POST", "/api/v1/users", {
      token: ADMIN_KEY,
      body: { full_name: `${role} User`, username, email: `${username}@example.com`, password, role },
    });
    if (res.status !== 201) throw new Error(`creating ${username} failed: ${res.status} ${await res.text()}`);
    const user = (await res.json()) as { id: string };
    const tokens = await login(username, password);
    return { id: user.id, username, password, token: tokens.access_token, refresh: tokens.refresh_token };
  }

  async function apiKey(scopes: string[], extra: Record<string, unknown> = {}) {
    const res = await call("POST", "/api/v1/api-keys", {
      token: ADMIN_KEY,
      body: { name: "test key", scopes, ...extra },
    });
    if (res.status !== 201) throw new Error(`creating key failed: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; key: string };
  }

  return {
    app,
    services,
    /** The database file, for a second connection (a second control plane on the same database). */
    dbUrl,
    call,
    login,
    userWithRole,
    apiKey,
    close() {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
