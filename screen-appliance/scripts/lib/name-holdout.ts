/**
 * Which people the name model may train on, so that both evaluations measure names it never saw:
 *
 * - The held-out Presidio records (templates of `templateSplit` "test") keep their own people.
 *   Every word of their gold PERSON spans is barred from training and development text: a person
 *   with such a word is never drawn (`NameHoldout.allows`).
 * - Of the remaining name words, a hash puts one in four in the development half: the development
 *   sentences that tune the decision thresholds use only those, training only the others, so the
 *   thresholds are tuned on names the model has not memorised, as at evaluation.
 *
 * The gazetteer's first- and last-name lists (features.ts) are a lexicon, not training text: they
 * may hold held-out words, and `describe()` says how many.
 */
import { nameGazetteer } from "../../src/ner/gazetteer.ts";
import { readPresidioRecords, templateSplit } from "./datasets.ts";

export type NameHalf = "train" | "dev";

const WORD = /[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*/gu;

/** Lowercased name words of a value, hyphenated names in parts ("Jean-Luc O'Neil" -> "jean", "luc", "o'neil"). */
export function nameWords(value: string): string[] {
  return [...value.matchAll(WORD)].map((m) => m[0].toLowerCase());
}

/** FNV-1a of the lowercased word; one in four is "dev". */
export function nameHalf(word: string): NameHalf {
  let h = 0x811c9dc5;
  for (const ch of word.toLowerCase()) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193);
  return (h >>> 0) % 4 === 1 ? "dev" : "train";
}

export class NameHoldout {
  /** Words of the held-out records' PERSON spans, honorifics ("Dr.") left out. */
  readonly heldOut: ReadonlySet<string>;

  constructor() {
    const { honorifics } = nameGazetteer();
    const words = new Set<string>();
    for (const record of readPresidioRecords()) {
      if (templateSplit(record.templateId) !== "test") continue;
      for (const span of record.spans)
        if (span.type === "PERSON")
          for (const w of nameWords(record.text.slice(span.start, span.end)))
            if (!honorifics.has(w)) words.add(w);
    }
    this.heldOut = words;
  }

  /** Whether every word of `name` may appear in text of this half. */
  allows(name: string, half: NameHalf): boolean {
    const words = nameWords(name);
    return words.length > 0 && words.every((w) => !this.heldOut.has(w) && nameHalf(w) === half);
  }

  /** The provenance line printed with the figures. */
  describe(): string {
    const gazetteer = nameGazetteer();
    const listed = [...this.heldOut].filter((w) => gazetteer.first.has(w) || gazetteer.last.has(w)).length;
    return (
      `names held out: none of the ${this.heldOut.size} words of these records' names occurs in a name of the ` +
      `training or development text (people with such a word are never drawn; development names are a hash ` +
      `quarter of the rest, disjoint from training's); ${listed} of the ${this.heldOut.size} are in the ` +
      "gazetteer's first- or last-name lexicon (faker's locales), which the model reads as a feature"
    );
  }
}
