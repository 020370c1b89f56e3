import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { groupWords } from "../classify/groups.ts";
import { readModelSpec } from "../ml/model-spec.ts";
import { openSession } from "../ml/session.ts";
import { readVocabulary, vocabularyOf } from "../ml/vocabulary.ts";
import { DEFAULT_MODEL_DIR } from "../models.ts";
import { compromiseLexicon, nameGazetteer } from "./gazetteer.ts";
import { OnnxPersonNameFinder } from "./person-model.ts";

/**
 * Japanese, Indian, Persian, Nigerian and Ukrainian first names that are in the vocabulary but in
 * no name list of the gazetteer: beyond shape and affixes, what the shipped model knows of them is
 * their pretrained word row.
 */
const UNLISTED = [
  "Haruki",
  "Takeshi",
  "Hiroshi",
  "Tatsuya",
  "Yuki",
  "Satoshi",
  "Kazuo",
  "Shinji",
  "Naoki",
  "Ichiro",
  "Ryota",
  "Daisuke",
  "Deepak",
  "Sunil",
  "Rajesh",
  "Vikram",
  "Nikhil",
  "Farid",
  "Arash",
  "Omid",
  "Chidi",
  "Obinna",
  "Tunde",
  "Oksana",
];
/** Names in no list and not in the vocabulary either. */
const NO_VECTOR = ["Babajide", "Oluwadamilare"];
/** Short messages whose context says little. */
const FRAMES = [
  "Forwarding this to NAME.",
  "NAME said the shipment is late.",
  "Thanks, NAME",
  "NAME will call you back.",
  "Meeting with NAME at noon",
  "Signed: NAME",
  "cc NAME",
  "NAME agreed.",
  "Talked to NAME today.",
  "Waiting for NAME to reply.",
  "Ask NAME.",
  "NAME is out sick.",
];

/**
 * Sentences about a group of people beside a named person, written for this test (no training
 * template or frame speaks of groups); GROUP is a group noun, NAME a person.
 */
const GROUP_FRAMES = [
  "My neighbour NAME says GROUP cannot be trusted with money.",
  "NAME wrote that GROUP are ruining the neighbourhood.",
  "According to NAME, GROUP should not be hired.",
  "GROUP never tip, NAME complained.",
  "I heard NAME tell the class that GROUP are all the same.",
  "Ask NAME why GROUP always get the best seats.",
];
const GROUP_FRAME_NAMES = [
  "Haruki Tanaka",
  "Maria Lopez",
  "Ben Carter",
  "Priya Raman",
  "Olga Petrova",
  "Kwame Mensah",
];

/**
 * Plural ethnic, national and religious group nouns of the classifiers' list (a plural whose
 * singular is listed too: "latinos", "sikhs", "gypsies") that compromise's demonyms lack, so no
 * training sentence holds them.
 */
function pluralGroupNouns(): string[] {
  const demonyms = new Set(compromiseLexicon().flatMap(([w, tags]) => (tags.includes("Demonym") ? [w] : [])));
  const words = new Set(["ethnic", "national", "religion"].flatMap(groupWords));
  const singular = (w: string) =>
    [w.slice(0, -1), w.slice(0, -2), `${w.slice(0, -3)}y`].some((s) => s !== w && words.has(s));
  return [...words].filter((w) => w.endsWith("s") && singular(w) && !demonyms.has(w));
}

describe("the shipped name model", async () => {
  const spec = await readModelSpec(join(DEFAULT_MODEL_DIR, "person-ner.json"));
  const { session } = await openSession(join(DEFAULT_MODEL_DIR, "person-ner.onnx"), "cpu");
  const vocabulary = await readVocabulary(join(DEFAULT_MODEL_DIR, spec.words?.file ?? ""), spec.buckets);
  const withVectors = new OnnxPersonNameFinder(session, spec, vocabulary);
  // The same model with every word row left out (an empty vocabulary): its hashed features alone.
  const without = new OnnxPersonNameFinder(session, spec, vocabularyOf([], spec.buckets));
  const gazetteer = nameGazetteer();
  const listed = (w: string) => gazetteer.first.has(w) || gazetteer.last.has(w);

  /** The cases, name in frame, in which `finder` finds exactly the name. */
  async function found(finder: OnnxPersonNameFinder, names: readonly string[]): Promise<string[]> {
    const hits: string[] = [];
    for (const name of names)
      for (const frame of FRAMES) {
        const text = frame.replace("NAME", name);
        const spans = await finder.findPersonNames(text);
        if (spans.some((s) => text.slice(s.start, s.end) === name)) hits.push(text);
      }
    return hits;
  }

  it("reads the shared vocabulary", () => {
    expect(spec.words).toEqual({ file: "words.txt", count: vocabulary.index.size });
  });

  it("finds unlisted first names by their word vectors, which it misses more often without them", async () => {
    for (const name of UNLISTED) {
      expect(listed(name.toLowerCase())).toBe(false);
      expect(vocabulary.index.has(name.toLowerCase())).toBe(true);
    }
    const cases = UNLISTED.length * FRAMES.length;
    const a = (await found(withVectors, UNLISTED)).length;
    const b = (await found(without, UNLISTED)).length;
    // Shipped model: 250 of 288 with the word rows, 210 without.
    expect(a / cases).toBeGreaterThanOrEqual(0.75);
    expect((a - b) / cases).toBeGreaterThanOrEqual(0.08);
  });

  it("leaves group nouns ('Latinos', 'Sikhs') unredacted and finds the names beside them", async () => {
    const groups = pluralGroupNouns().map((w) => w.charAt(0).toUpperCase() + w.slice(1));
    expect(groups).toEqual(expect.arrayContaining(["Latinos", "Hispanics", "Jews", "Muslims", "Sikhs"]));
    expect(groups.length).toBeGreaterThan(20);
    const redacted: string[] = [];
    const missed: string[] = [];
    for (const [g, group] of groups.entries())
      for (const [k, frame] of GROUP_FRAMES.entries()) {
        const name = GROUP_FRAME_NAMES[(g + k) % GROUP_FRAME_NAMES.length] as string;
        const text = frame.replace("GROUP", group).replace("NAME", name);
        const found = (await withVectors.findPersonNames(text)).map((s) => text.slice(s.start, s.end));
        if (found.some((f) => f.includes(group))) redacted.push(text);
        if (!found.includes(name)) missed.push(text);
      }
    expect(redacted).toEqual([]);
    // The names are the model's to find, and it misses a few in some frames (shipped model: 3 of
    // 312, "According to Priya Raman, ..."); the group noun beside a name is never redacted.
    expect(missed.length / (groups.length * GROUP_FRAMES.length)).toBeLessThanOrEqual(0.02);
    const text = "My neighbour Haruki Tanaka says Latinos cannot be trusted with money.";
    const found = (await withVectors.findPersonNames(text)).map((s) => text.slice(s.start, s.end));
    expect(found).toEqual(["Haruki Tanaka"]);
  });

  it("scores a name with no word row the same either way", async () => {
    for (const name of NO_VECTOR) {
      expect(listed(name.toLowerCase())).toBe(false);
      expect(vocabulary.index.has(name.toLowerCase())).toBe(false);
    }
    expect(await found(withVectors, NO_VECTOR)).toEqual(await found(without, NO_VECTOR));
  });
});
