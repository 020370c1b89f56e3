/**
 * The sidecar JSON written next to each `.onnx` file by the training scripts: how to build the
 * model's input and how to read its output. Training and inference read the same description.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";

export const ModelSpec = z.object({
  name: z.string(),
  /** Rows of the hashed embedding table, row 0 being padding. */
  buckets: z.number().int().positive(),
  /**
   * Pretrained word rows (src/ml/vocabulary.ts): the vocabulary file beside the model, one word per
   * line; word i is table row `buckets + i`.
   */
  words: z.object({ file: z.string(), count: z.number().int().positive() }).optional(),
  dims: z.number().int().positive(),
  labels: z.array(z.string()),
  /** "softmax" for one label per item (NER tags), "sigmoid" for independent labels. */
  output: z.enum(["softmax", "sigmoid"]),
  /** Decision threshold tuned on a development split during training. */
  threshold: z.number(),
  /** Name model only: the lower threshold for continuing a name already started. */
  continuationThreshold: z.number().optional(),
  /** Name model only: the mean probability a name needs when nothing else supports it (src/ner/support.ts). */
  unlistedThreshold: z.number().optional(),
  /**
   * Classifiers only: per label, the monotone map from the raw model output to a calibrated
   * probability (src/classify/calibration.ts): points (x ascending, y non-decreasing).
   */
  calibration: z.record(z.string(), z.object({ x: z.array(z.number()), y: z.array(z.number()) })).optional(),
  trainedAt: z.string(),
  training: z.record(z.string(), z.unknown()),
});
export type ModelSpec = z.infer<typeof ModelSpec>;

export async function readModelSpec(path: string): Promise<ModelSpec> {
  return ModelSpec.parse(JSON.parse(await readFile(path, "utf8")));
}
