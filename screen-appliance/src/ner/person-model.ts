/**
 * The PERSON_NAME detector: the token-classification model trained by `npm run train:ner`, run by
 * onnxruntime-node. Long texts are fed in chunks so one request never builds a huge tensor.
 */
import type * as ort from "onnxruntime-node";
import type { PersonNameFinder } from "../detect/detect.ts";
import type { Finding } from "../detect/types.ts";
import type { ModelSpec } from "../ml/model-spec.ts";
import { runBagModel } from "../ml/session.ts";
import type { WordVocabulary } from "../ml/vocabulary.ts";
import { decodeNames } from "./decode.ts";
import { FEATURES_PER_TOKEN, tokenRows } from "./features.ts";
import { nameGazetteer } from "./gazetteer.ts";
import { tokenize } from "./tokenize.ts";

const CHUNK_TOKENS = 2048;
// Chunks overlap so a name on a chunk boundary still sees its neighbours.
const CHUNK_OVERLAP = 16;

export class OnnxPersonNameFinder implements PersonNameFinder {
  constructor(
    private readonly session: ort.InferenceSession,
    private readonly spec: ModelSpec,
    /** The pretrained words of a model trained with word vectors (spec.words). */
    private readonly vocabulary?: WordVocabulary,
  ) {
    if (spec.words && !vocabulary)
      throw new Error(`${spec.name}: trained with word vectors, no vocabulary given`);
  }

  /** Probabilities [tokens, 3] of O, B, I for every token. */
  async tagProbabilities(tokens: ReturnType<typeof tokenize>): Promise<Float32Array> {
    const probs = new Float32Array(tokens.length * 3);
    const gazetteer = nameGazetteer();
    for (let from = 0; from < tokens.length; from += CHUNK_TOKENS) {
      const lo = Math.max(0, from - CHUNK_OVERLAP);
      const hi = Math.min(tokens.length, from + CHUNK_TOKENS + CHUNK_OVERLAP);
      const slice = tokens.slice(lo, hi);
      const rows = tokenRows(slice, gazetteer, this.spec.buckets, undefined, this.vocabulary);
      const out = await runBagModel(
        this.session,
        rows,
        new Float32Array(slice.length).fill(1),
        slice.length,
        FEATURES_PER_TOKEN,
      );
      const keepFrom = from - lo;
      const keepTo = Math.min(from + CHUNK_TOKENS, tokens.length) - lo;
      probs.set(out.subarray(keepFrom * 3, keepTo * 3), from * 3);
    }
    return probs;
  }

  async findPersonNames(text: string): Promise<Finding[]> {
    const tokens = tokenize(text);
    if (tokens.length === 0) return [];
    const { threshold, continuationThreshold, unlistedThreshold } = this.spec;
    const probs = await this.tagProbabilities(tokens);
    return decodeNames(
      tokens,
      probs,
      threshold,
      continuationThreshold ?? threshold,
      nameGazetteer(),
      unlistedThreshold ?? 0,
    );
  }
}
