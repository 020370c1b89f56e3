import { describe, expect, it } from "vitest";
import { reveal, transform } from "../transform/transform.ts";
import { detectStreetAddresses } from "./address.ts";
import { detect } from "./detect.ts";
import {
  CLASSIFICATION_TYPES,
  type ClassificationType,
  DEFAULT_MIN_LIKELIHOOD,
  type Likelihood,
  likelihoodRank,
} from "./types.ts";

/** The addresses reported at the default threshold, as text. */
const reported = (text: string) =>
  detectStreetAddresses(text)
    .filter((f) => likelihoodRank(f.likelihood) >= likelihoodRank(DEFAULT_MIN_LIKELIHOOD))
    .map((f) => text.slice(f.start, f.end));

/** Puts `address` in a sentence and expects exactly it to be reported, boundaries included. */
function expectFoundIn(lead: string, address: string, trail: string) {
  const text = `${lead}${address}${trail}`;
  const found = detectStreetAddresses(text).filter(
    (f) => likelihoodRank(f.likelihood) >= likelihoodRank(DEFAULT_MIN_LIKELIHOOD),
  );
  expect(found.map((f) => [f.start, f.end, text.slice(f.start, f.end)])).toEqual([
    [lead.length, lead.length + address.length, address],
  ]);
}

describe("street addresses", () => {
  it.each([
    "1600 Amphitheatre Parkway, Mountain View, CA 94043",
    "221B Baker Street",
    "350 Fifth Avenue, New York, NY 10118-0110",
    "Flat 3, 12 High St, Oxford",
    "Apt 4B, 100 Main St, Brooklyn, NY 11201",
    "1234 Elm Street, Suite 500, Springfield, IL 62701",
    "742 Evergreen Terrace #12, Springfield",
    "3rd Floor, 45 Queen Street West, Toronto, ON M5H 2M5",
    "10 Downing Street, London SW1A 2AA, United Kingdom",
    "1 Infinite Loop, Cupertino, CA 95014, USA",
    "99 rue de Rivoli, 75001 Paris, France",
    "12-14 Main Rd NW",
  ])("finds number-first addresses with units and ZIP tails: %s", (address) => {
    expectFoundIn("Please ship the parcel to ", address, ". Thanks, Anna");
  });

  it.each([
    "Hauptstraße 5, 10115 Berlin",
    "Berliner Str. 5a, D-10115 Berlin, Deutschland",
    "Keizersgracht 123, 1012 AB Amsterdam",
    "ul. Marszałkowska 10/12, 00-950 Warszawa, Polska",
    "Via Roma 1, 00184 Roma",
    "Calle Mayor 7, 2º, 28013 Madrid",
    "Calle de Alcalá, 45, 28014 Madrid",
    "rue de Rivoli 99, 75001 Paris",
    "Karl Johans gate 1, 0154 Oslo",
    "Rákóczi út 13, 1088 Budapest",
    "Avenida da Liberdade 110, 1269-046 Lisboa",
    "Sveavägen 44, 111 34 Stockholm",
    "Vesterbrogade 3\n1620 København V\nDenmark",
  ])("finds street-first continental addresses with postcodes before the city: %s", (address) => {
    expectFoundIn("Our office address is ", address, ". See you there");
  });

  it.each([
    "12 High Street, Oxford OX1 4AH",
    "221B Baker Street\nLondon\nNW1 6XE",
    "24 Sussex Drive, Ottawa, ON K1A 0B1",
    "1234 Rue Sainte-Catherine Ouest, Montréal, QC H3G 1P1",
    "5 Merrion Square, Dublin D02 X285",
  ])("finds UK, Canadian and Irish postcodes in a tail: %s", (address) => {
    expectFoundIn("Send the invoice to ", address, ".\n\nBest regards");
  });

  it.each([
    ["P.O. Box 1234, Springfield, IL 62701", "Mail the cheque to "],
    ["Postfach 10 20 30", "Anschrift: "],
    ["PSC 1234, Box 5678\nAPO AE 09204", "Forward my mail to "],
    ["USNS Comfort\nFPO AE 09599", "Ship it to "],
  ])("finds PO boxes and US military mail: %s", (address, lead) => {
    expectFoundIn(lead, address, ".");
  });

  it.each([
    ["My address is ", "Kesk 53, Tallinn"],
    ["What is your address? It is ", "Allika 46"],
    ["She lives at ", "Pivovarská 276"],
    ["i moved to ", "12 main street"],
    ["deliver it to ", "113 S Main, Apt 790"],
    ["Meet me at the corner of ", "5th Avenue and Main Street"],
  ])("finds streets without a type word only after an address lead-in: %s%s", (lead, address) => {
    expectFoundIn(lead, address, ".");
  });

  it.each([
    "We shipped 500 units to 3 warehouses last week.",
    "Room 12 at 10 am, then Room 4 at 11:30.",
    "He still plays version 2 Street Fighter on Windows 11 Pro.",
    "The invoice of $1,200 was due on March 3, 2024 and paid on 2024-03-05.",
    "Call +1 415 555 2671 or (030) 901820 42 before 5 pm.",
    "Our Q3 revenue grew 12 percent to 4.5 million across 27 Stores.",
    "Chapter 5 covers Section 3 and Page 17 of the manual.",
    "Order 12345 shipped to Gate 7 at Terminal 2 on Friday 13.",
    "The 2024 Annual Report lists 350 Employees in 12 Countries.",
    "Flight LH 400 departs at 10:45 from Platform 9.",
    "Please send 20 Boxes, 3 Pallets and 1 Crate.",
    "We drove 5 miles down the road to the 3 Main offices.",
    "Game #6 of the World Series starts at 7, then Game 7.",
    "Windows 10, iPhone 15 Pro and Office 365 are supported.",
  ])("finds nothing in ordinary business sentences with numbers: %s", (text) => {
    expect(reported(text)).toEqual([]);
  });

  it("keeps a city after a comma only where the sentence ends or a postcode follows", () => {
    expect(reported("We met at 5 Main St, Springfield.")).toEqual(["5 Main St, Springfield"]);
    expect(reported("We met at 5 Main St, Anna and I.")).toEqual(["5 Main St"]);
    expect(reported("We met at 5 Main St, Springfield and left.")).toEqual(["5 Main St"]);
  });

  it("does not let a blank line or a name line join an address", () => {
    const letter = "Anna Berg\nHauptstraße 5\n10115 Berlin\n\nDear Mr Smith,";
    expect(reported(letter)).toEqual(["Hauptstraße 5\n10115 Berlin"]);
  });

  it("rates an address higher with a tail or an address word nearby", () => {
    const likelihoods = (text: string) => detectStreetAddresses(text).map((f) => f.likelihood);
    expect(likelihoods("It is 12 Baker Street.")).toEqual(["LIKELIHOOD_TYPE_LIKELY"]);
    expect(likelihoods("My address is 12 Baker Street.")).toEqual(["LIKELIHOOD_TYPE_VERY_LIKELY"]);
    expect(likelihoods("It is 12 Baker Street, London NW1 6XE.")).toEqual(["LIKELIHOOD_TYPE_VERY_LIKELY"]);
    // "Hill" ends as many place names as street names: below the default threshold on its own.
    expect(likelihoods("It is 12 Primrose Hill.")).toEqual(["LIKELIHOOD_TYPE_UNLIKELY"]);
  });

  it("reports two addresses in one sentence separately", () => {
    expect(
      reported("I once lived at 10 Elm Street, Boston, MA 02108 and now at Via Roma 1, 00184 Roma."),
    ).toEqual(["10 Elm Street, Boston, MA 02108", "Via Roma 1, 00184 Roma"]);
  });

  it.each([
    ["Croatian, unit after the number", "Štitarska 96 Stan 52, 67209 Ivanić-Grad"],
    [
      "Romanian, building and flat instead of a number, six-digit code",
      "Aleea Tropicelor, Bloc 15, Ap. 920, Abrud 819338",
    ],
    ["Romanian boulevard", "Bulevardul Unirii 12, Sc. 2, Et. 3, București 030167"],
    ["Latvian, type word after the name, prefixed code", "Tīraines iela 45 dz. 289, Aizpute, LV-3456"],
    ["Ukrainian, type word first in lower case", "проспект Перемоги, 88, Луцьк, 43000"],
    ["Ukrainian flat", "Вузька майдан, 37 кв. 12, Кременчук, 39600"],
    ["Greek, abbreviated avenue and floor", "Λεωφ. Αλεξάνδρας 14, 4ος, 114 73 Αθήνα"],
    ["Brazilian, dashes and a CEP", "Alameda Santos, 819, apto 246 - Cerqueira César - SP, 01419-002"],
    ["Indian, flat before the number, six-digit PIN", "Flat 3, 78 Linking Road, Mumbai 400050"],
  ])("finds addresses of development countries: %s", (_, address) => {
    expectFoundIn("Please deliver the parcel to ", address, ". Thanks");
  });

  it.each([
    ["two numbers before the street", "address: ", "9554 62 Rue Gafsa, Tunis"],
    [
      "a house number between the lead-in and a street written number-last",
      "His address: ",
      "5366 Pivovarská 276",
    ],
    ["the same in lower case", "she lives at ", "255 hersnapvej 18"],
    ["a unit, a city after it with a space", "Ship to ", "Spinatsch 94 Apt. 615 Moosleerau Switzerland"],
  ])("takes in %s", (_, lead, address) => {
    expectFoundIn(lead, address, ".");
  });

  it("does not take a weekday into the city", () => {
    expect(reported("The workshop takes place at Hauptstraße 5, 10115 Berlin on Tuesday.")).toEqual([
      "Hauptstraße 5, 10115 Berlin",
    ]);
  });

  const minimums = new Map<ClassificationType, Likelihood>(
    CLASSIFICATION_TYPES.filter((t) => t !== "PERSON_NAME").map((t) => [t, DEFAULT_MIN_LIKELIHOOD]),
  );
  const noNames = { findPersonNames: async () => [] };
  const letter =
    "Please send the contract to Aleea Tropicelor, Bloc 15, Ap. 920, Abrud 819338 and a copy to\n" +
    "221B Baker Street\nLondon\nNW1 6XE\n\nor to P.O. Box 1234, Springfield, IL 62701 (ana@example.com), " +
    "again Aleea Tropicelor, Bloc 15, Ap. 920, Abrud 819338.";
  it.each([
    ["TRANSFORMATION_TYPE_NUMBERED", undefined],
    ["TRANSFORMATION_TYPE_SYNTHETIC", undefined],
    ["TRANSFORMATION_TYPE_ENCRYPTED", Buffer.alloc(32, 7).toString("base64")],
  ] as const)("round-trips addresses exactly under %s", async (type, key) => {
    const findings = await detect(letter, minimums, noNames);
    expect(
      findings.filter((f) => f.type === "STREET_ADDRESS").map((f) => letter.slice(f.start, f.end)),
    ).toEqual([
      "Aleea Tropicelor, Bloc 15, Ap. 920, Abrud 819338",
      "221B Baker Street\nLondon\nNW1 6XE",
      "P.O. Box 1234, Springfield, IL 62701",
      "Aleea Tropicelor, Bloc 15, Ap. 920, Abrud 819338",
    ]);
    const result = transform(letter, findings, type, key);
    for (const hidden of ["Tropicelor", "Baker", "NW1 6XE", "1234", "ana@example.com"]) {
      expect(result.redactedData).not.toContain(hidden);
    }
    // The same address gets the same replacement both times.
    const replacements = result.replacements
      .filter((r) => r.finding.type === "STREET_ADDRESS")
      .map((r) => r.replacement);
    expect(replacements[0]).toBe(replacements[3]);
    expect(new Set(replacements).size).toBe(3);
    expect(reveal(result.redactedData, type, key ? undefined : result.redactionMaps, key)).toBe(letter);
  });

  it.each([
    ["1 A B C D E F ", 50_000],
    ["12 Main Street, ", 50_000],
    ["Aa Bb Cc 1, ", 50_000],
    ["address: 1 ", 50_000],
    ["Hauptstraße Hauptstraße ", 50_000],
  ])("does work linear in the length of an adversarial input: %j", (unit, length) => {
    const runs = (n: number) => {
      const counter = { runs: 0 };
      detectStreetAddresses(unit.repeat(Math.ceil(n / unit.length)), counter);
      return counter.runs;
    };
    const short = runs(length);
    const long = runs(2 * length);
    expect(short).toBeLessThan(10 * length);
    expect(long).toBeLessThan(2.2 * short + 100);
  });
});
