/**
 * Address scoring for `npm run eval:screen`.
 *
 * 1. `postalAddressSpans`: the appliance's STREET_ADDRESS is the whole postal address (street,
 *    house number, unit, postcode, city, state and country: the unit a person is found by, and the
 *    unit a user expects to be redacted). Presidio's records annotate an address filled from one
 *    `{{address}}` placeholder as one STREET_ADDRESS span, but one built from parts
 *    (`{{building_number}} {{street_name}}\n{{secondary_address}}\n{{city}}\n{{country}} {{postcode}}`)
 *    as three or four STREET_ADDRESS spans plus GPE and ZIP_CODE spans. The evaluation re-annotates
 *    those the same way as the first kind: STREET_ADDRESS, GPE and ZIP_CODE spans joined only by
 *    separators (spaces, commas, line breaks, quoting marks) become one span when at least one of
 *    them is a STREET_ADDRESS. A city named on its own ("I am in {{city}}") stays a GPE.
 * 2. `internationalAddressRecords`: addresses in the postal formats of countries the detector's rules
 *    were first written without, built from @faker-js/faker's locale data (street names and
 *    patterns, cities, postcodes) laid out as each country writes an address, in sentence frames
 *    written for this set; the gold span is the whole address. Two splits: "development" countries
 *    (Croatia, Romania, Latvia, Greece, Ukraine, Brazil, India), whose misses were read and fixed in
 *    the rules (unit words such as Bloc, Stan, dz., кв.; Latvian, Cyrillic and Greek street words;
 *    " - " separators; six-digit and prefixed postcodes), and "heldOut" countries (Turkey, Serbia,
 *    Czechia, Slovakia, Australia, South Africa, Indonesia, North Macedonia, Nigeria), only ever
 *    measured: no rule was written from their text.
 */
import { allLocales, en, Faker } from "@faker-js/faker";
import { detect, type PersonNameFinder } from "../../src/detect/detect.ts";
import {
  CLASSIFICATION_TYPES,
  type ClassificationType,
  DEFAULT_MIN_LIKELIHOOD,
  type Likelihood,
} from "../../src/detect/types.ts";
import { add, type Counts, matchSpans, scores } from "./spans.ts";

interface TypedSpan {
  type: string;
  start: number;
  end: number;
}

const ADDRESS_PARTS = new Set(["STREET_ADDRESS", "GPE", "ZIP_CODE"]);
// What may stand between two parts of one postal address: spaces, commas, line breaks and the
// quoting marks of a forwarded mail ("> ", "??? ").
const SEPARATOR_ONLY = /^(?:[\s,>]|\?\?\?)*$/u;

/** The STREET_ADDRESS gold spans of a record, one per postal address (see the file comment). */
export function postalAddressSpans(
  text: string,
  spans: readonly TypedSpan[],
): { start: number; end: number }[] {
  const parts = spans
    .filter((s) => ADDRESS_PARTS.has(s.type))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const groups: { start: number; end: number; street: boolean }[] = [];
  for (const part of parts) {
    const last = groups.at(-1);
    if (last && (part.start <= last.end || SEPARATOR_ONLY.test(text.slice(last.end, part.start)))) {
      last.end = Math.max(last.end, part.end);
      last.street ||= part.type === "STREET_ADDRESS";
    } else groups.push({ start: part.start, end: part.end, street: part.type === "STREET_ADDRESS" });
  }
  return groups.filter((g) => g.street).map(({ start, end }) => ({ start, end }));
}

/** One held-out address sentence: the whole address is the gold span. */
export type AddressSplit = "development" | "heldOut";

export interface AddressRecord {
  country: string;
  split: AddressSplit;
  text: string;
  gold: { start: number; end: number };
}

type Layout = (f: Faker, unit: boolean) => string;
const code = (f: Faker) => f.location.zipCode();
const street = (f: Faker, unit: boolean) => f.location.streetAddress(unit);

/**
 * The countries held out from the rules, each with faker's locale (its street names, street
 * patterns, cities and postcodes) and the country's postal layout (UPU address formats).
 */
const COUNTRIES: { country: string; split: AddressSplit; locale: string; layout: Layout }[] = [
  {
    country: "Turkey",
    split: "heldOut",
    locale: "tr",
    layout: (f, u) => `${street(f, u)}\n${code(f)} ${f.location.city()}\nTürkiye`,
  },
  {
    country: "Croatia",
    split: "development",
    locale: "hr",
    layout: (f, u) => `${street(f, u)}, ${code(f)} ${f.location.city()}`,
  },
  {
    country: "Serbia",
    split: "heldOut",
    locale: "sr_RS_latin",
    layout: (f, u) => `${street(f, u)}\n${code(f)} ${f.location.city()}`,
  },
  {
    country: "Czechia",
    split: "heldOut",
    locale: "cs_CZ",
    layout: (f, u) => `${street(f, u)}, ${code(f)} ${f.location.city()}`,
  },
  {
    country: "Slovakia",
    split: "heldOut",
    locale: "sk",
    layout: (f, u) => `${street(f, u)}\n${code(f)} ${f.location.city()}\nSlovakia`,
  },
  {
    country: "Romania",
    split: "development",
    locale: "ro",
    layout: (f, u) => `${street(f, u)}, ${f.location.city()} ${code(f)}`,
  },
  {
    country: "Latvia",
    split: "development",
    locale: "lv",
    layout: (f, u) => `${street(f, u)}, ${f.location.city()}, ${code(f)}`,
  },
  {
    country: "Greece",
    split: "development",
    locale: "el",
    layout: (f, u) => `${street(f, u)}, ${code(f)} ${f.location.city()}`,
  },
  {
    country: "Ukraine",
    split: "development",
    locale: "uk",
    layout: (f, u) => `${street(f, u)}, ${f.location.city()}, ${code(f)}`,
  },
  {
    country: "Brazil",
    split: "development",
    locale: "pt_BR",
    layout: (f, u) =>
      `${f.location.street()}, ${f.location.buildingNumber()}${u ? `, apto ${f.number.int({ min: 11, max: 1204 })}` : ""} - ${f.location.city()} - ${f.location.state({ abbreviated: true })}, ${code(f)}`,
  },
  {
    country: "Australia",
    split: "heldOut",
    locale: "en_AU",
    layout: (f, u) =>
      `${u ? `Unit ${f.number.int({ min: 1, max: 40 })}, ` : ""}${f.location.buildingNumber()} ${f.location.street()}\n${f.location.city().toUpperCase()} ${f.location.state({ abbreviated: true })} ${code(f)}`,
  },
  {
    country: "India",
    split: "development",
    locale: "en_IN",
    layout: (f, u) =>
      `${u ? `Flat ${f.number.int({ min: 1, max: 40 })}, ` : ""}${f.location.buildingNumber()} ${f.location.street()}, ${f.location.city()} ${code(f).replace(/\s/g, "")}`,
  },
  {
    country: "South Africa",
    split: "heldOut",
    locale: "en_ZA",
    layout: (f, u) => `${street(f, u)}\n${f.location.city()}\n${f.string.numeric(4)}\nSouth Africa`,
  },
  {
    country: "North Macedonia",
    split: "heldOut",
    locale: "mk",
    layout: (f, u) => `${street(f, u)}\n${code(f)} ${f.location.city()}\nСеверна Македонија`,
  },
  {
    country: "Nigeria",
    split: "heldOut",
    locale: "en_NG",
    layout: (f, u) => `${street(f, u)}, ${f.location.city()} ${f.string.numeric(6)}, ${f.location.state()}`,
  },
  {
    country: "Indonesia",
    split: "heldOut",
    locale: "id_ID",
    layout: (f, u) => `${street(f, u)}, ${f.location.city()} ${code(f)}`,
  },
];

// Sentence frames written for this set; `{a}` is the address.
const FRAMES = [
  "Please deliver the parcel to {a}.",
  "Our new office: {a}",
  "Invoice recipient\n{a}\n\nThank you for your order.",
  "The workshop takes place at {a} on Tuesday.",
  "Return address - {a}",
  "{a}",
  "She said she can be reached at {a} during the week.",
  "Change of address, effective May: {a}. Please update your records.",
];

/** `perCountry` sentences per held-out country, reproducible for a seed. */
export function internationalAddressRecords(perCountry = 24, seed = 2024): AddressRecord[] {
  const records: AddressRecord[] = [];
  for (const { country, split, locale, layout } of COUNTRIES) {
    const data = (allLocales as Record<string, (typeof allLocales)["en"]>)[locale];
    if (!data) throw new Error(`@faker-js/faker has no locale ${locale}`);
    const f = new Faker({ locale: [data, en], seed });
    f.setDefaultRefDate(new Date("2026-01-01T00:00:00Z"));
    for (let i = 0; i < perCountry; i++) {
      const address = layout(f, i % 3 === 1);
      const frame = FRAMES[i % FRAMES.length] ?? "{a}";
      const start = frame.indexOf("{a}");
      records.push({
        country,
        split,
        text: frame.replace("{a}", address),
        gold: { start, end: start + address.length },
      });
    }
  }
  return records;
}

/** STREET_ADDRESS on the international set through the service's `detect`, per split and country. */
export async function evaluateInternationalAddresses(names: PersonNameFinder) {
  const minimums = new Map<ClassificationType, Likelihood>(
    CLASSIFICATION_TYPES.map((t) => [t, DEFAULT_MIN_LIKELIHOOD]),
  );
  const rows = new Map<string, { split: AddressSplit; country: string; exact: Counts; overlap: Counts }>();
  for (const record of internationalAddressRecords()) {
    const predicted = (await detect(record.text, minimums, names)).filter((f) => f.type === "STREET_ADDRESS");
    const row = rows.get(record.country) ?? {
      split: record.split,
      country: record.country,
      exact: { tp: 0, fp: 0, fn: 0 },
      overlap: { tp: 0, fp: 0, fn: 0 },
    };
    row.exact = add(row.exact, matchSpans(record.text, [record.gold], predicted, true));
    row.overlap = add(row.overlap, matchSpans(record.text, [record.gold], predicted, false));
    rows.set(record.country, row);
  }
  return [...rows.values()];
}

export function printInternationalAddresses(
  rows: Awaited<ReturnType<typeof evaluateInternationalAddresses>>,
) {
  const fmt = (n: number) => n.toFixed(3).padStart(6);
  for (const split of ["development", "heldOut"] as const) {
    const of = rows.filter((r) => r.split === split);
    const total = (key: "exact" | "overlap") =>
      of.reduce((sum, r) => add(sum, r[key]), { tp: 0, fp: 0, fn: 0 });
    const e = scores(total("exact"));
    const o = scores(total("overlap"));
    console.log(
      `STREET_ADDRESS, ${split === "heldOut" ? "held-out countries (never developed against)" : "development countries"}: ` +
        `${of.reduce((n, r) => n + r.overlap.tp + r.overlap.fn, 0)} addresses | exact P ${fmt(e.precision)} R ${fmt(e.recall)} F2 ${fmt(e.f2)} | overlap P ${fmt(o.precision)} R ${fmt(o.recall)} F2 ${fmt(o.f2)}`,
    );
    console.log(
      `  overlap recall: ${of.map((r) => `${r.country} ${scores(r.overlap).recall.toFixed(2)}`).join(", ")}`,
    );
  }
}
