/**
 * Secrets at rest: secret settings masked on the wire for everyone and encrypted in the database,
 * the access-token signing key encrypted, the key file of an embedded installation, key rotation,
 * and the upgrade of an installation that stored its signing key in plain text.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { sign } from "hono/jwt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { type NodeServer, type NodeServerOptions, startNodeServer } from "../src/adapter/node-server.ts";
import { instanceSecrets, settings } from "../src/db/schema.ts";
import { parseNodeEnv } from "../src/env.ts";
import { generateSecretsKey } from "../src/secrets/key-text.ts";
import { instanceSecretAad, settingAad } from "../src/secrets/stored.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";

const SLACK = "https://hooks.slack.com/services/T0SECRET/B0SECRET/sl4ckw3bh00ks3cr3tWXYZ";
const TEAMS = "https://contoso.webhook.office.com/webhookb2/t3ams-s3cr3t-0000/IncomingWebhook/abcd/efgh";
const SLACK_MASK = "https://hooks.slack.com/••••WXYZ";
const TEAMS_MASK = "https://contoso.webhook.office.com/••••efgh";

describe("secret settings through /api/v1/config", () => {
  let plane: TestPlane;
  beforeAll(async () => {
    plane = await startTestPlane();
  });
  afterAll(() => plane.close());

  const put = (body: unknown, token = ADMIN_KEY) => plane.call("PUT", "/api/v1/config", { token, body });
  const webhooks = async (token = ADMIN_KEY) =>
    (await (await plane.call("GET", "/api/v1/config", { token })).json()).chat_webhook_urls;
  const storedRow = async () =>
    (await plane.services.db.select().from(settings).where(eq(settings.key, "chat_webhook_urls")))[0]?.value;

  it("marks chat_webhook_urls secret in setting_definitions, and only it", async () => {
    const config = await (await plane.call("GET", "/api/v1/config", { token: ADMIN_KEY })).json();
    const secret = Object.entries(config.setting_definitions as Record<string, { secret: boolean }>)
      .filter(([, d]) => d.secret)
      .map(([k]) => k);
    expect(secret).toEqual(["chat_webhook_urls"]);
  });

  it("answers a write with the webhooks masked, and shows Viewers and Admins only the masks", async () => {
    const res = await put({ chat_webhook_urls: [SLACK, TEAMS] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.chat_webhook_urls).toEqual([SLACK_MASK, TEAMS_MASK]);
    const viewer = await plane.userWithRole("Viewer");
    const admin = await plane.userWithRole("Admin");
    for (const token of [viewer.token, admin.token, ADMIN_KEY]) {
      const text = await (await plane.call("GET", "/api/v1/config", { token })).text();
      expect(text).not.toContain("s3cr3t");
      expect(JSON.parse(text).chat_webhook_urls).toEqual([SLACK_MASK, TEAMS_MASK]);
    }
    expect((await plane.services.config.get()).values.chat_webhook_urls, "the server's own view").toEqual([
      SLACK,
      TEAMS,
    ]);
  });

  it("stores the whole value encrypted under the setting's name", async () => {
    const row = (await storedRow()) as string;
    expect(row).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row).not.toContain("hooks.slack.com");
    expect(JSON.parse(await plane.services.secrets.decrypt(row, settingAad("chat_webhook_urls")))).toEqual([
      SLACK,
      TEAMS,
    ]);
  });

  it("keeps the stored webhooks when GET's masked list comes back through PUT unchanged", async () => {
    const before = await storedRow();
    const config = await (await plane.call("GET", "/api/v1/config", { token: ADMIN_KEY })).json();
    const { updated_at: _u, setting_definitions: _d, ...values } = config;
    const res = await put({ ...values, cloud_discount_percent: 5 });
    expect(res.status).toBe(200);
    expect(await storedRow(), "the row is not even rewritten").toBe(before);
    expect((await plane.services.config.get()).values.chat_webhook_urls).toEqual([SLACK, TEAMS]);
    expect((await plane.services.config.get()).values.cloud_discount_percent).toBe(5);
  });

  it("reads masks back by what they stand for: reorder, remove and add in one write", async () => {
    const added = "https://chat.example.com/hooks/new";
    const res = await put({ chat_webhook_urls: [TEAMS_MASK, added] });
    expect(res.status).toBe(200);
    expect((await res.json()).chat_webhook_urls).toEqual([TEAMS_MASK, "https://chat.example.com/••••"]);
    expect((await plane.services.config.get()).values.chat_webhook_urls).toEqual([TEAMS, added]);
  });

  it("refuses a masked URL that stands for nothing stored with 422 and changes nothing", async () => {
    const before = await storedRow();
    const res = await put({ chat_webhook_urls: [TEAMS_MASK, SLACK_MASK] });
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].path).toBe("chat_webhook_urls.1");
    expect(await storedRow()).toBe(before);
  });

  it("replaces the webhooks with new ones, and an empty list clears them", async () => {
    expect((await put({ chat_webhook_urls: [SLACK] })).status).toBe(200);
    expect((await plane.services.config.get()).values.chat_webhook_urls).toEqual([SLACK]);
    expect(await webhooks()).toEqual([SLACK_MASK]);
    expect((await put({ chat_webhook_urls: [] })).status).toBe(200);
    expect(await webhooks()).toEqual([]);
  });

  it("refuses a write from a Viewer or an Editor with 403", async () => {
    await put({ chat_webhook_urls: [SLACK] });
    for (const role of ["Viewer", "Editor"] as const) {
      const user = await plane.userWithRole(role);
      for (const method of ["PUT", "POST"]) {
        const res = await plane.call(method, "/api/v1/config", {
          token: user.token,
          body: { chat_webhook_urls: [TEAMS] },
        });
        expect(res.status).toBe(403);
      }
    }
    expect((await plane.services.config.get()).values.chat_webhook_urls).toEqual([SLACK]);
  });
});

describe("secrets at rest on Node", () => {
  const dirs: string[] = [];
  const servers: NodeServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function tempDbFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "lakesmith-at-rest-"));
    dirs.push(dir);
    return join(dir, "lakesmith.db");
  }

  async function start(dbFile: string, extra: Partial<NodeServerOptions> = {}): Promise<NodeServer> {
    const server = await startNodeServer({
      dbUrl: `file:${dbFile}`,
      port: 0,
      schedulerIntervalMs: 0,
      bootstrap: { adminPassword: "at-rest-admin-password", adminApiKey: ADMIN_KEY },
      ...extra,
    });
    servers.push(server);
    return server;
  }

  async function stop(server: NodeServer): Promise<void> {
    servers.splice(servers.indexOf(server), 1);
    await server.stop();
  }

  async function api(server: NodeServer, method: string, path: string, body?: unknown, token = ADMIN_KEY) {
    return fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }

  async function login(server: NodeServer): Promise<string> {
    const res = await fetch(`${server.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "at-rest-admin-password" }),
    });
    expect(res.status).toBe(200);
    return (await res.json()).access_token;
  }

  async function signingKeyRow(server: NodeServer): Promise<string> {
    const [row] = await server.services.db
      .select()
      .from(instanceSecrets)
      .where(eq(instanceSecrets.name, "access_token_signing_key"));
    return row?.value as string;
  }

  it("keeps neither the webhook URL nor the signing key in plain text in the database file", async () => {
    const dbFile = tempDbFile();
    const server = await start(dbFile);
    expect((await api(server, "PUT", "/api/v1/config", { chat_webhook_urls: [SLACK] })).status).toBe(200);
    await login(server);
    const signingKey = await server.services.secrets.decrypt(
      await signingKeyRow(server),
      instanceSecretAad("access_token_signing_key"),
    );
    for (const file of [dbFile, `${dbFile}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      expect(bytes.includes(SLACK), `${file} holds the webhook URL`).toBe(false);
      expect(bytes.includes("sl4ckw3bh00ks3cr3t"), `${file} holds the webhook secret`).toBe(false);
      expect(bytes.includes(signingKey), `${file} holds the signing key`).toBe(false);
    }
    expect(existsSync(dbFile)).toBe(true);
  });

  it("creates the key file beside the database with mode 0600 and reuses it on the next start", async () => {
    const dbFile = tempDbFile();
    const keyFile = join(dbFile, "..", "lakesmith.key");
    const first = await start(dbFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, "utf8");
    expect((await api(first, "PUT", "/api/v1/config", { chat_webhook_urls: [SLACK] })).status).toBe(200);
    const token = await login(first);
    await stop(first);

    const second = await start(dbFile);
    expect(readFileSync(keyFile, "utf8")).toBe(key);
    expect(second.bootstrapped.reencryptedSecrets).toBe(0);
    expect((await second.services.config.get()).values.chat_webhook_urls).toEqual([SLACK]);
    expect((await api(second, "GET", "/api/v1/config", undefined, token)).status, "tokens survive").toBe(200);
  });

  it("refuses a key file that other users can read", async () => {
    const dbFile = tempDbFile();
    await stop(await start(dbFile));
    const keyFile = join(dbFile, "..", "lakesmith.key");
    chmodSync(keyFile, 0o644);
    await expect(start(dbFile)).rejects.toThrow(`run \`chmod 600 ${keyFile}\``);
  });

  it("refuses to start on a remote database without LAKESMITH_SECRETS_KEY, before connecting", async () => {
    await expect(start("unused", { dbUrl: "libsql://db.example.invalid" })).rejects.toThrow(
      /^LAKESMITH_SECRETS_KEY is not set\. With a remote database/,
    );
  });

  it("names the variable of a malformed key without echoing it", () => {
    expect(() => parseNodeEnv({ LAKESMITH_SECRETS_KEY: "too-short-key" })).toThrow(
      /LAKESMITH_SECRETS_KEY: must be 32 random bytes/,
    );
    expect(() => parseNodeEnv({ LAKESMITH_SECRETS_KEY_PREVIOUS: `${generateSecretsKey()},bad` })).toThrow(
      /LAKESMITH_SECRETS_KEY_PREVIOUS: key 2 must be 32 random bytes/,
    );
    try {
      parseNodeEnv({ LAKESMITH_SECRETS_KEY: "too-short-key" });
    } catch (err) {
      expect((err as Error).message).not.toContain("too-short-key");
    }
  });

  it("re-encrypts everything with a new key given the old one as previous, then needs the old one no more", async () => {
    const dbFile = tempDbFile();
    const [oldKey, newKey] = [generateSecretsKey(), generateSecretsKey()];
    const first = await start(dbFile, { secretsKey: oldKey });
    expect(existsSync(join(dbFile, "..", "lakesmith.key")), "no key file with a key given").toBe(false);
    await api(first, "PUT", "/api/v1/config", { chat_webhook_urls: [SLACK] });
    const token = await login(first);
    await stop(first);

    await expect(start(dbFile, { secretsKey: newKey }), "without the old key").rejects.toThrow(
      /LAKESMITH_SECRETS_KEY_PREVIOUS/,
    );
    const rotating = await start(dbFile, { secretsKey: newKey, secretsKeyPrevious: oldKey });
    expect(rotating.bootstrapped.reencryptedSecrets).toBe(2);
    await stop(rotating);

    const rotated = await start(dbFile, { secretsKey: newKey });
    expect(rotated.bootstrapped.reencryptedSecrets).toBe(0);
    expect((await rotated.services.config.get()).values.chat_webhook_urls).toEqual([SLACK]);
    expect((await api(rotated, "GET", "/api/v1/config", undefined, token)).status).toBe(200);
  });

  it("encrypts a plain-text signing key of an older version at start; its tokens still verify", async () => {
    const dbFile = tempDbFile();
    const keyFile = join(dbFile, "..", "lakesmith.key");
    const first = await start(dbFile);
    const admin = await first.services.users.findByUsername("admin");
    await stop(first);

    // The state a wave-1 installation is in: the key in plain text, no key file.
    const legacyKey = "wave-one-signing-key-stored-in-plain-text-00";
    const database = await openNodeDatabase(`file:${dbFile}`);
    await database.db
      .insert(instanceSecrets)
      .values({ name: "access_token_signing_key", value: legacyKey })
      .onConflictDoUpdate({ target: instanceSecrets.name, set: { value: legacyKey } });
    database.close();
    unlinkSync(keyFile);
    const iat = Math.floor(Date.now() / 1000);
    const oldToken = await sign(
      { sub: admin?.id, username: "admin", role: "Admin", typ: "access", iat, exp: iat + 3600 },
      legacyKey,
      "HS256",
    );

    const upgraded = await start(dbFile);
    expect(upgraded.bootstrapped.reencryptedSecrets).toBe(1);
    const row = await signingKeyRow(upgraded);
    expect(row).toMatch(/^enc:v1:/);
    expect(await upgraded.services.secrets.decrypt(row, instanceSecretAad("access_token_signing_key"))).toBe(
      legacyKey,
    );
    expect((await api(upgraded, "GET", "/api/v1/config", undefined, oldToken)).status).toBe(200);
    expect((await api(upgraded, "GET", "/api/v1/config", undefined, await login(upgraded))).status).toBe(200);
  });
});
