/**
 * Encrypts secrets before they are stored: one current key, and previous keys for reading values
 * written before a rotation.
 *
 * - AES-256-GCM through WebCrypto (Node and Workers alike), a random 96-bit IV per value, a 128-bit
 *   tag: a value changed by one bit does not decrypt.
 * - The additional authenticated data is the value's name (`settings/chat_webhook_urls`), so a
 *   ciphertext copied to another place does not decrypt there either.
 * - Envelope: `enc:v1:<key id>:<iv base64url>:<ciphertext and tag base64url>`, where the key id is the
 *   first 8 hex digits of SHA-256 of the key. A stored value without the `enc:` prefix is plain text.
 * - Encrypts with the current key only; decrypts with whichever key the envelope names.
 * - Keys are imported on first use, so a keyring can be built synchronously (a Durable Object's
 *   constructor) and costs nothing where it is never used.
 *
 * @example
 * const keyring = new Keyring(parseSecretsKey(env.LAKESMITH_SECRETS_KEY, "LAKESMITH_SECRETS_KEY"));
 * const stored = await keyring.encrypt("https://hooks.slack.com/...", "settings/chat_webhook_urls");
 */
import { fromBase64Url, toBase64Url } from "@lakesmith/shared";
import { parseSecretsKey, parseSecretsKeyList, SECRETS_KEY_BYTES } from "./key-text.ts";

const PREFIX = "enc:";
const VERSION = "v1";
const IV_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Key {
  id: string;
  key: CryptoKey;
}

interface Loaded {
  current: Key;
  byId: Map<string, Key>;
}

/** Whether a stored value is an envelope (encrypted) rather than plain text. */
export function isEnvelope(value: string): boolean {
  return value.startsWith(PREFIX);
}

export class Keyring {
  private raw: Uint8Array[] | undefined;
  private loaded: Promise<Loaded> | undefined;

  /** `current` encrypts; `current` and every `previous` key decrypt. Each is 32 bytes. */
  constructor(current: Uint8Array, previous: readonly Uint8Array[] = []) {
    const all = [current, ...previous];
    if (all.some((k) => k.length !== SECRETS_KEY_BYTES)) {
      throw new Error(`A secrets key is ${SECRETS_KEY_BYTES} bytes.`);
    }
    this.raw = all.map((k) => k.slice());
  }

  /** A keyring with one fresh random key: for tests and in-memory databases, whose data dies with the process. */
  static random(): Keyring {
    return new Keyring(crypto.getRandomValues(new Uint8Array(SECRETS_KEY_BYTES)));
  }

  /** The keyring of `LAKESMITH_SECRETS_KEY` and `LAKESMITH_SECRETS_KEY_PREVIOUS` as given in the environment. */
  static fromEnv(current: string, previous: string | undefined): Keyring {
    return new Keyring(
      parseSecretsKey(current, "LAKESMITH_SECRETS_KEY"),
      parseSecretsKeyList(previous, "LAKESMITH_SECRETS_KEY_PREVIOUS"),
    );
  }

  /** The id that envelopes written now carry; safe to log. */
  async currentKeyId(): Promise<string> {
    return (await this.load()).current.id;
  }

  /** Encrypts `plaintext` with the current key, bound to `aad` (the value's name). */
  async encrypt(plaintext: string, aad: string): Promise<string> {
    const { current } = await this.load();
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode(aad) },
      current.key,
      encoder.encode(plaintext),
    );
    return `${PREFIX}${VERSION}:${current.id}:${toBase64Url(iv)}:${toBase64Url(new Uint8Array(sealed))}`;
  }

  /** The plaintext of an envelope written under the same `aad`; throws, naming `aad`, otherwise. */
  async decrypt(envelope: string, aad: string): Promise<string> {
    const [prefix, version, keyId, iv, sealed, ...rest] = envelope.split(":");
    if (`${prefix}:` !== PREFIX || !keyId || !iv || !sealed || rest.length > 0) {
      throw new Error(`${aad} is not an encrypted value (expected enc:${VERSION}:...).`);
    }
    if (version !== VERSION) {
      throw new Error(`${aad} was encrypted in format ${version}, which this version cannot read; upgrade.`);
    }
    const { current, byId } = await this.load();
    const key = byId.get(keyId);
    if (!key) {
      throw new Error(
        `${aad} was encrypted with key ${keyId}, which is neither LAKESMITH_SECRETS_KEY (key ${current.id}) nor in LAKESMITH_SECRETS_KEY_PREVIOUS; add the key it was encrypted with to LAKESMITH_SECRETS_KEY_PREVIOUS.`,
      );
    }
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64Url(iv) as BufferSource, additionalData: encoder.encode(aad) },
        key.key,
        fromBase64Url(sealed) as BufferSource,
      );
      return decoder.decode(plain);
    } catch {
      throw new Error(
        `${aad} does not decrypt with key ${keyId}: it was altered, or stored under another name.`,
      );
    }
  }

  /** Whether `value` is an envelope written with the current key (else it needs re-encrypting). */
  async isCurrent(value: string): Promise<boolean> {
    if (!isEnvelope(value)) return false;
    const { current } = await this.load();
    return value.startsWith(`${PREFIX}${VERSION}:${current.id}:`);
  }

  private load(): Promise<Loaded> {
    this.loaded ??= importKeys(this.raw ?? []).then((loaded) => {
      this.raw = undefined;
      return loaded;
    });
    return this.loaded;
  }
}

async function importKeys(raw: Uint8Array[]): Promise<Loaded> {
  const keys = await Promise.all(
    raw.map(async (bytes) => ({
      id: await keyId(bytes),
      key: await crypto.subtle.importKey("raw", bytes as BufferSource, "AES-GCM", false, [
        "encrypt",
        "decrypt",
      ]),
    })),
  );
  const byId = new Map<string, Key>();
  for (const key of keys) if (!byId.has(key.id)) byId.set(key.id, key);
  return { current: keys[0] as Key, byId };
}

/** First 8 hex digits of SHA-256 of the key: names the key in envelopes and logs, reveals nothing. */
async function keyId(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let hex = "";
  for (const b of digest.subarray(0, 4)) hex += b.toString(16).padStart(2, "0");
  return hex;
}
