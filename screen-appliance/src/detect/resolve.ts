/**
 * Overlap resolution. Detectors work independently, so a card number can also parse as a phone
 * number and a name can sit inside an email address. Each character is redacted at most once: the
 * checked, structured detectors outrank the statistical name model, then higher likelihood wins,
 * then the longer span, then the type order below.
 */
import type { ClassificationType, Finding } from "./types.ts";
import { likelihoodRank } from "./types.ts";

const TYPE_ORDER: ClassificationType[] = [
  "EMAIL",
  "IBAN_CODE",
  "CREDIT_CARD_NUMBER",
  "US_SOCIAL_SECURITY_NUMBER",
  "IP_ADDRESS",
  "PHONE_NUMBER",
  "DATE_OF_BIRTH",
  "STREET_ADDRESS",
  "PERSON_NAME",
];

const tier = (f: Finding) => (f.type === "PERSON_NAME" ? 1 : 0);

/** Keeps a set of non-overlapping findings, sorted by start offset. */
export function resolveOverlaps(findings: readonly Finding[]): Finding[] {
  const ranked = [...findings].sort(
    (a, b) =>
      tier(a) - tier(b) ||
      likelihoodRank(b.likelihood) - likelihoodRank(a.likelihood) ||
      b.end - b.start - (a.end - a.start) ||
      TYPE_ORDER.indexOf(a.type) - TYPE_ORDER.indexOf(b.type),
  );
  const kept: Finding[] = [];
  for (const f of ranked) {
    if (kept.every((k) => f.end <= k.start || f.start >= k.end)) kept.push(f);
  }
  return kept.sort((a, b) => a.start - b.start);
}
