/**
 * Runs the requested detectors over one text and returns the findings at or above each type's
 * requested likelihood, without overlaps.
 */
import { detectStreetAddresses } from "./address.ts";
import { detectDatesOfBirth } from "./date-of-birth.ts";
import {
  detectCreditCards,
  detectEmails,
  detectIbans,
  detectIpAddresses,
  detectSsns,
} from "./identifiers.ts";
import { detectPhoneNumbers } from "./phone.ts";
import { resolveOverlaps } from "./resolve.ts";
import type { ClassificationType, Finding, Likelihood } from "./types.ts";
import { likelihoodRank } from "./types.ts";

/** Finds person names; backed by the ONNX token classifier in production. */
export interface PersonNameFinder {
  findPersonNames(text: string): Promise<Finding[]>;
}

const STRUCTURED: Record<Exclude<ClassificationType, "PERSON_NAME">, (text: string) => Finding[]> = {
  EMAIL: detectEmails,
  PHONE_NUMBER: detectPhoneNumbers,
  CREDIT_CARD_NUMBER: detectCreditCards,
  US_SOCIAL_SECURITY_NUMBER: detectSsns,
  IP_ADDRESS: detectIpAddresses,
  IBAN_CODE: detectIbans,
  STREET_ADDRESS: detectStreetAddresses,
  DATE_OF_BIRTH: detectDatesOfBirth,
};

/** `minimums` maps each requested type to the lowest likelihood the caller wants reported. */
export async function detect(
  text: string,
  minimums: ReadonlyMap<ClassificationType, Likelihood>,
  names: PersonNameFinder,
): Promise<Finding[]> {
  const candidates: Finding[] = [];
  for (const [type, run] of Object.entries(STRUCTURED)) {
    if (minimums.has(type as ClassificationType)) candidates.push(...run(text));
  }
  if (minimums.has("PERSON_NAME")) candidates.push(...(await names.findPersonNames(text)));
  const wanted = candidates.filter((f) => {
    const min = minimums.get(f.type);
    return min !== undefined && likelihoodRank(f.likelihood) >= likelihoodRank(min);
  });
  return resolveOverlaps(wanted);
}
