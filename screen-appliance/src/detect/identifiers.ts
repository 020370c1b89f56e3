/**
 * Detectors for identifiers with a fixed shape: a pattern finds candidates, a checksum or structure
 * rule drops look-alikes, and context words raise (or, without them, lower) the likelihood.
 */
import { isIPv4, isIPv6 } from "node:net";
import { ibanValid, luhnValid, ssnStructureValid } from "./checksums.ts";
import { contextWords, hasContext } from "./context.ts";
import type { Finding } from "./types.ts";

const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;

export function detectEmails(text: string): Finding[] {
  return [...text.matchAll(EMAIL)].map((m) => ({
    type: "EMAIL",
    likelihood: "LIKELIHOOD_TYPE_VERY_LIKELY",
    start: m.index,
    end: m.index + m[0].length,
  }));
}

// 12 to 19 digits, optionally grouped by single spaces or dashes, not glued to other digits.
const CARD = /(?<![\d-])\d(?:[ -]?\d){11,18}(?![\d-])/g;
const CARD_CONTEXT = contextWords([
  "card",
  "credit",
  "debit",
  "cc",
  "visa",
  "mastercard",
  "amex",
  "american express",
  "discover",
  "maestro",
  "jcb",
]);

export function detectCreditCards(text: string): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(CARD)) {
    const digits = m[0].replace(/\D/g, "");
    const start = m.index;
    const end = start + m[0].length;
    const context = hasContext(text, start, end, CARD_CONTEXT);
    if (luhnValid(digits)) {
      found.push({
        type: "CREDIT_CARD_NUMBER",
        likelihood: context ? "LIKELIHOOD_TYPE_VERY_LIKELY" : "LIKELIHOOD_TYPE_LIKELY",
        start,
        end,
      });
    } else if (context) {
      // A mistyped card number next to "card" is still worth hiding, but it is only a guess.
      found.push({ type: "CREDIT_CARD_NUMBER", likelihood: "LIKELIHOOD_TYPE_UNLIKELY", start, end });
    }
  }
  return found;
}

const SSN = /(?<![\d-])(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\d-])/g;
const SSN_CONTEXT = contextWords(["ssn", "ssns", "social security", "social sec", "ss#", "ss #", "ssid"]);

export function detectSsns(text: string): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(SSN)) {
    const [, area = "", separator, group = "", serial = ""] = m;
    if (!ssnStructureValid(area, group, serial)) continue;
    const start = m.index;
    const end = start + m[0].length;
    const context = hasContext(text, start, end, SSN_CONTEXT);
    // Nine bare digits are usually something else; only "123-45-6789" stands on its own.
    const likelihood = context
      ? "LIKELIHOOD_TYPE_VERY_LIKELY"
      : separator === "-"
        ? "LIKELIHOOD_TYPE_LIKELY"
        : "LIKELIHOOD_TYPE_UNLIKELY";
    found.push({ type: "US_SOCIAL_SECURITY_NUMBER", likelihood, start, end });
  }
  return found;
}

const IPV4 = /(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d]|\.\d)/g;
const IPV6 = /(?<![\p{L}\p{N}:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\p{L}\p{N}:])/gu;
const IP_CONTEXT = contextWords(["ip", "ipv4", "ipv6", "address", "host", "server", "from"]);

export function detectIpAddresses(text: string): Finding[] {
  const found: Finding[] = [];
  for (const [pattern, valid] of [
    [IPV4, isIPv4],
    [IPV6, isIPv6],
  ] as const) {
    for (const m of text.matchAll(pattern)) {
      if (!valid(m[0])) continue;
      const start = m.index;
      const end = start + m[0].length;
      const likelihood = hasContext(text, start, end, IP_CONTEXT)
        ? "LIKELIHOOD_TYPE_VERY_LIKELY"
        : "LIKELIHOOD_TYPE_LIKELY";
      found.push({ type: "IP_ADDRESS", likelihood, start, end });
    }
  }
  return found;
}

// Country code, check digits, then 11 to 30 alphanumerics, optionally in groups of four.
const IBAN = /(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}(?![\p{L}\p{N}])/gu;

export function detectIbans(text: string): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(IBAN)) {
    // The pattern may run into the next word ("...7654 32 or"); drop trailing groups until valid.
    let candidate = m[0];
    while (!ibanValid(candidate) && candidate.includes(" "))
      candidate = candidate.slice(0, candidate.lastIndexOf(" "));
    if (!ibanValid(candidate)) continue;
    found.push({
      type: "IBAN_CODE",
      likelihood: "LIKELIHOOD_TYPE_VERY_LIKELY",
      start: m.index,
      end: m.index + candidate.length,
    });
  }
  return found;
}
