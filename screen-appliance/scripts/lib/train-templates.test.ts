import { describe, expect, it } from "vitest";
import { BIAS_TYPES, TOXICITY_TYPES } from "../../src/detect/types.ts";
import { biasRows, toxicityRows } from "./classifier-data.ts";
import { contrastPairs } from "./contrast.ts";
import { templatedRows } from "./eval-sets.ts";
import { HARM_LEXICON } from "./harm-lexicon.ts";
import { TRAIN_LEXICON, trainingPredicates, trainingTemplates } from "./train-templates.ts";

const TYPES = [...BIAS_TYPES, ...TOXICITY_TYPES];
const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** Every sentence the evaluation scores from templates: labelled rows and both sides of contrast pairs. */
const evalSentences = new Set(
  TYPES.flatMap((type) => [
    ...templatedRows(type).map((r) => r.text),
    ...contrastPairs(type).flatMap((p) => [p.harmful, p.benign]),
  ]).map(norm),
);

/** An evaluation predicate as a pattern over text, its target slot matching any words. */
const evalPredicatePatterns = TYPES.flatMap((type) =>
  [...HARM_LEXICON[type].harmful, ...HARM_LEXICON[type].benign].map(
    (p) =>
      new RegExp(
        `\\b${p
          .split("{t}")
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".+?")}\\b`,
        "i",
      ),
  ),
);

const anyEvalPredicate = new RegExp(evalPredicatePatterns.map((p) => `(?:${p.source})`).join("|"), "i");

describe("training templates are disjoint from the evaluation's", () => {
  it("share no frame with the labelled or the contrast frames", () => {
    for (const type of TYPES) {
      const evalFrames = new Set([...HARM_LEXICON[type].frames, ...HARM_LEXICON[type].contrastFrames]);
      for (const other of TYPES)
        for (const frame of TRAIN_LEXICON[other].frames) expect(evalFrames.has(frame), frame).toBe(false);
    }
  });

  it("share no predicate, and no training sentence holds an evaluation predicate", () => {
    const evalPredicates = new Set(
      TYPES.flatMap((t) => [...HARM_LEXICON[t].harmful, ...HARM_LEXICON[t].benign]).map(norm),
    );
    for (const type of TYPES) {
      const { harmful, benign } = trainingPredicates(type);
      for (const p of [...harmful, ...benign]) expect(evalPredicates.has(norm(p)), p).toBe(false);
      for (const { text } of trainingTemplates(type)) {
        // One alternation finds a hit fast; the failure then names the pattern.
        if (!anyEvalPredicate.test(text)) continue;
        const pattern = evalPredicatePatterns.find((p) => p.test(text));
        expect(pattern, text).toBeUndefined();
      }
    }
  });

  it("train and calibrate on no sentence the evaluation scores", () => {
    for (const rows of [biasRows(), toxicityRows()]) {
      const fitted = rows.filter((r) => r.split !== "test");
      expect(fitted.length).toBeGreaterThan(1000);
      for (const row of fitted) expect(evalSentences.has(norm(row.text)), row.text).toBe(false);
      // The dataset's held-out rows are not trained on either, even as a duplicate elsewhere.
      const heldOut = new Set(rows.filter((r) => r.split === "test").map((r) => norm(r.text)));
      const leaked = fitted.filter(
        (r) => r.source.startsWith("train-templates") && heldOut.has(norm(r.text)),
      );
      expect(leaked).toEqual([]);
    }
  });

  it("give every type harmful and benign sentences about the same targets in both splits", () => {
    for (const type of TYPES) {
      const rows = trainingTemplates(type);
      for (const split of ["train", "calibration"] as const) {
        const inSplit = rows.filter((r) => r.split === split);
        expect(inSplit.some((r) => r.harmful)).toBe(true);
        expect(inSplit.some((r) => !r.harmful)).toBe(true);
      }
      // Calibration predicates are never trained on.
      const train = new Set(rows.filter((r) => r.split === "train").map((r) => r.text));
      for (const r of rows.filter((r) => r.split === "calibration")) expect(train.has(r.text)).toBe(false);
    }
  });
});
