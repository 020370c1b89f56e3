/**
 * Secrets keys as text, the way they arrive (`LAKESMITH_SECRETS_KEY`, a Workers secret, the key file
 * of an embedded installation):
 *
 * - 32 random bytes (AES-256) in base64 or base64url, padding optional: 43 or 44 characters.
 * - A list (`LAKESMITH_SECRETS_KEY_PREVIOUS`) is comma-separated; blanks around commas are ignored.
 * - Errors name the variable and say how to make a key; they never echo the value.
 */
import { fromBase64Url, toBase64Url } from "@lakesmith/shared";

export const SECRETS_KEY_BYTES = 32;

/** A fresh key as base64url text, for the key file of an embedded installation. */
export function generateSecretsKey(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(SECRETS_KEY_BYTES)));
}

const NOT_A_KEY = `must be ${SECRETS_KEY_BYTES} random bytes in base64 or base64url (43 or 44 characters); make one with \`openssl rand -base64 32\``;

/**
 * The key bytes of `text`, or an error that names `source` (the variable or file it came from).
 *
 * @example parseSecretsKey(process.env.LAKESMITH_SECRETS_KEY, "LAKESMITH_SECRETS_KEY")
 */
export function parseSecretsKey(text: string, source: string): Uint8Array {
  const bytes = decodeKey(text);
  if (!bytes) throw new Error(`${source} ${NOT_A_KEY}`);
  return bytes;
}

/** Every key of a comma-separated list; an empty or missing list is no keys. */
export function parseSecretsKeyList(text: string | undefined, source: string): Uint8Array[] {
  return listParts(text).map((part, i) => parseSecretsKey(part, `${source} (key ${i + 1})`));
}

/** What is wrong with a key (or, with `list`, a comma-separated list of keys), or undefined: for zod. */
export function secretsKeyProblem(text: string | undefined, list = false): string | undefined {
  if (text === undefined) return undefined;
  const parts = list ? listParts(text) : [text];
  const bad = parts.findIndex((part) => !decodeKey(part));
  if (bad < 0) return undefined;
  return list ? `key ${bad + 1} ${NOT_A_KEY}` : NOT_A_KEY;
}

function listParts(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

function decodeKey(text: string): Uint8Array | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  try {
    const bytes = fromBase64Url(trimmed.replace(/=+$/, ""));
    return bytes.length === SECRETS_KEY_BYTES ? bytes : undefined;
  } catch {
    return undefined;
  }
}
