import { describe, expect, it } from "vitest";
import { luhnValid } from "../detect/checksums.ts";
import type { Finding } from "../detect/types.ts";
import { ApiError } from "../http/problem.ts";
import { reveal, transform } from "./transform.ts";

const KEY = Buffer.alloc(32, 1).toString("base64");

/** Findings for every occurrence of each `[type, value]`. */
function findingsFor(text: string, entries: [Finding["type"], string][]): Finding[] {
  const out: Finding[] = [];
  for (const [type, value] of entries) {
    for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length)) {
      out.push({ type, likelihood: "LIKELIHOOD_TYPE_VERY_LIKELY", start: at, end: at + value.length });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

const text =
  "Ana María Núñez (ana@ejemplo.es, +1 415 555 2671) paid with 4111 1111 1111 1111; Ana María again 🙂.";
const findings = findingsFor(text, [
  ["PERSON_NAME", "Ana María Núñez"],
  ["PERSON_NAME", "Ana María"],
  ["EMAIL", "ana@ejemplo.es"],
  ["PHONE_NUMBER", "+1 415 555 2671"],
  ["CREDIT_CARD_NUMBER", "4111 1111 1111 1111"],
]).filter(
  (f, _, all) =>
    !all.some((o) => o !== f && o.start <= f.start && o.end >= f.end && o.end - o.start > f.end - f.start),
);

describe("TRANSFORMATION_TYPE_NUMBERED", () => {
  it("numbers each type from 1, gives a repeated value its earlier number and a name one string per word", () => {
    const result = transform(text, findings, "TRANSFORMATION_TYPE_NUMBERED");
    expect(result.redactedData).toBe(
      "[PERSON_NAME_1] [PERSON_NAME_2] [PERSON_NAME_3] ([EMAIL_1], [PHONE_NUMBER_1]) paid with [CREDIT_CARD_NUMBER_1]; [PERSON_NAME_1] [PERSON_NAME_2] again 🙂.",
    );
    expect(result.redactionMaps).toContainEqual({
      redactionString: "[PERSON_NAME_3]",
      originalData: "Núñez",
    });
  });

  it("skips a number whose redaction string already occurs in the text, so reveal stays exact", () => {
    const tricky = "[EMAIL_1] is literal, but bob@x.io is not";
    const result = transform(
      tricky,
      findingsFor(tricky, [["EMAIL", "bob@x.io"]]),
      "TRANSFORMATION_TYPE_NUMBERED",
    );
    expect(result.redactedData).toBe("[EMAIL_1] is literal, but [EMAIL_2] is not");
    expect(reveal(result.redactedData, "TRANSFORMATION_TYPE_NUMBERED", result.redactionMaps, undefined)).toBe(
      tricky,
    );
  });
});

describe("TRANSFORMATION_TYPE_SYNTHETIC", () => {
  it("replaces values with fakes of the same shape, the same fake for the same value", () => {
    const result = transform(text, findings, "TRANSFORMATION_TYPE_SYNTHETIC");
    const card = result.replacements.find((r) => r.finding.type === "CREDIT_CARD_NUMBER")?.replacement ?? "";
    expect(card).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    expect(card).not.toBe("4111 1111 1111 1111");
    expect(luhnValid(card.replace(/ /g, ""))).toBe(true);
    const phone = result.replacements.find((r) => r.finding.type === "PHONE_NUMBER")?.replacement ?? "";
    expect(phone).toMatch(/^\+1 \d{3} \d{3} \d{4}$/);
    const email = result.replacements.find((r) => r.finding.type === "EMAIL")?.replacement ?? "";
    expect(email).toMatch(/^[^@\s]+@[^@\s]+\.[a-z]+$/);
    const names = result.replacements
      .filter((r) => r.finding.type === "PERSON_NAME")
      .map((r) => r.replacement);
    expect(names[0]?.split(" ")).toHaveLength(3);
    // "Ana María" appears twice and gets the same first two fake words both times.
    expect(names[0]?.startsWith(names[1] ?? "?")).toBe(true);
    expect(result.redactedData).not.toContain("Núñez");
  });
});

describe("TRANSFORMATION_TYPE_ENCRYPTED", () => {
  it("is deterministic for the same value and key, and differs across keys", () => {
    const a = transform(text, findings, "TRANSFORMATION_TYPE_ENCRYPTED", KEY);
    const b = transform(text, findings, "TRANSFORMATION_TYPE_ENCRYPTED", KEY);
    const c = transform(
      text,
      findings,
      "TRANSFORMATION_TYPE_ENCRYPTED",
      Buffer.alloc(32, 2).toString("base64"),
    );
    expect(a.redactedData).toBe(b.redactedData);
    expect(a.redactedData).not.toBe(c.redactedData);
    expect(a.redactedData).toMatch(/\[ENC:EMAIL:[A-Za-z0-9_-]+\]/);
  });

  it("refuses to reveal with a wrong key instead of returning garbage", () => {
    const result = transform(text, findings, "TRANSFORMATION_TYPE_ENCRYPTED", KEY);
    const wrong = Buffer.alloc(32, 3).toString("base64");
    expect(() => reveal(result.redactedData, "TRANSFORMATION_TYPE_ENCRYPTED", undefined, wrong)).toThrow(
      ApiError,
    );
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => transform(text, findings, "TRANSFORMATION_TYPE_ENCRYPTED", "short")).toThrow(
      /32 random bytes/,
    );
  });
});

describe("reveal", () => {
  for (const type of [
    "TRANSFORMATION_TYPE_NUMBERED",
    "TRANSFORMATION_TYPE_SYNTHETIC",
    "TRANSFORMATION_TYPE_ENCRYPTED",
  ] as const) {
    it(`restores the exact original after ${type}, with maps and (encrypted) with the key alone`, () => {
      for (let i = 0; i < 20; i++) {
        const result = transform(text, findings, type, KEY);
        expect(reveal(result.redactedData, type, result.redactionMaps, undefined)).toBe(text);
        if (type === "TRANSFORMATION_TYPE_ENCRYPTED") {
          expect(reveal(result.redactedData, type, undefined, KEY)).toBe(text);
        }
      }
    });
  }
});
