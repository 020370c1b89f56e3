import { describe, expect, it } from "vitest";
import { ibanValid, luhnValid, ssnStructureValid } from "./checksums.ts";

describe("checksums", () => {
  it("accepts Luhn-valid card numbers and rejects a one-digit change", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(luhnValid("")).toBe(false);
  });

  it("accepts IBANs with a correct mod-97 check, in any case and with spaces", () => {
    expect(ibanValid("GB82 WEST 1234 5698 7654 32")).toBe(true);
    expect(ibanValid("gb82west12345698765432")).toBe(true);
    expect(ibanValid("GB83WEST12345698765432")).toBe(false);
    expect(ibanValid("DE89370400440532013000")).toBe(true);
  });

  it("rejects SSN areas and groups the SSA never issues", () => {
    expect(ssnStructureValid("123", "45", "6789")).toBe(true);
    expect(ssnStructureValid("000", "45", "6789")).toBe(false);
    expect(ssnStructureValid("666", "45", "6789")).toBe(false);
    expect(ssnStructureValid("912", "45", "6789")).toBe(false);
    expect(ssnStructureValid("123", "00", "6789")).toBe(false);
  });
});
