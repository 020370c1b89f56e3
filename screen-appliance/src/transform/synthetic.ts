/**
 * TRANSFORMATION_TYPE_SYNTHETIC: realistic fake values of the same type and, where it carries
 * meaning, the same shape (digit grouping of phones and cards, date format, IBAN country). A value
 * seen again within a request gets the same fake; person names are replaced word by word so
 * "Ana" stays one fake first name wherever it appears.
 *
 * Reveal relies on every fake being unique and absent from the original text, so candidates that
 * collide are drawn again.
 */
import { randomInt } from "node:crypto";
import { base, en, Faker } from "@faker-js/faker";
import { luhnValid } from "../detect/checksums.ts";
import type { ClassificationType } from "../detect/types.ts";
import { nameParts, type RedactionMap, type Replacer } from "./redaction.ts";

const MAX_DRAWS = 50;

export function syntheticReplacer(original: string, seed = randomInt(2 ** 31)): Replacer {
  const faker = new Faker({ locale: [en, base], seed });
  const byValue = new Map<string, string>();
  const used = new Set<string>();
  const maps: RedactionMap[] = [];

  const fakeFor = (type: ClassificationType, value: string, wordIndex: number): string => {
    const key = `${type}\u0000${value}`;
    const known = byValue.get(key);
    if (known) return known;
    for (let draw = 0; draw < MAX_DRAWS; draw++) {
      const fake = generate(faker, type, value, wordIndex);
      if (fake !== value && !used.has(fake) && !original.includes(fake) && !overlapsUsed(fake, used)) {
        byValue.set(key, fake);
        used.add(fake);
        maps.push({ redactionString: fake, originalData: value });
        return fake;
      }
    }
    throw new Error(`could not draw a unique synthetic ${type} in ${MAX_DRAWS} attempts`);
  };

  return {
    replace(type, value) {
      if (type !== "PERSON_NAME") return fakeFor(type, value, 0);
      let word = 0;
      return nameParts(value)
        .map((part) => (/^\s+$/u.test(part) ? part : fakeFor(type, part, word++)))
        .join("");
    },
    maps: () => maps,
  };
}

/** A fake must not contain, or be contained in, another fake: reveal could not tell them apart. */
function overlapsUsed(fake: string, used: Set<string>): boolean {
  for (const u of used) if (u.includes(fake) || fake.includes(u)) return true;
  return false;
}

function generate(faker: Faker, type: ClassificationType, value: string, wordIndex: number): string {
  switch (type) {
    case "PERSON_NAME": {
      const name = wordIndex === 0 ? faker.person.firstName() : faker.person.lastName();
      return matchCase(name, value);
    }
    case "EMAIL":
      return faker.internet.email().toLowerCase();
    case "PHONE_NUMBER":
      // Keep "+<country code>" and every separator; only the subscriber digits change.
      return replaceDigits(faker, value, value.startsWith("+") ? countryCodeLength(value) : 0);
    case "CREDIT_CARD_NUMBER":
      return luhnShaped(faker, value);
    case "US_SOCIAL_SECURITY_NUMBER": {
      const area = String(faker.number.int({ min: 1, max: 899 })).padStart(3, "0");
      const ssn = `${area === "666" ? "667" : area}${faker.string.numeric({ length: 2, allowLeadingZeros: false })}${faker.string.numeric({ length: 4, allowLeadingZeros: false })}`;
      const sep = value.match(/\d{3}([- ]?)/)?.[1] ?? "-";
      return `${ssn.slice(0, 3)}${sep}${ssn.slice(3, 5)}${sep}${ssn.slice(5)}`;
    }
    case "IP_ADDRESS":
      return value.includes(":") ? faker.internet.ipv6() : faker.internet.ipv4();
    case "IBAN_CODE": {
      const country = value.slice(0, 2).toUpperCase();
      let iban: string;
      try {
        iban = faker.finance.iban({ countryCode: country, formatted: /\s/.test(value) });
      } catch {
        iban = faker.finance.iban({ formatted: /\s/.test(value) });
      }
      return value === value.toLowerCase() ? iban.toLowerCase() : iban;
    }
    case "STREET_ADDRESS":
      return faker.location.streetAddress(/\b(?:Apt|Suite|Unit)\b/i.test(value));
    case "DATE_OF_BIRTH":
      return fakeDateLike(faker, value);
  }
}

function matchCase(fake: string, like: string): string {
  if (like === like.toUpperCase() && like !== like.toLowerCase()) return fake.toUpperCase();
  if (like === like.toLowerCase() && like !== like.toUpperCase()) return fake.toLowerCase();
  return fake;
}

function countryCodeLength(phone: string): number {
  return (phone.match(/^\+(\d{1,3})/)?.[1]?.length ?? 0) + 1;
}

/** Replaces every digit after the first `keep` characters with a random digit. */
function replaceDigits(faker: Faker, value: string, keep: number): string {
  return value.slice(0, keep) + value.slice(keep).replace(/\d/g, () => faker.string.numeric(1));
}

/** Same grouping and length, a fresh number, and a Luhn check digit so it still looks real. */
function luhnShaped(faker: Faker, value: string): string {
  const digitCount = value.replace(/\D/g, "").length;
  const body = faker.string.numeric({ length: digitCount - 1, allowLeadingZeros: false });
  const check = [..."0123456789"].find((d) => luhnValid(body + d)) ?? "0";
  const digits = [...(body + check)];
  return value.replace(/\d/g, () => digits.shift() ?? "0");
}

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** A random birth date written in the same format as `value` (ISO, numeric with separators, or words). */
function fakeDateLike(faker: Faker, value: string): string {
  const date = faker.date.birthdate({ mode: "age", min: 18, max: 90 });
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + 1;
  const d = date.getUTCDate();
  const pad = (n: number) => String(n).padStart(2, "0");
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${y}-${pad(m)}-${pad(d)}`;
  const numeric = value.match(/^(\d{1,2})([/.-])(\d{1,2})\2(\d{2}|\d{4})$/);
  if (numeric) {
    const [, first = "", sep = "/", , year = ""] = numeric;
    const mm = first.length === 2 ? pad(m) : String(m);
    const dd = first.length === 2 ? pad(d) : String(d);
    return `${mm}${sep}${dd}${sep}${year.length === 2 ? pad(y % 100) : y}`;
  }
  return `${MONTH_NAMES[m - 1]} ${d}, ${y}`;
}
