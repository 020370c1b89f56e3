import { isIPv4, isIPv6 } from "node:net";
import { describe, expect, it } from "vitest";
import { ibanValid, luhnValid } from "../detect/checksums.ts";
import type { ClassificationType } from "../detect/types.ts";
import { syntheticReplacer } from "./synthetic.ts";

const cases: [ClassificationType, string, (fake: string) => boolean][] = [
  ["EMAIL", "ana@example.org", (f) => /^[^@\s]+@[^@\s]+\.[a-z]+$/.test(f)],
  ["PHONE_NUMBER", "+44 20 7946 0958", (f) => /^\+44 \d{2} \d{4} \d{4}$/.test(f)],
  ["PHONE_NUMBER", "(415) 555-2671", (f) => /^\(\d{3}\) \d{3}-\d{4}$/.test(f)],
  [
    "CREDIT_CARD_NUMBER",
    "4111-1111-1111-1111",
    (f) => /^\d{4}-\d{4}-\d{4}-\d{4}$/.test(f) && luhnValid(f.replace(/-/g, "")),
  ],
  ["US_SOCIAL_SECURITY_NUMBER", "123-45-6789", (f) => /^\d{3}-\d{2}-\d{4}$/.test(f) && !f.startsWith("666")],
  ["IP_ADDRESS", "10.0.0.1", isIPv4],
  ["IP_ADDRESS", "2001:db8::1", isIPv6],
  ["IBAN_CODE", "DE89370400440532013000", (f) => f.startsWith("DE") && ibanValid(f)],
  ["IBAN_CODE", "GB82 WEST 1234 5698 7654 32", (f) => f.startsWith("GB") && f.includes(" ") && ibanValid(f)],
  ["STREET_ADDRESS", "1600 Amphitheatre Parkway", (f) => /^\d+ \S/.test(f)],
  ["DATE_OF_BIRTH", "1984-02-01", (f) => /^\d{4}-\d{2}-\d{2}$/.test(f)],
  ["DATE_OF_BIRTH", "2/1/1984", (f) => /^\d{1,2}\/\d{1,2}\/\d{4}$/.test(f)],
  ["DATE_OF_BIRTH", "March 3, 1984", (f) => /^[A-Z][a-z]+ \d{1,2}, \d{4}$/.test(f)],
  ["PERSON_NAME", "JOHN SMITH", (f) => f === f.toUpperCase() && f.split(" ").length === 2],
];

describe("synthetic values", () => {
  for (const [type, value, fits] of cases) {
    it(`replaces ${type} "${value}" with a different value of the same shape`, () => {
      for (let seed = 1; seed <= 10; seed++) {
        const fake = syntheticReplacer(value, seed).replace(type, value);
        expect(fake).not.toBe(value);
        expect(fits(fake), `${fake} does not fit the shape of ${value}`).toBe(true);
      }
    });
  }

  it("gives the same value the same fake within a request and different values different fakes", () => {
    const replacer = syntheticReplacer("", 3);
    const a = replacer.replace("EMAIL", "a@x.io");
    expect(replacer.replace("EMAIL", "a@x.io")).toBe(a);
    expect(replacer.replace("EMAIL", "b@x.io")).not.toBe(a);
    expect(replacer.maps()).toHaveLength(2);
  });
});
