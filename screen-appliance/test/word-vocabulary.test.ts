/**
 * The built-in models read pretrained word rows from the vocabulary file beside them
 * (src/ml/vocabulary.ts, spec.words): the loader refuses a file that does not match the models.
 */
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readModelSpec } from "../src/ml/model-spec.ts";
import { DEFAULT_MODEL_DIR, loadModels } from "../src/models.ts";

describe("the models' word vocabulary", () => {
  it("is one file every built-in model names, with the word count each expects", async () => {
    const words = (await readFile(join(DEFAULT_MODEL_DIR, "words.txt"), "utf8")).split("\n").filter(Boolean);
    for (const name of ["bias", "toxicity", "person-ner"]) {
      const spec = await readModelSpec(join(DEFAULT_MODEL_DIR, `${name}.json`));
      expect(spec.words).toEqual({ file: "words.txt", count: words.length });
    }
    expect(new Set(words).size).toBe(words.length);
    expect(words.every((w) => w === w.toLowerCase())).toBe(true);
  });

  it("refuses, at start-up, a vocabulary file of another length than the models were trained with", async () => {
    const dir = await mkdtemp(join(tmpdir(), "screen-words-"));
    await cp(DEFAULT_MODEL_DIR, dir, { recursive: true });
    const words = (await readFile(join(dir, "words.txt"), "utf8")).split("\n").filter(Boolean);
    await writeFile(join(dir, "words.txt"), `${words.slice(0, 1000).join("\n")}\n`);
    await expect(loadModels(dir, "cpu")).rejects.toThrow(
      /words\.txt: 1000 words, model (bias|toxicity|person-ner) expects/,
    );
  });
});
