/**
 * Request bodies of `POST /screen` and `POST /reveal`, field names as the spec gives them. Unknown
 * enum values fail with a message that lists the allowed values, and unknown fields are refused so
 * a misspelt option is never silently ignored.
 */
import { z } from "zod";
import {
  ACCEPTED_LIKELIHOODS,
  BIAS_TYPES,
  CLASSIFICATION_TYPES,
  TOXICITY_TYPES,
  TRANSFORMATION_TYPES,
} from "../detect/types.ts";

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: () => `must be one of: ${values.join(", ")}` });

const text = (field: string) => z.string({ error: () => `${field} must be a string` });

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
    .optional(),
  biasTypes: z.array(oneOf(BIAS_TYPES)).optional(),
  toxicityTypes: z.array(oneOf(TOXICITY_TYPES)).optional(),
});
export type ScreenRequest = z.infer<typeof ScreenRequest>;

export const RevealRequest = z
  .strictObject({
    redactedData: text("redactedData"),
    redactionMaps: z
      .array(z.strictObject({ redactionString: text("redactionString"), originalData: text("originalData") }))
      .optional(),
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
  });
export type RevealRequest = z.infer<typeof RevealRequest>;
