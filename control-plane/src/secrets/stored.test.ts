import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeDatabase, openNodeDatabase } from "../adapter/node-db.ts";
import { catalogConnections, instanceSecrets, settings, ssoProviders } from "../db/schema.ts";
import { SsoProviders } from "../sso/providers.ts";
import { Keyring } from "./keyring.ts";
import { catalogConnectionAad, instanceSecretAad, reencryptStoredSecrets, settingAad } from "./stored.ts";

const WEBHOOKS = '["https://hooks.slack.com/services/T0/B0/plainwebhooksecret"]';
const SIGNING_KEY = "wave-one-signing-key-in-plain-text-0000000";

const opened: NodeDatabase[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const d of opened.splice(0)) d.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-secrets-"));
  dirs.push(dir);
  return join(dir, "s.db");
}

async function database(file = tempFile()): Promise<NodeDatabase> {
  const d = await openNodeDatabase(`file:${file}`);
  opened.push(d);
  return d;
}

const randomKey = () => crypto.getRandomValues(new Uint8Array(32));

async function stored(d: NodeDatabase) {
  const [key] = await d.db
    .select()
    .from(instanceSecrets)
    .where(eq(instanceSecrets.name, "access_token_signing_key"));
  const [hooks] = await d.db.select().from(settings).where(eq(settings.key, "chat_webhook_urls"));
  return { signingKey: key?.value as string, webhooks: hooks?.value as string };
}

async function seed(d: NodeDatabase, signingKey: string, webhooks: string) {
  await d.db.insert(instanceSecrets).values({ name: "access_token_signing_key", value: signingKey });
  const row = { updatedAt: new Date(), updatedBy: null };
  await d.db.insert(settings).values([
    { key: "chat_webhook_urls", value: webhooks, ...row },
    { key: "cloud_discount_percent", value: "25", ...row },
  ]);
}

describe("re-encrypting stored secrets at start", () => {
  it("encrypts plain-text values of an older version and leaves other settings alone", async () => {
    const d = await database();
    await seed(d, SIGNING_KEY, WEBHOOKS);
    const keyring = Keyring.random();
    expect(await reencryptStoredSecrets(d.db, keyring)).toBe(2);
    const after = await stored(d);
    expect(await keyring.isCurrent(after.signingKey)).toBe(true);
    expect(await keyring.decrypt(after.signingKey, instanceSecretAad("access_token_signing_key"))).toBe(
      SIGNING_KEY,
    );
    expect(await keyring.decrypt(after.webhooks, settingAad("chat_webhook_urls"))).toBe(WEBHOOKS);
    const [discount] = await d.db.select().from(settings).where(eq(settings.key, "cloud_discount_percent"));
    expect(discount?.value).toBe("25");
  });

  it("moves values of a previous key to the current one, and a second run changes nothing", async () => {
    const d = await database();
    const [oldKey, newKey] = [randomKey(), randomKey()];
    const old = new Keyring(oldKey);
    await seed(
      d,
      await old.encrypt(SIGNING_KEY, instanceSecretAad("access_token_signing_key")),
      await old.encrypt(WEBHOOKS, settingAad("chat_webhook_urls")),
    );
    const rotated = new Keyring(newKey, [oldKey]);
    expect(await reencryptStoredSecrets(d.db, rotated)).toBe(2);
    const after = await stored(d);
    const onlyNew = new Keyring(newKey);
    expect(await onlyNew.decrypt(after.webhooks, settingAad("chat_webhook_urls"))).toBe(WEBHOOKS);
    expect(await onlyNew.decrypt(after.signingKey, instanceSecretAad("access_token_signing_key"))).toBe(
      SIGNING_KEY,
    );
    expect(await reencryptStoredSecrets(d.db, rotated)).toBe(0);
    expect(await stored(d)).toEqual(after);
  });

  it("moves catalog connections' credentials to the current key, under each connection's name", async () => {
    const d = await database();
    const [oldKey, newKey] = [randomKey(), randomKey()];
    const credentials = '{"client_secret":"catalog-secret-under-the-old-key"}';
    await d.db.insert(catalogConnections).values({
      id: "con_rotated",
      name: "rotated",
      type: "polaris",
      settings: { catalog_url: "https://polaris.example.com", client_id: "c" },
      secrets: await new Keyring(oldKey).encrypt(credentials, catalogConnectionAad("con_rotated")),
      secretFields: ["client_secret"],
    });
    expect(await reencryptStoredSecrets(d.db, new Keyring(newKey, [oldKey]))).toBe(1);
    const [row] = await d.db.select().from(catalogConnections);
    expect(await new Keyring(newKey).decrypt(row?.secrets ?? "", catalogConnectionAad("con_rotated"))).toBe(
      credentials,
    );
  });

  it("moves the OIDC client secret to the current key and leaves a provider without one alone", async () => {
    const d = await database();
    const [oldKey, newKey] = [randomKey(), randomKey()];
    const clock = { now: () => new Date() };
    await new SsoProviders(d.db, new Keyring(oldKey), clock).putOidc(
      {
        issuer: "https://login.example.com",
        client_id: "c",
        client_secret: "oidc-secret-under-the-old-key",
        scopes: "openid email",
      },
      "test",
    );
    await d.db
      .insert(ssoProviders)
      .values({ protocol: "saml", settings: "{}", secret: null, updatedAt: new Date() });
    expect(await reencryptStoredSecrets(d.db, new Keyring(newKey, [oldKey]))).toBe(1);
    const provider = await new SsoProviders(d.db, new Keyring(newKey), clock).oidc();
    expect(provider.clientSecret).toBe("oidc-secret-under-the-old-key");
  });

  it("rewrites each value once when two instances start at the same moment", async () => {
    const file = tempFile();
    const [a, b] = [await database(file), await database(file)];
    await seed(a, SIGNING_KEY, WEBHOOKS);
    const key = randomKey();
    const counts = await Promise.all([
      reencryptStoredSecrets(a.db, new Keyring(key)),
      reencryptStoredSecrets(b.db, new Keyring(key)),
    ]);
    expect(counts[0] + counts[1]).toBe(2);
    const after = await stored(b);
    expect(await new Keyring(key).decrypt(after.webhooks, settingAad("chat_webhook_urls"))).toBe(WEBHOOKS);
  });

  it("stops with the id of a key it does not hold", async () => {
    const d = await database();
    const stranger = Keyring.random();
    await seed(
      d,
      await stranger.encrypt(SIGNING_KEY, instanceSecretAad("access_token_signing_key")),
      WEBHOOKS,
    );
    await expect(reencryptStoredSecrets(d.db, Keyring.random())).rejects.toThrow(
      `was encrypted with key ${await stranger.currentKeyId()}`,
    );
  });
});
