import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateSecretsKey, parseSecretsKey, parseSecretsKeyList, secretsKeyProblem } from "./key-text.ts";
import { isEnvelope, Keyring } from "./keyring.ts";

const AAD = "settings/chat_webhook_urls";
const key = () => parseSecretsKey(generateSecretsKey(), "test key");
const idOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 8);

/** Flips one character of the envelope's `part` (3: iv, 4: ciphertext). */
function tamper(envelope: string, part: number): string {
  const parts = envelope.split(":");
  const text = parts[part] as string;
  parts[part] = (text[0] === "A" ? "B" : "A") + text.slice(1);
  return parts.join(":");
}

describe("Keyring", () => {
  it("decrypts what it encrypted under the same name", async () => {
    const keyring = new Keyring(key());
    const secret = '["https://hooks.slack.com/services/T0/B0/xyz", "ünïcødé ✓"]';
    const envelope = await keyring.encrypt(secret, AAD);
    expect(isEnvelope(envelope)).toBe(true);
    expect(envelope).not.toContain("hooks.slack.com");
    expect(await keyring.decrypt(envelope, AAD)).toBe(secret);
  });

  it("writes a fresh IV per value, so one plaintext never encrypts the same twice", async () => {
    const keyring = new Keyring(key());
    const a = await keyring.encrypt("same", AAD);
    const b = await keyring.encrypt("same", AAD);
    expect(a).not.toBe(b);
    expect(a.split(":")[3]).not.toBe(b.split(":")[3]);
  });

  it("refuses to decrypt a value under another name", async () => {
    const keyring = new Keyring(key());
    const envelope = await keyring.encrypt("secret", AAD);
    await expect(keyring.decrypt(envelope, "instance_secrets/access_token_signing_key")).rejects.toThrow(
      /altered, or stored under another name/,
    );
  });

  it("refuses a tampered ciphertext or IV", async () => {
    const keyring = new Keyring(key());
    const envelope = await keyring.encrypt("secret", AAD);
    await expect(keyring.decrypt(tamper(envelope, 4), AAD)).rejects.toThrow(/does not decrypt/);
    await expect(keyring.decrypt(tamper(envelope, 3), AAD)).rejects.toThrow(/does not decrypt/);
  });

  it("names the key in the envelope by the first 8 hex digits of its SHA-256", async () => {
    const bytes = key();
    const keyring = new Keyring(bytes);
    const envelope = await keyring.encrypt("secret", AAD);
    expect(envelope).toMatch(new RegExp(`^enc:v1:${idOf(bytes)}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$`));
    expect(await keyring.currentKeyId()).toBe(idOf(bytes));
  });

  it("decrypts values of a previous key and reports them as not current", async () => {
    const old = key();
    const before = await new Keyring(old).encrypt("secret", AAD);
    const rotated = new Keyring(key(), [old]);
    expect(await rotated.decrypt(before, AAD)).toBe("secret");
    expect(await rotated.isCurrent(before)).toBe(false);
    expect(await rotated.isCurrent(await rotated.encrypt("secret", AAD))).toBe(true);
    expect(await rotated.isCurrent('["plain text"]')).toBe(false);
  });

  it("names both keys when a value was encrypted with a key it does not hold", async () => {
    const stranger = key();
    const envelope = await new Keyring(stranger).encrypt("secret", AAD);
    const keyring = new Keyring(key());
    await expect(keyring.decrypt(envelope, AAD)).rejects.toThrow(
      `${AAD} was encrypted with key ${idOf(stranger)}, which is neither LAKESMITH_SECRETS_KEY (key ${await keyring.currentKeyId()})`,
    );
  });

  it("refuses plain text where an encrypted value belongs", async () => {
    await expect(new Keyring(key()).decrypt("plain", AAD)).rejects.toThrow(/is not an encrypted value/);
  });
});

describe("secrets key text", () => {
  it("accepts 32 bytes in base64 or base64url, with or without padding", () => {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const base64 = Buffer.from(bytes).toString("base64");
    const base64url = Buffer.from(bytes).toString("base64url");
    for (const text of [base64, base64.replace(/=+$/, ""), base64url, ` ${base64url}\n`]) {
      expect(parseSecretsKey(text, "LAKESMITH_SECRETS_KEY")).toEqual(bytes);
    }
  });

  it("refuses a key of the wrong length or alphabet, naming the source but never echoing the value", () => {
    const short = Buffer.alloc(31, 7).toString("base64");
    for (const text of [short, "not a key!", "", `${generateSecretsKey()}xx`]) {
      let message = "";
      try {
        parseSecretsKey(text, "LAKESMITH_SECRETS_KEY");
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^LAKESMITH_SECRETS_KEY must be 32 random bytes in base64/);
      if (text) expect(message).not.toContain(text);
    }
  });

  it("reads a comma-separated list of previous keys and says which one is bad", () => {
    const [a, b] = [generateSecretsKey(), generateSecretsKey()];
    expect(parseSecretsKeyList(` ${a} , ${b},`, "LAKESMITH_SECRETS_KEY_PREVIOUS")).toHaveLength(2);
    expect(parseSecretsKeyList(undefined, "LAKESMITH_SECRETS_KEY_PREVIOUS")).toEqual([]);
    expect(secretsKeyProblem(`${a},oops`, true)).toMatch(/^key 2 must be 32 random bytes/);
    expect(secretsKeyProblem(a)).toBeUndefined();
  });
});
