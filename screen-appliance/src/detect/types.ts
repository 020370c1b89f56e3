/**
 * The enumerations of the screening API. Names follow the spec (`EMAIL`, `LIKELIHOOD_TYPE_*`,
 * `TRANSFORMATION_TYPE_*`); everything the spec leaves open is chosen here once.
 */

export const CLASSIFICATION_TYPES = [
  "EMAIL",
  "PHONE_NUMBER",
  "PERSON_NAME",
  "CREDIT_CARD_NUMBER",
  "US_SOCIAL_SECURITY_NUMBER",
  "IP_ADDRESS",
  "IBAN_CODE",
  "STREET_ADDRESS",
  "DATE_OF_BIRTH",
] as const;
export type ClassificationType = (typeof CLASSIFICATION_TYPES)[number];

/** Ordered from least to most certain; a finding is reported when at or above the requested level. */
export const LIKELIHOODS = [
  "LIKELIHOOD_TYPE_VERY_UNLIKELY",
  "LIKELIHOOD_TYPE_UNLIKELY",
  "LIKELIHOOD_TYPE_POSSIBLE",
  "LIKELIHOOD_TYPE_LIKELY",
  "LIKELIHOOD_TYPE_VERY_LIKELY",
] as const;
export type Likelihood = (typeof LIKELIHOODS)[number];

/** The spec's examples use `LIKELIHOOD_TYPE_MEDIUM`; it is accepted as another name for POSSIBLE. */
export const LIKELIHOOD_ALIASES: Record<string, Likelihood> = {
  LIKELIHOOD_TYPE_MEDIUM: "LIKELIHOOD_TYPE_POSSIBLE",
};
export const ACCEPTED_LIKELIHOODS = [...LIKELIHOODS, ...Object.keys(LIKELIHOOD_ALIASES)] as const;

export function likelihoodRank(likelihood: Likelihood): number {
  return LIKELIHOODS.indexOf(likelihood);
}

export const TRANSFORMATION_TYPES = [
  "TRANSFORMATION_TYPE_NUMBERED",
  "TRANSFORMATION_TYPE_SYNTHETIC",
  "TRANSFORMATION_TYPE_ENCRYPTED",
] as const;
export type TransformationType = (typeof TRANSFORMATION_TYPES)[number];

export const BIAS_TYPES = ["RACE_ETHNICITY", "NATIONALITY_LOCATION", "APPEARANCE"] as const;
export type BiasType = (typeof BIAS_TYPES)[number];

export const TOXICITY_TYPES = ["HATE", "PHYSICAL_SAFETY"] as const;
export type ToxicityType = (typeof TOXICITY_TYPES)[number];

/** One detected value, offsets in UTF-16 code units of the scanned string (half-open). */
export interface Finding {
  type: ClassificationType;
  likelihood: Likelihood;
  start: number;
  end: number;
}

/** Applied when a request sends only `data`: every type at POSSIBLE, numbered redaction. */
export const DEFAULT_MIN_LIKELIHOOD: Likelihood = "LIKELIHOOD_TYPE_POSSIBLE";
export const DEFAULT_TRANSFORMATION: TransformationType = "TRANSFORMATION_TYPE_NUMBERED";
