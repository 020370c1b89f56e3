/**
 * Chooses the replacer for a transformation type, applies it, and checks before answering that
 * `/reveal` will restore the exact original; a redaction that could not be undone is never returned.
 */
import type { Finding, TransformationType } from "../detect/types.ts";
import { ApiError } from "../http/problem.ts";
import { encryptedReplacer, parseEncryptionKey, revealEncrypted } from "./encrypted.ts";
import { numberedReplacer } from "./numbered.ts";
import { type Redaction, type RedactionMap, redact, revealWithMaps } from "./redaction.ts";
import { syntheticReplacer } from "./synthetic.ts";

const SYNTHETIC_ATTEMPTS = 5;

export function transform(
  text: string,
  findings: readonly Finding[],
  type: TransformationType,
  encryptionKey?: string,
): Redaction {
  switch (type) {
    case "TRANSFORMATION_TYPE_NUMBERED":
      return verified(text, redact(text, findings, numberedReplacer(text)));
    case "TRANSFORMATION_TYPE_SYNTHETIC":
      // Fakes are random; on the rare draw that makes reveal ambiguous, draw a fresh set.
      for (let attempt = 1; ; attempt++) {
        const result = redact(text, findings, syntheticReplacer(text));
        if (revealWithMaps(result.redactedData, result.redactionMaps) === text) return result;
        if (attempt === SYNTHETIC_ATTEMPTS) return verified(text, result);
      }
    case "TRANSFORMATION_TYPE_ENCRYPTED": {
      const keys = parseEncryptionKey(encryptionKey, "transformationParams.encryptionKey");
      const result = redact(text, findings, encryptedReplacer(keys));
      if (revealEncrypted(result.redactedData, keys, "data") !== text) throw irreversible();
      return result;
    }
  }
}

function verified(text: string, result: Redaction): Redaction {
  if (revealWithMaps(result.redactedData, result.redactionMaps) !== text) throw irreversible();
  return result;
}

const irreversible = () =>
  new ApiError(
    422,
    "data: contains text that collides with redaction strings, so it could not be redacted reversibly",
    [
      {
        path: "data",
        message: "contains text that collides with redaction strings; try another transformationType",
      },
    ],
  );

/** `/reveal`: with an encryption key, tokens are decrypted in place; otherwise the maps are applied. */
export function reveal(
  redactedData: string,
  type: TransformationType,
  maps: readonly RedactionMap[] | undefined,
  encryptionKey: string | undefined,
): string {
  if (encryptionKey !== undefined) {
    if (type !== "TRANSFORMATION_TYPE_ENCRYPTED") {
      throw new ApiError(422, "encryptionKey: only applies to TRANSFORMATION_TYPE_ENCRYPTED", [
        {
          path: "encryptionKey",
          message: "only applies to transformationType TRANSFORMATION_TYPE_ENCRYPTED",
        },
      ]);
    }
    return revealEncrypted(redactedData, parseEncryptionKey(encryptionKey, "encryptionKey"), "encryptionKey");
  }
  return revealWithMaps(redactedData, maps ?? []);
}
