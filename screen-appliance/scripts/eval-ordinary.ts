/**
 * The ordinary-text half of `npm run eval:screen`: business sentences with no personal data
 * (`scripts/lib/ordinary-text.ts`) run through the same `detect` the service uses. Reports the
 * share of words kept (not inside any finding), per word class, and the most frequent false findings.
 */
import { detect, type PersonNameFinder } from "../src/detect/detect.ts";
import { CLASSIFICATION_TYPES, DEFAULT_MIN_LIKELIHOOD, type Likelihood } from "../src/detect/types.ts";
import {
  ORDINARY_TEXT_PROVENANCE,
  ordinaryTextSet,
  WORD_CLASSES,
  type WordClass,
} from "./lib/ordinary-text.ts";

export async function evaluateOrdinaryText(names: PersonNameFinder, count = 2000, seed?: number) {
  const minimums = new Map(CLASSIFICATION_TYPES.map((t) => [t, DEFAULT_MIN_LIKELIHOOD as Likelihood]));
  const perClass = new Map<WordClass | "frame", { words: number; kept: number; found: Map<string, number> }>(
    [...WORD_CLASSES, "frame" as const].map((c) => [c, { words: 0, kept: 0, found: new Map() }]),
  );
  const sentences = ordinaryTextSet(count, seed);
  for (const sentence of sentences) {
    const findings = await detect(sentence.text, minimums, names);
    for (const word of sentence.words) {
      const row = perClass.get(word.kind);
      if (!row) continue;
      row.words++;
      const hit = findings.find((f) => f.start < word.end && word.start < f.end);
      if (!hit) row.kept++;
      else {
        const key = `${sentence.text.slice(word.start, word.end)} (${hit.type})`;
        row.found.set(key, (row.found.get(key) ?? 0) + 1);
      }
    }
  }
  const words = [...perClass.values()].reduce((n, r) => n + r.words, 0);
  const kept = [...perClass.values()].reduce((n, r) => n + r.kept, 0);
  return { sentences: sentences.length, words, kept, perClass };
}

export function printOrdinaryText(result: Awaited<ReturnType<typeof evaluateOrdinaryText>>): void {
  console.log(
    `\nOrdinary text (no personal data): ${result.sentences} sentences, ${result.words} words; ${ORDINARY_TEXT_PROVENANCE}`,
  );
  console.log(`words kept: ${(result.kept / result.words).toFixed(3)} (${result.kept} of ${result.words})`);
  console.log("class      words   kept  | most frequent false findings");
  for (const [kind, row] of result.perClass) {
    if (row.words === 0) continue;
    const top = [...row.found]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([w, n]) => `${w} x${n}`)
      .join(", ");
    console.log(
      `${kind.padEnd(9)} ${String(row.words).padStart(6)}  ${(row.kept / row.words).toFixed(3)}  | ${top || "-"}`,
    );
  }
}
