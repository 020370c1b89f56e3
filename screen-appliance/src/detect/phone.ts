/**
 * Phone numbers: a loose pattern proposes digit runs that are formatted like phone numbers, and
 * libphonenumber-js decides whether each one is a valid number in at least one of the regions the
 * appliance's customers mostly write from. Context words ("call", "mobile", "fax") lift the
 * likelihood; runs that are dates or bare digits without context stay below the default threshold.
 */

import type { CountryCode } from "libphonenumber-js";
import { parsePhoneNumberFromString } from "libphonenumber-js";
import { contextWords, hasContext } from "./context.ts";
import type { Finding, Likelihood } from "./types.ts";

const REGIONS: CountryCode[] = [
  "US",
  "GB",
  "CA",
  "AU",
  "IN",
  "DE",
  "FR",
  "IT",
  "ES",
  "NL",
  "BE",
  "CH",
  "AT",
  "SE",
  "NO",
  "DK",
  "FI",
  "PL",
  "PT",
  "CZ",
  "BR",
  "IE",
];

const CANDIDATE =
  /(?<![\p{L}\p{N}+\-/.])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d[\d .()-]{4,20}\d(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?![\p{L}\p{N}]|[-/.]\d)/gu;
// Dates and timestamps ("2020-06-20 14:11") and dotted quads are never phone numbers.
const DATE_LIKE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})(?!\d)/;
const IPV4_INSIDE = /\d{1,3}(?:\.\d{1,3}){3}/;
// 3-2-4 digit groups are how US social security numbers are written, not phone numbers.
const SSN_SHAPED = /^\d{3}-\d{2}-\d{4}$/;
const PHONE_CONTEXT = contextWords([
  "phone",
  "phones",
  "telephone",
  "tel",
  "call",
  "called",
  "calling",
  "mobile",
  "cell",
  "cellphone",
  "fax",
  "number",
  "reach",
  "contact",
  "dial",
  "sms",
  "text",
  "whatsapp",
  "office",
  "desk",
  "home",
  "landline",
  "extension",
  "ext",
]);

export function detectPhoneNumbers(text: string): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(CANDIDATE)) {
    const raw = m[0].trimEnd();
    const digits = raw.replace(/\D/g, "");
    if (
      digits.length < 7 ||
      digits.length > 15 + 5 ||
      DATE_LIKE.test(raw) ||
      IPV4_INSIDE.test(raw) ||
      SSN_SHAPED.test(raw)
    )
      continue;
    const start = m.index;
    const end = start + raw.length;
    if (text[end] === ":") continue;
    const likelihood = phoneLikelihood(raw, digits, hasContext(text, start, end, PHONE_CONTEXT));
    if (likelihood) found.push({ type: "PHONE_NUMBER", likelihood, start, end });
  }
  return found;
}

function phoneLikelihood(raw: string, digits: string, context: boolean): Likelihood | undefined {
  const valid = raw.startsWith("+")
    ? Boolean(parsePhoneNumberFromString(raw)?.isValid())
    : REGIONS.some((region) => parsePhoneNumberFromString(raw, region)?.isValid());
  // Separators, a "+" or an area code in parentheses are how people write phone numbers.
  const formatted = /[+() .-]/.test(raw);
  if (valid && context) return "LIKELIHOOD_TYPE_VERY_LIKELY";
  // Without context, two short groups ("636 1812") are as often a house number and a year.
  if (valid && formatted && (digits.length >= 9 || /[+(]/.test(raw))) return "LIKELIHOOD_TYPE_LIKELY";
  if (valid) return "LIKELIHOOD_TYPE_UNLIKELY";
  if (context) return "LIKELIHOOD_TYPE_POSSIBLE";
  return undefined;
}
