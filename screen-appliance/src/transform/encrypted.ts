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
 * `/reveal` needs only the key. `/reveal` reads every `[ENC:` as the start of a token: one that is
 * cut, edited or unknown is refused rather than handed back unchanged as if it were plain text.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { CLASSIFICATION_TYPES, type ClassificationType } from "../detect/types.ts";
import { invalidField } from "../http/problem.ts";
import { toCodePointOffsets } from "../screen/offsets.ts";
import type { RedactionMap, Replacer } from "./redaction.ts";

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** What a reader would take for a token: `[ENC:` (any case) up to the next `]`, whitespace or bracket. */
const TOKEN_LIKE = /\[ENC:[^\s[\]]*\]?/gi;
/** A token as `encryptValue` writes it. */
const TOKEN = /^\[ENC:([A-Z_]+):([A-Za-z0-9_-]+)\]$/;

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

/** Where the first text that reads as a token starts (UTF-16 offset), or -1. */
export function firstTokenLike(text: string): number {
  return text.search(TOKEN_LIKE);
}

interface Sealed {
  type: ClassificationType;
  sealed: Buffer;
}

/** A token's type and sealed bytes, or why it is not a token `encryptValue` could have written. */
function parseToken(token: string): Sealed | { malformed: string } {
  const parts = TOKEN.exec(token);
  if (!parts) return { malformed: "it is not of the form [ENC:<TYPE>:<base64url>]" };
  const [, type = "", payload = ""] = parts;
  if (!isClassificationType(type)) return { malformed: `${type} is not a classification type` };
  const sealed = Buffer.from(payload, "base64url");
  // Tokens are unpadded base64url of at least IV and tag; anything else was cut or edited.
  if (sealed.toString("base64url") !== payload || sealed.length < IV_BYTES + TAG_BYTES) {
    return { malformed: "its payload was cut or edited" };
  }
  return { type, sealed };
}

const isClassificationType = (type: string): type is ClassificationType =>
  (CLASSIFICATION_TYPES as readonly string[]).includes(type);

/** Opens a well-formed token; undefined when the key is wrong or the ciphertext was altered. */
function openToken(keys: Keys, { type, sealed }: Sealed): string | undefined {
  const iv = sealed.subarray(0, IV_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", keys.enc, iv);
    decipher.setAAD(Buffer.from(type));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const value = Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
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

/**
 * Restores every token in `redactedData`. Text that reads as a token but is not one is a 422 on
 * `redactedData`; a well-formed token the key does not open is a 422 on `encryptionKey` (a wrong key
 * and an edited ciphertext look the same). Offsets in the messages are code points, as in findings.
 */
export function revealEncrypted(redactedData: string, keys: Keys): string {
  return redactedData.replace(TOKEN_LIKE, (token: string, offset: number) => {
    const at = () => toCodePointOffsets(redactedData, [offset])[0];
    const parsed = parseToken(token);
    if ("malformed" in parsed) {
      throw invalidField(
        "redactedData",
        `has a malformed encrypted token at offset ${at()}: ${parsed.malformed}`,
      );
    }
    const value = openToken(keys, parsed);
    if (value === undefined) {
      throw invalidField(
        "encryptionKey",
        `does not decrypt the token at offset ${at()}; wrong key or altered token`,
      );
    }
    return value;
  });
}
