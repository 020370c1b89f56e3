/**
 * Chooses the replacer for a transformation type, applies it, and checks before answering that
 * `/reveal` will restore the exact original; a redaction that could not be undone is never returned.
 */
import type { Finding, TransformationType } from "../detect/types.ts";
import { invalidField } from "../http/problem.ts";
import { toCodePointOffsets } from "../screen/offsets.ts";
import { encryptedReplacer, firstTokenLike, parseEncryptionKey, revealEncrypted } from "./encrypted.ts";
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
      // `/reveal` reads every `[ENC:` as a token, so text that already holds one could not come back as it was.
      const lookalike = firstTokenLike(text);
      if (lookalike >= 0) {
        throw irreversible(
          `contains "[ENC:" at offset ${toCodePointOffsets(text, [lookalike])[0]}, which /reveal would read as an encrypted token, so it could not be redacted reversibly; try another transformationType`,
        );
      }
      const result = redact(text, findings, encryptedReplacer(keys));
      if (revealEncrypted(result.redactedData, keys) !== text) throw irreversible();
      return result;
    }
  }
}

function verified(text: string, result: Redaction): Redaction {
  if (revealWithMaps(result.redactedData, result.redactionMaps) !== text) throw irreversible();
  return result;
}

const irreversible = (
  message = "contains text that collides with redaction strings, so it could not be redacted reversibly; try another transformationType",
) => invalidField("data", message);

/**
 * `/reveal`: under TRANSFORMATION_TYPE_ENCRYPTED with a key, tokens are decrypted in place;
 * otherwise the maps are applied. The request schema has already refused a key with another type.
 */
export function reveal(
  redactedData: string,
  type: TransformationType,
  maps: readonly RedactionMap[] | undefined,
  encryptionKey: string | undefined,
): string {
  if (type === "TRANSFORMATION_TYPE_ENCRYPTED" && encryptionKey !== undefined) {
    return revealEncrypted(redactedData, parseEncryptionKey(encryptionKey, "encryptionKey"));
  }
  return revealWithMaps(redactedData, maps ?? []);
}
