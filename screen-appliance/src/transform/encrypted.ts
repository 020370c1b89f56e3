/**
 * TRANSFORMATION_TYPE_ENCRYPTED: deterministic authenticated encryption, so the same value under
 * the same key always gives the same token (joins and counts still work on redacted text) and a
 * wrong key is detected instead of producing garbage.
 *
 * Construction (synthetic-IV AES-GCM): from the caller's 32-byte key, HKDF-SHA256 derives an
 * encryption key and a MAC key. The 96-bit IV is HMAC-SHA256(macKey, type ‖ 0 ‖ value) truncated,
 * so a nonce repeats only for an identical plaintext, which then yields the identical token; that
 * equality leak is the point of a deterministic scheme. AES-256-GCM authenticates the value with
 * the type as associated data, and decryption also recomputes the IV, as SIV does.
 *
 * Token: `[ENC:<TYPE>:<base64url(iv ‖ ciphertext ‖ tag)>]`, which is easy to find in free text, so
 * `/reveal` needs only the key.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { CLASSIFICATION_TYPES, type ClassificationType } from "../detect/types.ts";
import { invalidField } from "../http/problem.ts";
import type { RedactionMap, Replacer } from "./redaction.ts";

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const ENCRYPTED_TOKEN = /\[ENC:([A-Z_]+):([A-Za-z0-9_-]+)\]/g;

interface Keys {
  enc: Buffer;
  mac: Buffer;
}

/**
 * Parses an `encryptionKey`: 32 random bytes in base64 or base64url (e.g. `openssl rand -base64 32`).
 * Anything else is a 422 naming `field`.
 */
export function parseEncryptionKey(encoded: string | undefined, field: string): Keys {
  const bytes = encoded === undefined ? undefined : decodeBase64(encoded);
  if (bytes?.length !== 32) {
    throw invalidField(
      field,
      "must be 32 random bytes encoded as base64 or base64url (openssl rand -base64 32)",
    );
  }
  const derive = (info: string) => Buffer.from(hkdfSync("sha256", bytes, Buffer.alloc(0), info, 32));
  return { enc: derive("lakesmith-screen/v1/enc"), mac: derive("lakesmith-screen/v1/mac") };
}

function decodeBase64(encoded: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) return undefined;
  return Buffer.from(encoded.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

function syntheticIv(keys: Keys, type: string, value: string): Buffer {
  return createHmac("sha256", keys.mac).update(`${type}\u0000${value}`).digest().subarray(0, IV_BYTES);
}

export function encryptValue(keys: Keys, type: ClassificationType, value: string): string {
  const iv = syntheticIv(keys, type, value);
  const cipher = createCipheriv("aes-256-gcm", keys.enc, iv);
  cipher.setAAD(Buffer.from(type));
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  const token = Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  return `[ENC:${type}:${token}]`;
}

/** Decrypts one token's parts; undefined when the key is wrong or the token was altered. */
export function decryptToken(keys: Keys, type: string, payload: string): string | undefined {
  if (!(CLASSIFICATION_TYPES as readonly string[]).includes(type)) return undefined;
  const raw = Buffer.from(payload, "base64url");
  if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
  const iv = raw.subarray(0, IV_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", keys.enc, iv);
    decipher.setAAD(Buffer.from(type));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const value = Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
    return timingSafeEqual(iv, syntheticIv(keys, type, value)) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function encryptedReplacer(keys: Keys): Replacer {
  const maps = new Map<string, RedactionMap>();
  return {
    replace(type, value) {
      const token = encryptValue(keys, type, value);
      maps.set(token, { redactionString: token, originalData: value });
      return token;
    },
    maps: () => [...maps.values()],
  };
}

/** Restores every token in `redactedData`; a token the key cannot open is a 422 on `field`. */
export function revealEncrypted(redactedData: string, keys: Keys, field: string): string {
  return redactedData.replace(ENCRYPTED_TOKEN, (_token, type: string, payload: string, offset: number) => {
    const value = decryptToken(keys, type, payload);
    if (value === undefined) {
      throw invalidField(field, `does not decrypt the token at offset ${offset}; wrong key or altered token`);
    }
    return value;
  });
}
