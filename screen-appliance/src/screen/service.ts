/**
 * The screening operation behind `POST /screen`: detect, transform, score bias and toxicity, and
 * shape the response. It knows nothing about HTTP.
 */
import { detect, type PersonNameFinder } from "../detect/detect.ts";
import {
  type BiasType,
  CLASSIFICATION_TYPES,
  type ClassificationType,
  DEFAULT_MIN_LIKELIHOOD,
  DEFAULT_TRANSFORMATION,
  LIKELIHOOD_ALIASES,
  type Likelihood,
  likelihoodRank,
  type ToxicityType,
} from "../detect/types.ts";
import { transform } from "../transform/transform.ts";
import { toCodePointOffsets } from "./offsets.ts";
import type { ScreenRequest } from "./schema.ts";

/** Scores a text for the requested labels, each in [0, 1]. */
export interface TextScorer<T extends string> {
  score(text: string, labels: readonly T[]): Promise<Map<T, number>>;
}

export interface ScreenDeps {
  names: PersonNameFinder;
  bias: TextScorer<BiasType>;
  toxicity: TextScorer<ToxicityType>;
}

export type Level = "LOW" | "MEDIUM" | "HIGH";

/** Score thresholds for the reported level; see README "Bias and toxicity". */
export function levelOf(score: number): Level {
  if (score >= 0.7) return "HIGH";
  if (score >= 0.4) return "MEDIUM";
  return "LOW";
}

export async function screen(request: ScreenRequest, deps: ScreenDeps) {
  const text = request.data;
  const minimums = requestedLikelihoods(request);
  const transformationType = request.transformationParams?.transformationType ?? DEFAULT_TRANSFORMATION;
  const findings = await detect(text, minimums, deps.names);
  const redaction = transform(
    text,
    findings,
    transformationType,
    request.transformationParams?.encryptionKey,
  );
  const offsets = toCodePointOffsets(
    text,
    redaction.replacements.flatMap(({ finding }) => [finding.start, finding.end]),
  );

  const response = {
    redactedData: redaction.redactedData,
    transformationType,
    findings: redaction.replacements.map(({ finding, replacement }, i) => ({
      classificationType: finding.type,
      likelihoodType: finding.likelihood,
      start: offsets[2 * i] ?? 0,
      end: offsets[2 * i + 1] ?? 0,
      replacement,
    })),
    redactionMaps: redaction.redactionMaps,
    ...(request.biasTypes
      ? { biasResults: await levels(deps.bias, text, request.biasTypes, "biasType") }
      : {}),
    ...(request.toxicityTypes
      ? { toxicityResults: await levels(deps.toxicity, text, request.toxicityTypes, "toxicityType") }
      : {}),
  };
  return response;
}

/** Requested type -> lowest likelihood to report; every type at POSSIBLE when none are named. */
function requestedLikelihoods(request: ScreenRequest): Map<ClassificationType, Likelihood> {
  const minimums = new Map<ClassificationType, Likelihood>();
  if (!request.classificationTypes) {
    for (const type of CLASSIFICATION_TYPES) minimums.set(type, DEFAULT_MIN_LIKELIHOOD);
    return minimums;
  }
  for (const { classificationType, likelihoodType } of request.classificationTypes) {
    const type = classificationType as ClassificationType;
    const likelihood = (LIKELIHOOD_ALIASES[likelihoodType] ?? likelihoodType) as Likelihood;
    const earlier = minimums.get(type);
    // The same type twice: the more permissive threshold wins.
    if (!earlier || likelihoodRank(likelihood) < likelihoodRank(earlier)) minimums.set(type, likelihood);
  }
  return minimums;
}

async function levels<T extends string, K extends string>(
  scorer: TextScorer<T>,
  text: string,
  requested: readonly T[],
  key: K,
) {
  const unique = [...new Set(requested)];
  const scores = await scorer.score(text, unique);
  return unique.map((label) => {
    const score = Math.round((scores.get(label) ?? 0) * 1000) / 1000;
    return { [key]: label, level: levelOf(score), score } as Record<K, T> & { level: Level; score: number };
  });
}
