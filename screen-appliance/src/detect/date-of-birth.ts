/**
 * Dates of birth: any full date (numeric or with a month name) is a candidate, and only a birth
 * context ("born", "DOB", "birthday") makes it likely. Other dates are reported as UNLIKELY, so
 * they show up only when a caller asks for everything.
 */
import { contextWords, hasContext } from "./context.ts";
import type { Finding } from "./types.ts";

const MONTHS =
  "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\\.?";
const DATE = new RegExp(
  [
    "\\d{4}-\\d{2}-\\d{2}",
    "\\d{1,2}[/.-]\\d{1,2}[/.-](?:\\d{4}|\\d{2})",
    `${MONTHS}\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}`,
    `\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTHS},?\\s+\\d{4}`,
  ]
    .map((p) => `(?:${p})`)
    .join("|")
    .replace(/^/, "(?<![\\p{L}\\p{N}])(?:")
    .concat(")(?![\\p{L}\\p{N}])"),
  "giu",
);
const BIRTH_CONTEXT = contextWords([
  "born",
  "birth",
  "birthday",
  "birthdate",
  "dob",
  "d\\.o\\.b\\.?",
  "b\\.",
  "date of birth",
]);

export function detectDatesOfBirth(text: string): Finding[] {
  return [...text.matchAll(DATE)].map((m) => {
    const start = m.index;
    const end = start + m[0].length;
    const birth = hasContext(text, start, end, BIRTH_CONTEXT, { before: 40, after: 0 });
    return {
      type: "DATE_OF_BIRTH",
      likelihood: birth ? "LIKELIHOOD_TYPE_LIKELY" : "LIKELIHOOD_TYPE_UNLIKELY",
      start,
      end,
    };
  });
}
