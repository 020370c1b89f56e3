import { describe, expect, it } from "vitest";
import { detectStreetAddresses } from "./address.ts";
import { detectDatesOfBirth } from "./date-of-birth.ts";
import { detect } from "./detect.ts";
import {
  detectCreditCards,
  detectEmails,
  detectIbans,
  detectIpAddresses,
  detectSsns,
} from "./identifiers.ts";
import { detectPhoneNumbers } from "./phone.ts";
import { CLASSIFICATION_TYPES, type ClassificationType, type Likelihood } from "./types.ts";

const values = (text: string, found: { start: number; end: number }[]) =>
  found.map((f) => text.slice(f.start, f.end));
const noNames = { findPersonNames: async () => [] };
const everything = new Map<ClassificationType, Likelihood>(
  CLASSIFICATION_TYPES.map((t) => [t, "LIKELIHOOD_TYPE_POSSIBLE"]),
);

describe("structured detectors", () => {
  it("finds email addresses, including non-ASCII local parts", () => {
    const text = "Write to jane.doe+news@example.co.uk or renée@exämple.fr today.";
    expect(values(text, detectEmails(text))).toEqual(["jane.doe+news@example.co.uk", "renée@exämple.fr"]);
  });

  it("finds phone numbers in national and international formats", () => {
    const text = "Call (415) 555-2671 or +44 20 7946 0958, fax 030 901820 42.";
    expect(values(text, detectPhoneNumbers(text))).toEqual([
      "(415) 555-2671",
      "+44 20 7946 0958",
      "030 901820 42",
    ]);
  });

  it("does not take dates, timestamps or IP addresses for phone numbers", () => {
    const text = "On 2020-06-20 14:11:22 host 106.31.73.20 answered; see 4/14/1962.";
    expect(detectPhoneNumbers(text)).toEqual([]);
  });

  it("reports a Luhn-valid card number as a card, not a phone number", async () => {
    const text = "my card 4111 1111 1111 1111 was declined";
    const found = await detect(text, everything, noNames);
    expect(found.map((f) => [f.type, text.slice(f.start, f.end)])).toEqual([
      ["CREDIT_CARD_NUMBER", "4111 1111 1111 1111"],
    ]);
    expect(detectCreditCards("order 4111 1111 1111 1112 shipped")).toEqual([]);
  });

  it("reports an SSN as an SSN, not a phone number, and rejects never-issued areas", async () => {
    const text = "SSN 123-45-6789, not 666-45-6789";
    const found = await detect(text, everything, noNames);
    expect(found.map((f) => [f.type, text.slice(f.start, f.end), f.likelihood])).toEqual([
      ["US_SOCIAL_SECURITY_NUMBER", "123-45-6789", "LIKELIHOOD_TYPE_VERY_LIKELY"],
    ]);
    expect(detectSsns("id 666-45-6789")).toEqual([]);
  });

  it("finds IPv4 and IPv6 addresses and skips impossible octets", () => {
    const text = "from 192.168.0.1 and 2001:db8::8a2e:370:7334 but not 999.1.1.1";
    expect(values(text, detectIpAddresses(text))).toEqual(["192.168.0.1", "2001:db8::8a2e:370:7334"]);
  });

  it("finds IBANs only when the mod-97 check passes", () => {
    const text = "pay GB82 WEST 1234 5698 7654 32 or DE89370400440532013000, not GB83WEST12345698765432";
    expect(values(text, detectIbans(text))).toEqual([
      "GB82 WEST 1234 5698 7654 32",
      "DE89370400440532013000",
    ]);
  });

  it("finds street addresses with a house number and a street suffix", () => {
    const text = "Ship it to 1600 Amphitheatre Parkway, Mountain View, CA 94043 please.";
    expect(values(text, detectStreetAddresses(text))).toEqual([
      "1600 Amphitheatre Parkway, Mountain View, CA 94043",
    ]);
    expect(detectStreetAddresses("We sold 300 Big Macs")).toEqual([]);
  });

  it("rates a date as a date of birth only with a birth context", () => {
    const born = "She was born on March 3, 1984.";
    const meeting = "The meeting is on 2024-03-05.";
    expect(detectDatesOfBirth(born).map((f) => f.likelihood)).toEqual(["LIKELIHOOD_TYPE_LIKELY"]);
    expect(detectDatesOfBirth(meeting).map((f) => f.likelihood)).toEqual(["LIKELIHOOD_TYPE_UNLIKELY"]);
  });

  it("reports only types that were asked for, at or above the requested likelihood", async () => {
    const text = "SSN 123456789 and mail a@b.io";
    const onlyEmail = new Map<ClassificationType, Likelihood>([["EMAIL", "LIKELIHOOD_TYPE_VERY_LIKELY"]]);
    expect((await detect(text, onlyEmail, noNames)).map((f) => f.type)).toEqual(["EMAIL"]);
    const ssnLikely = new Map<ClassificationType, Likelihood>([
      ["US_SOCIAL_SECURITY_NUMBER", "LIKELIHOOD_TYPE_LIKELY"],
    ]);
    // "123456789" next to "SSN" is VERY_LIKELY, so it clears LIKELY.
    expect((await detect(text, ssnLikely, noNames)).map((f) => f.type)).toEqual([
      "US_SOCIAL_SECURITY_NUMBER",
    ]);
  });
});
