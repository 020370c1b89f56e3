/**
 * Request bodies of `POST /screen` and `POST /reveal`, field names as the spec gives them. Unknown
 * enum values fail with a message that lists the allowed values, and unknown fields, a key the
 * transformation does not use and reveal maps that cannot be applied are refused, so no part of a
 * request is ever silently ignored.
 */
import { z } from "zod";
import {
  ACCEPTED_LIKELIHOODS,
  BIAS_TYPES,
  CLASSIFICATION_TYPES,
  TOXICITY_TYPES,
  TRANSFORMATION_TYPES,
  type TransformationType,
} from "../detect/types.ts";

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: () => `must be one of: ${values.join(", ")}` });

const text = (field: string) => z.string({ error: () => `${field} must be a string` });

const ENCRYPTED: TransformationType = "TRANSFORMATION_TYPE_ENCRYPTED";

/**
 * Only TRANSFORMATION_TYPE_ENCRYPTED takes an `encryptionKey` (the spec: "for encrypted
 * transformation types"); with any other type the key would be ignored without a word.
 */
function refuseKeyWithoutEncryption(
  type: TransformationType,
  key: string | undefined,
  ctx: z.RefinementCtx,
  path: PropertyKey[],
): void {
  if (key === undefined || type === ENCRYPTED) return;
  ctx.addIssue({
    code: "custom",
    path,
    message: `only ${ENCRYPTED} takes a key; ${type} does not encrypt, so leave encryptionKey out`,
  });
}

export const ScreenRequest = z.strictObject({
  data: text("data"),
  classificationTypes: z
    .array(
      z.strictObject({
        classificationType: oneOf(CLASSIFICATION_TYPES),
        likelihoodType: oneOf(ACCEPTED_LIKELIHOODS as unknown as readonly [string, ...string[]]),
      }),
    )
    .optional(),
  transformationParams: z
    .strictObject({
      transformationType: oneOf(TRANSFORMATION_TYPES),
      encryptionKey: text("encryptionKey").optional(),
    })
    .superRefine(({ transformationType, encryptionKey }, ctx) => {
      refuseKeyWithoutEncryption(transformationType, encryptionKey, ctx, ["encryptionKey"]);
      if (transformationType === ENCRYPTED && encryptionKey === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["encryptionKey"],
          message: `is required with ${ENCRYPTED}: 32 random bytes in base64 (openssl rand -base64 32)`,
        });
      }
    })
    .optional(),
  biasTypes: z.array(oneOf(BIAS_TYPES)).optional(),
  toxicityTypes: z.array(oneOf(TOXICITY_TYPES)).optional(),
});
export type ScreenRequest = z.infer<typeof ScreenRequest>;

/**
 * A reveal map must say what to replace (an empty string occurs everywhere) and must not give one
 * redaction string two originals (which one wins would be an accident of order).
 */
const RedactionMaps = z
  .array(
    z.strictObject({
      redactionString: text("redactionString").min(1, {
        error: "must not be empty: an empty string marks no place in redactedData to restore",
      }),
      originalData: text("originalData"),
    }),
  )
  .superRefine((maps, ctx) => {
    const firstIndex = new Map<string, number>();
    maps.forEach(({ redactionString, originalData }, i) => {
      const first = firstIndex.get(redactionString);
      if (first === undefined) firstIndex.set(redactionString, i);
      else if (maps[first]?.originalData !== originalData) {
        ctx.addIssue({
          code: "custom",
          path: [i, "redactionString"],
          message: `repeats redactionMaps.${first}.redactionString with a different originalData, so the original is ambiguous`,
        });
      }
    });
  });

export const RevealRequest = z
  .strictObject({
    redactedData: text("redactedData"),
    redactionMaps: RedactionMaps.optional(),
    transformationType: oneOf(TRANSFORMATION_TYPES),
    encryptionKey: text("encryptionKey").optional(),
  })
  .superRefine((body, ctx) => {
    if (body.redactionMaps === undefined && body.encryptionKey === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["redactionMaps"],
        message: "is required unless encryptionKey is given",
      });
    }
    refuseKeyWithoutEncryption(body.transformationType, body.encryptionKey, ctx, ["encryptionKey"]);
    if (body.transformationType === ENCRYPTED && body.redactionMaps && body.encryptionKey !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["redactionMaps"],
        message:
          "send redactionMaps or encryptionKey, not both: with a key every token is decrypted and the maps would go unused",
      });
    }
  });
export type RevealRequest = z.infer<typeof RevealRequest>;
