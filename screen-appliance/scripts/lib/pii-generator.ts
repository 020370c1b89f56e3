/**
 * Generates labeled training sentences for the name model by filling the Presidio templates'
 * `{{placeholders}}`: people from `fake_people_3000.csv` and from @faker-js/faker's locales,
 * everything else from faker. A generator draws only the first and last names of its half
 * (`NameHoldout`: never a word of a held-out record's name; development names disjoint from
 * training names); a CSV person's first and last name are drawn apart. Every filled person placeholder becomes a PERSON span; titles,
 * organisations, streets and cities stay unlabeled, because the model must learn to leave them.
 */
import { allLocales, base, en, Faker } from "@faker-js/faker";
import { readCsv } from "./datasets.ts";
import { type NameHalf, NameHoldout } from "./name-holdout.ts";
import { ordinaryLexicon, type WordClass } from "./ordinary-text.ts";

/**
 * Business frames for training only (the ordinary-text evaluation has its own); `{person}` is a
 * labeled name, the other slots draw from the training half of `ordinaryLexicon`.
 */
const ORDINARY_FRAMES = [
  "{weekday} is fine for the call with {company}.",
  "The {city} office closes early on {weekday}.",
  "{product} sales in {country} doubled in {month}.",
  "{noun} is the first item on the agenda.",
  "Our {title} will visit {city} in {month}.",
  "{person} will visit {city} in {month}.",
  "{person} moved the {product} review to {weekday}.",
  "{company} opened a branch in {city}, {country}.",
  "Meeting with {person} in {city} on {weekday}.",
  "{title} {person} approved the {noun} plan.",
  "{city} to {city}: deliveries resume {weekday}.",
  "{noun} update from {company}: the {product} launch slips to {month}.",
  "Thanks, {person}. See you in {city} on {weekday}.",
  "{month} report: {country} up, {city} flat.",
  "Send the {product} invoice to {company} by {weekday}.",
  "{person} from {company} asked about {product} pricing.",
  // Capitalised non-names where names often stand: subject, after "by", "with", "of", before "'s".
  "{product} is a {demonym} {noun} sold in {city}.",
  "{company} is the {noun} partner of the year.",
  "{product} was launched by {company} in {month}.",
  "According to {company}, {product} demand fell in {country}.",
  "We met {company} in {city} on {weekday}.",
  "{company}'s {title} will present the {noun} plan.",
  "The {demonym} unit of {company} reports to {person}.",
  "{person} of {company} praised the {product} rollout.",
  "{company}'s {person} will call you on {weekday}.",
  "{city} is a {demonym} city known for {noun}.",
  "Ask {person} whether {company} still sells the {product}.",
  "Contact {company} about the {product} order before {month}.",
  // Possessives: a name before "'s" is as much a name as anywhere else.
  "{person}'s {noun} report is due on {weekday}.",
  "We reviewed {person}'s {product} order in {city}.",
  "The {title} read {person}'s notes from {country}.",
];

export interface LabeledSentence {
  text: string;
  persons: { start: number; end: number }[];
}

interface Person {
  first: string;
  middleInitial: string;
  last: string;
  title: string;
  gender: string;
}

const REFERENCE_DATE = new Date("2026-01-01T00:00:00Z");
/** Suffixes a generated full name may end with. */
export const NAME_SUFFIXES = ["MD", "Jr.", "Sr.", "PhD", "DDS", "II", "III", "DVM"];
const PERSON_KEYS = new Set([
  "person",
  "name",
  "name_male",
  "name_female",
  "first_name",
  "first_name_male",
  "first_name_female",
  "first_name_nonbinary",
  "last_name",
  "last_name_male",
  "last_name_female",
]);

export class PiiSentenceGenerator {
  private readonly faker: Faker;
  private readonly localeFakers: Faker[];
  private readonly firsts: Person[];
  private readonly lasts: string[];
  private readonly csv: Record<string, string>[];
  private lexicon: Record<WordClass, string[]> | undefined;

  constructor(
    seed: number,
    private readonly half: NameHalf = "train",
    private readonly holdout = new NameHoldout(),
  ) {
    // faker's dates are relative to "now" unless told otherwise; a fixed reference date keeps the
    // generated text, and so the trained models, byte-for-byte reproducible.
    this.faker = new Faker({ locale: [en, base], seed });
    this.faker.setDefaultRefDate(REFERENCE_DATE);
    this.localeFakers = [
      "en",
      "de",
      "fr",
      "es",
      "it",
      "nl",
      "pl",
      "pt_BR",
      "sv",
      "cs_CZ",
      "fi",
      "da",
      "hu",
      "ro",
      "tr",
      "vi",
      "id_ID",
      "nb_NO",
      "hr",
      "sk",
      "lv",
      "en_IN",
      "en_AU",
      "zu_ZA",
      "yo_NG",
    ].flatMap((code) => {
      const locale = (allLocales as Record<string, (typeof allLocales)["en"]>)[code];
      if (!locale) return [];
      const f = new Faker({ locale: [locale, en], seed: seed + code.length });
      f.setDefaultRefDate(REFERENCE_DATE);
      return [f];
    });
    this.csv = readCsv("pii/fake_people_3000.csv");
    this.firsts = this.csv
      .map((row) => ({
        first: row.GivenName ?? "",
        middleInitial: row.MiddleInitial ?? "",
        last: "",
        title: row.Title ?? "",
        gender: row.Gender ?? "",
      }))
      .filter((p) => this.allowed(p.first));
    this.lasts = this.csv.map((row) => row.Surname ?? "").filter((last) => this.allowed(last));
  }

  private allowed(name: string): boolean {
    return this.holdout.allows(name, this.half);
  }

  /** A name of this generator's half from `draw`, or from the CSV's when 20 draws miss. */
  private drawAllowed(draw: () => string, fallback: () => string): string {
    for (let i = 0; i < 20; i++) {
      const name = draw();
      if (this.allowed(name)) return name;
    }
    return fallback();
  }

  private person(): Person {
    const h = this.faker.helpers;
    const csvLast = () => h.arrayElement(this.lasts);
    if (this.faker.number.float() < 0.6) return { ...h.arrayElement(this.firsts), last: csvLast() };
    const f = h.arrayElement(this.localeFakers);
    const sex = f.helpers.arrayElement(["female", "male"] as const);
    return {
      first: this.drawAllowed(
        () => f.person.firstName(sex),
        () => h.arrayElement(this.firsts).first,
      ),
      middleInitial: f.string.alpha({ length: 1, casing: "upper" }),
      last: this.drawAllowed(() => f.person.lastName(sex), csvLast),
      title: this.faker.person.prefix(sex),
      gender: sex,
    };
  }

  private caseVariant(name: string): string {
    const r = this.faker.number.float();
    if (r < 0.06) return name.toLowerCase();
    if (r < 0.08) return name.toUpperCase();
    return name;
  }

  private fullName(p: Person): string {
    const r = this.faker.number.float();
    if (r < 0.1) return `${p.first} ${p.middleInitial}. ${p.last}`;
    if (r < 0.14) return `${p.first} ${p.middleInitial} ${p.last}`;
    if (r < 0.2) return `${p.first} ${p.last} ${this.faker.helpers.arrayElement(NAME_SUFFIXES)}`;
    if (r < 0.25) return `${p.first} ${this.person().last}-${p.last}`;
    return `${p.first} ${p.last}`;
  }

  /** A value for one placeholder, and whether it is a person. */
  private fill(key: string, row: Record<string, string>, p: Person): { value: string; person: boolean } {
    const f = this.faker;
    if (PERSON_KEYS.has(key)) {
      const value = key.startsWith("first_name")
        ? p.first
        : key.startsWith("last_name")
          ? p.last
          : this.fullName(p);
      return { value: this.caseVariant(value), person: true };
    }
    const value = (() => {
      switch (key) {
        case "prefix":
        case "prefix_male":
        case "prefix_female":
          return p.title || f.person.prefix();
        case "organization":
          this.lexicon ??= ordinaryLexicon("train");
          return f.helpers.arrayElement([
            f.company.name(),
            row.Company ?? f.company.name(),
            f.helpers.arrayElement(this.lexicon.company),
          ]);
        case "city":
          return f.helpers.arrayElement([f.location.city(), row.City ?? f.location.city()]);
        case "country":
          return f.helpers.arrayElement([f.location.country(), row.CountryFull ?? f.location.country()]);
        case "street_name":
          return f.location.street();
        case "building_number":
          return f.location.buildingNumber();
        case "secondary_address":
          return f.location.secondaryAddress();
        case "address":
          return f.helpers.arrayElement([
            `${f.location.streetAddress(true)}\n${f.location.city()}, ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}`,
            `${row.StreetAddress}, ${row.City}, ${row.State} ${row.ZipCode}`,
            `${f.location.streetAddress()}, ${f.location.city()}`,
          ]);
        case "postcode":
        case "zipcode":
          return f.helpers.arrayElement([f.location.zipCode(), row.ZipCode ?? f.location.zipCode()]);
        case "state_abbr":
          return f.location.state({ abbreviated: true });
        case "nationality":
        case "nation_woman":
        case "nation_plural":
          return row.NameSet ?? "French";
        case "credit_card_number":
          return f.finance.creditCardNumber();
        case "phone_number":
          return f.helpers.arrayElement([f.phone.number(), row.TelephoneNumber ?? f.phone.number()]);
        case "email":
          return f.helpers.arrayElement([f.internet.email(), row.EmailAddress ?? f.internet.email()]);
        case "age":
          return String(f.number.int({ min: 1, max: 99 }));
        case "year":
          return String(f.number.int({ min: 1900, max: 2030 }));
        case "date_time":
          return f.date.anytime().toISOString().slice(0, 19).replace("T", " ");
        case "date_of_birth":
          return row.Birthday ?? "1/1/1980";
        case "day_of_week":
          return f.date.weekday();
        case "job":
          return f.helpers.arrayElement([f.person.jobTitle(), row.Occupation ?? f.person.jobTitle()]);
        case "url":
          return f.internet.url();
        case "iban":
          return f.finance.iban();
        case "ssn":
          return `${f.string.numeric(3)}-${f.string.numeric(2)}-${f.string.numeric(4)}`;
        case "ip_address":
          return f.internet.ipv4();
        case "us_driver_license":
          return f.string.alphanumeric({ length: 9, casing: "upper" });
        default:
          return f.lorem.word();
      }
    })();
    return { value, person: false };
  }

  /** A sentence with no person in it, for more unlabeled vocabulary than the templates hold. */
  negative(): LabeledSentence {
    const f = this.faker;
    const text = f.helpers.arrayElement([
      () => f.hacker.phrase(),
      () => `${f.company.catchPhrase()}.`,
      () => `${f.commerce.productDescription()}`,
      () =>
        `The ${f.word.adjective()} ${f.word.noun()} ${f.word.verb()}s ${f.word.adverb()} ${f.word.preposition()} the ${f.word.noun()}.`,
    ])();
    return { text: f.number.float() < 0.5 ? text : text.toLowerCase(), persons: [] };
  }

  /**
   * A business sentence of cities, weekdays, months, products, companies and common nouns
   * (training half of the lexicons), with a labeled person in some frames, so the place, time
   * and organisation features are learned next to real names.
   */
  ordinary(): LabeledSentence {
    this.lexicon ??= ordinaryLexicon("train");
    const f = this.faker;
    const frame = f.helpers.arrayElement(ORDINARY_FRAMES);
    let text = "";
    const persons: LabeledSentence["persons"] = [];
    let cursor = 0;
    for (const m of frame.matchAll(/\{(\w+)\}/g)) {
      text += frame.slice(cursor, m.index);
      const key = m[1] ?? "";
      let value: string;
      if (key === "person") {
        const p = this.person();
        value = this.caseVariant(
          f.number.float() < 0.5 ? this.fullName(p) : f.helpers.arrayElement([p.first, p.last]),
        );
        persons.push({ start: text.length, end: text.length + value.length });
      } else if (key === "company" && f.number.float() < 0.5) {
        value = f.company.name();
      } else {
        value = f.helpers.arrayElement(this.lexicon[key as WordClass]);
        if (m.index === 0 || key !== "noun") value = value.charAt(0).toUpperCase() + value.slice(1);
      }
      text += value;
      cursor = m.index + m[0].length;
    }
    text += frame.slice(cursor);
    return { text, persons };
  }

  /**
   * A person's name dropped into unrelated text, so the model learns what a name looks like
   * beyond the few contexts the templates provide.
   */
  nameInContext(): LabeledSentence {
    const f = this.faker;
    const words = f.helpers
      .arrayElement([
        () => f.hacker.phrase(),
        () => f.company.catchPhrase(),
        () => f.lorem.sentence(),
        () => `${f.word.verb()} ${f.word.preposition()} the ${f.word.noun()}`,
      ])()
      .replace(/[.!?]$/, "")
      .split(" ");
    const p = this.person();
    const r = f.number.float();
    const name = this.caseVariant(r < 0.5 ? this.fullName(p) : r < 0.75 ? p.first : p.last);
    const possessive = f.number.float() < 0.15 ? "'s" : "";
    const at = f.number.int({ min: 0, max: words.length });
    const before = words.slice(0, at).join(" ");
    const start = before ? before.length + 1 : 0;
    const text =
      [before, name + possessive, words.slice(at).join(" ")].filter(Boolean).join(" ") +
      f.helpers.arrayElement([".", "", "?", "!"]);
    return { text, persons: [{ start, end: start + name.length }] };
  }

  /** Fills one template; each placeholder draws a fresh person, as in the Presidio generator. */
  generate(template: string): LabeledSentence {
    const source = template.replace(/\\n/g, "\n");
    const row = this.faker.helpers.arrayElement(this.csv);
    let text = "";
    const persons: LabeledSentence["persons"] = [];
    let cursor = 0;
    // One person per sentence for a first-name/last-name pair, so "{{first_name}} {{last_name}}" agrees.
    const p = this.person();
    for (const m of source.matchAll(/\{\{(\w+)\}\}/g)) {
      text += source.slice(cursor, m.index);
      const { value, person } = this.fill(
        m[1] ?? "",
        row,
        this.faker.number.float() < 0.5 ? p : this.person(),
      );
      if (person) persons.push({ start: text.length, end: text.length + value.length });
      text += value;
      cursor = m.index + m[0].length;
    }
    text += source.slice(cursor);
    return { text, persons };
  }
}
