import { spawnSync } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { verifyLicense } from "../src/license/license.ts";
import { createMetrics } from "../src/metrics.ts";
import { DEFAULT_MODEL_DIR, loadModels } from "../src/models.ts";
import { licenseText, post, vendor } from "./helpers.ts";
import { MAX_POSITIONS, writeMountedModel } from "./mounted-model.ts";

async function appWith(nerModelDir: string) {
  const models = await loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir });
  const license = verifyLicense(licenseText(), vendor.publicKey);
  return createApp({
    ...models,
    license: () => license,
    metrics: createMetrics(() => license),
    maxBodyBytes: 1 << 20,
  });
}

type Finding = { classificationType: string; start: number; end: number; replacement: string };
type ScreenBody = { redactedData: string; findings: Finding[]; redactionMaps: unknown[] };

/** The names as the client sees them: code point offsets into the original text. */
function namesIn(text: string, findings: Finding[]): string[] {
  const points = [...text];
  return findings
    .filter((f) => f.classificationType === "PERSON_NAME")
    .map((f) => points.slice(f.start, f.end).join(""));
}

const dirs: string[] = [];
async function modelDir(options: Parameters<typeof writeMountedModel>[0] = {}) {
  const dir = await writeMountedModel(options);
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("a mounted Hugging Face token-classification model (SCREEN_NER_MODEL_DIR)", () => {
  let app: Awaited<ReturnType<typeof appWith>>;
  let dir: string;
  beforeAll(async () => {
    dir = await modelDir();
    app = await appWith(dir);
  });

  it("is named in /health with its directory, labels and window size", async () => {
    const health = (await (await app.request("/health")).json()) as Record<string, unknown>;
    expect(health.personNameModel).toEqual({
      source: "mounted",
      directory: dir,
      file: join(dir, "onnx/model.onnx"),
      name: "lakesmith/tiny-test-ner",
      tokenizer: "tokenizer.json",
      tokenizerModel: "WordPiece",
      labels: ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],
      personLabels: ["B-PER", "I-PER"],
      maxTokens: MAX_POSITIONS,
    });
    const models = health.models as { name: string; file: string; executionProvider: string }[];
    expect(models.map((m) => m.name)).toEqual(["person-ner (mounted)", "bias", "toxicity"]);
    expect(models[0]).toMatchObject({ file: join(dir, "onnx/model.onnx"), executionProvider: "cpu" });
  });

  it("finds PERSON_NAME spans by BIO labels, whole words, with code point offsets in Unicode text", async () => {
    const data = "🙂🙂 Call Ana Pérez at the desk, or José García in Paris 😀 today!";
    const res = await post(app, "/screen", {
      data,
      classificationTypes: [
        { classificationType: "PERSON_NAME", likelihoodType: "LIKELIHOOD_TYPE_POSSIBLE" },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ScreenBody;
    // Paris is B-LOC: a location label is not a name. "García" is "gar" + "##cia"; the word is kept whole.
    expect(namesIn(data, body.findings)).toEqual(["Ana Pérez", "José García"]);
    expect(body.findings.map((f) => [f.start, f.end])).toEqual([
      [8, 17],
      [34, 45],
    ]);
    expect(body.redactedData).toBe(
      "🙂🙂 Call [PERSON_NAME_1] [PERSON_NAME_2] at the desk, or [PERSON_NAME_3] [PERSON_NAME_4] in Paris 😀 today!",
    );
    const reveal = await post(app, "/reveal", {
      redactedData: body.redactedData,
      redactionMaps: body.redactionMaps,
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(((await reveal.json()) as { originalData: string }).originalData).toBe(data);
  });

  it(`windows texts longer than ${MAX_POSITIONS} tokens and keeps the left context of every token`, async () => {
    // "Dr" makes the next word a name only when both sit in the same model input. Shifting the pair
    // through every position puts it across each window edge; the graph's position table also
    // fails the run if a window is longer than the model allows.
    for (let shift = 0; shift < 12; shift++) {
      const data = `${"the ".repeat(shift)}desk: Dr Wei met Zoë Li and Maria, at the desk with Ana Pérez 😀 today.`;
      const res = await post(app, "/screen", { data });
      expect(res.status).toBe(200);
      const body = (await res.json()) as ScreenBody;
      expect(namesIn(data, body.findings), `shift ${shift}`).toEqual(["Wei", "Zoë Li", "Maria", "Ana Pérez"]);
    }
  });

  it("reads a directory that has a BERT vocab.txt instead of tokenizer.json", async () => {
    const vocabApp = await appWith(await modelDir({ vocabOnly: true }));
    const data = "Call José García at the desk.";
    const body = (await (await post(vocabApp, "/screen", { data })).json()) as ScreenBody;
    expect(namesIn(data, body.findings)).toEqual(["José García"]);
    const health = (await (await vocabApp.request("/health")).json()) as {
      personNameModel: { tokenizer: string };
    };
    expect(health.personNameModel.tokenizer).toBe("vocab.txt");
  });
});

describe("start-up checks of SCREEN_NER_MODEL_DIR", () => {
  it("refuses a directory that does not exist", async () => {
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: "/nonexistent/ner" })).rejects.toThrow(
      /SCREEN_NER_MODEL_DIR=\/nonexistent\/ner is not a directory/,
    );
  });

  it("names every missing file of an incomplete directory", async () => {
    const dir = await modelDir({ without: ["config.json", "tokenizer.json", "onnx/model.onnx"] });
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: dir })).rejects.toThrow(
      "missing config.json (with id2label), tokenizer.json (or a BERT vocab.txt), model.onnx (or onnx/model.onnx)",
    );
    const noModel = await modelDir({ without: ["onnx/model.onnx"] });
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: noModel })).rejects.toThrow(
      /missing model\.onnx \(or onnx\/model\.onnx\)\./,
    );
  });

  it("refuses labels without a person type", async () => {
    const dir = await modelDir({ id2label: { 0: "O", 1: "B-ORG", 2: "I-ORG", 3: "B-LOC", 4: "I-LOC" } });
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: dir })).rejects.toThrow(
      /none of the labels \(O, B-ORG, I-ORG, B-LOC, I-LOC\) names a person/,
    );
  });

  it("refuses a graph whose output does not have one logit per label of config.json", async () => {
    const dir = await modelDir({ outputLabels: 7 });
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: dir })).rejects.toThrow(
      /output 'logits' has shape \[batch_size, sequence_length, 7\], expected \[batch, tokens, 5\]/,
    );
  });

  it("refuses a model file that ONNX Runtime cannot open", async () => {
    const dir = await modelDir();
    await writeFile(join(dir, "onnx/model.onnx"), "not a model");
    await expect(loadModels(DEFAULT_MODEL_DIR, "cpu", { nerModelDir: dir })).rejects.toThrow(
      /onnx\/model\.onnx cannot be opened by ONNX Runtime/,
    );
  });

  it("stops `npm run start:screen` with the reason instead of serving without a name model", async () => {
    const dir = await modelDir({ without: ["tokenizer.json"] });
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: join(import.meta.dirname, ".."),
      env: { ...process.env, PORT: "18099", SCREEN_EXECUTION_PROVIDER: "cpu", SCREEN_NER_MODEL_DIR: dir },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `[screen] failed to start: SCREEN_NER_MODEL_DIR=${dir} is not a complete token-classification model: missing tokenizer.json`,
    );
  });
});
