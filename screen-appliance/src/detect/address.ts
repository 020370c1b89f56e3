/**
 * Street addresses in the common English form "1600 Amphitheatre Parkway, Apt 4, Mountain View, CA
 * 94043": a house number, one to four capitalised words and a street suffix are required, the unit
 * and the city/state/ZIP tail are taken when present. Addresses without a street suffix (most
 * continental European forms) are deliberately not guessed at, to keep precision high.
 */
import { contextWords, hasContext } from "./context.ts";
import type { Finding } from "./types.ts";

const SUFFIXES = [
  "Street",
  "St",
  "Avenue",
  "Ave",
  "Road",
  "Rd",
  "Boulevard",
  "Blvd",
  "Lane",
  "Ln",
  "Drive",
  "Dr",
  "Court",
  "Ct",
  "Way",
  "Place",
  "Pl",
  "Terrace",
  "Parkway",
  "Pkwy",
  "Circle",
  "Cir",
  "Square",
  "Sq",
  "Highway",
  "Hwy",
  "Trail",
  "Crescent",
  "Close",
  "Gardens",
  "Alley",
  "Row",
  "Hill",
  "Park",
  "Walk",
  "Green",
].join("|");

const STREET = `\\d{1,6}[A-Za-z]?\\s+(?:[A-Z][\\p{L}'-]+\\.?\\s+){1,4}(?:${SUFFIXES})\\.?`;
const UNIT = `(?:,?\\s*(?:Apt\\.?|Apartment|Suite|Ste\\.?|Unit|#)\\s*[\\w-]+)?`;
const TAIL = `(?:,?\\s*(?:[A-Z][\\p{L}'-]+\\s?){1,3},?\\s*[A-Z]{2}\\s+\\d{5}(?:-\\d{4})?)?`;
const ADDRESS = new RegExp(`(?<![\\p{L}\\p{N}])${STREET}${UNIT}${TAIL}`, "gu");
const ADDRESS_CONTEXT = contextWords([
  "address",
  "live",
  "lives",
  "living",
  "located",
  "ship",
  "mail",
  "moved",
]);

export function detectStreetAddresses(text: string): Finding[] {
  return [...text.matchAll(ADDRESS)].map((m) => {
    const start = m.index;
    const end = start + m[0].length;
    return {
      type: "STREET_ADDRESS",
      likelihood: hasContext(text, start, end, ADDRESS_CONTEXT)
        ? "LIKELIHOOD_TYPE_VERY_LIKELY"
        : "LIKELIHOOD_TYPE_LIKELY",
      start,
      end,
    };
  });
}
