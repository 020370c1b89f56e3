import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rocAuc } from "../scripts/lib/classifier-data.ts";
import { createApp } from "../src/app.ts";
import { verifyLicense } from "../src/license/license.ts";
import { createMetrics } from "../src/metrics.ts";
import { DEFAULT_MODEL_DIR, loadModels, type ModelOptions } from "../src/models.ts";
import { licenseText, post, testModels, vendor } from "./helpers.ts";
import {
  type ClassifierDirOptions,
  CROWS_TYPES,
  crowsRows,
  davidsonRows,
  FILLER,
  type TrainedClassifier,
  trainBias,
  trainToxicity,
  writeClassifierDir,
} from "./mounted-classifier.ts";

type Result = { level: string; score: number };
type ScreenBody = {
  biasResults?: (Result & { biasType: string })[];
  toxicityResults?: (Result & { toxicityType: string })[];
};

let trained: { toxicity: TrainedClassifier; bias: TrainedClassifier } | undefined;
function models() {
  trained ??= { toxicity: trainToxicity(), bias: trainBias() };
  return trained;
}

const dirs: string[] = [];
async function modelDir(model: TrainedClassifier, options: Partial<ClassifierDirOptions> = {}) {
  const dir = await writeClassifierDir(model, {
    name: "lakesmith/test-classifier",
    maxPositions: 128,
    ...options,
  });
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function appWith(options: ModelOptions) {
  const loaded = await loadModels(DEFAULT_MODEL_DIR, "cpu", options);
  const license = verifyLicense(licenseText(), vendor.publicKey);
  return createApp({
    ...loaded,
    license: () => license,
    metrics: createMetrics(() => license),
    maxBodyBytes: 1 << 20,
  });
}
type App = Awaited<ReturnType<typeof appWith>>;

async function screen(app: App, body: Record<string, unknown>): Promise<ScreenBody> {
  const res = await post(app, "/screen", { classificationTypes: [], ...body });
  expect(res.status).toBe(200);
  return (await res.json()) as ScreenBody;
}
async function hate(app: App, data: string): Promise<Result> {
  return (await screen(app, { data, toxicityTypes: ["HATE"] })).toxicityResults?.[0] as Result;
}

/** Every n-th row, so the sample spreads over the file. */
const spread = <T>(rows: T[], count: number) =>
  rows.filter((_, i) => i % Math.max(1, Math.floor(rows.length / count)) === 0).slice(0, count);

describe("mounted Hugging Face text classifiers (SCREEN_TOXICITY_MODEL_DIR, SCREEN_BIAS_MODEL_DIR)", () => {
  let app: App;
  let toxicityDir: string;
  let biasDir: string;
  beforeAll(async () => {
    const { toxicity, bias } = models();
    toxicityDir = await modelDir(toxicity, { name: "lakesmith/davidson-bow", tokenTypeIds: true });
    biasDir = await modelDir(bias, { name: "lakesmith/crows-pairs-bow", maxPositions: 64 });
    app = await appWith({ toxicityModelDir: toxicityDir, biasModelDir: biasDir });
  }, 60_000);

  it("names both models in /health with how each label is read, and keeps the built-in model only for the type no label names", async () => {
    const health = (await (await app.request("/health")).json()) as Record<string, unknown>;
    expect(health.toxicityModel).toEqual({
      source: "mounted",
      directory: toxicityDir,
      file: join(toxicityDir, "onnx/model.onnx"),
      name: "lakesmith/davidson-bow",
      tokenizer: "tokenizer.json",
      tokenizerModel: "WordPiece",
      labels: ["neither", "offensive_language", "hate_speech"],
      activation: "softmax",
      types: { HATE: ["hate_speech"] },
      negativeLabels: ["neither"],
      ignoredLabels: ["offensive_language"],
      builtInTypes: ["PHYSICAL_SAFETY"],
      maxTokens: 128,
    });
    expect(health.biasModel).toMatchObject({
      source: "mounted",
      name: "lakesmith/crows-pairs-bow",
      labels: CROWS_TYPES,
      activation: "sigmoid",
      types: {
        RACE_ETHNICITY: ["race-color"],
        NATIONALITY_LOCATION: ["nationality"],
        APPEARANCE: ["physical-appearance"],
      },
      negativeLabels: [],
      ignoredLabels: ["socioeconomic", "gender", "disability", "sexual-orientation", "religion", "age"],
      builtInTypes: [],
      maxTokens: 64,
    });
    const models = health.models as { name: string }[];
    expect(models.map((m) => m.name)).toEqual([
      "person-ner",
      "bias (mounted)",
      "toxicity (mounted)",
      "toxicity",
    ]);
  });

  it("separates held-out hate speech from neutral tweets through POST /screen (ROC AUC > 0.85)", async () => {
    const heldOut = davidsonRows().filter((r) => r.split === "test");
    const rows = [
      ...spread(
        heldOut.filter((r) => r.targets[2] === 1),
        200,
      ),
      ...spread(
        heldOut.filter((r) => r.targets[0] === 1),
        200,
      ),
    ];
    const scores: number[] = [];
    for (const row of rows) scores.push((await hate(app, row.text)).score);
    const auc = rocAuc(
      scores,
      rows.map((r) => r.targets[2] as number),
    );
    expect(auc).toBeGreaterThan(0.85);
  }, 60_000);

  it("separates held-out stereotyping sentences of each bias type from every other sentence (ROC AUC > 0.75)", async () => {
    const heldOut = crowsRows().filter((r) => r.split === "test");
    const types = {
      RACE_ETHNICITY: "race-color",
      NATIONALITY_LOCATION: "nationality",
      APPEARANCE: "physical-appearance",
    };
    const scores: Record<string, number[]> = { RACE_ETHNICITY: [], NATIONALITY_LOCATION: [], APPEARANCE: [] };
    for (const row of heldOut) {
      const body = await screen(app, { data: row.text, biasTypes: Object.keys(types) });
      for (const r of body.biasResults ?? []) scores[r.biasType]?.push(r.score);
    }
    for (const [type, label] of Object.entries(types)) {
      const l = CROWS_TYPES.indexOf(label);
      const auc = rocAuc(
        scores[type] ?? [],
        heldOut.map((r) => r.targets[l] as number),
      );
      expect(auc, type).toBeGreaterThan(0.75);
    }
  }, 60_000);

  it("reports the softmax probability of a single-label model's class and the sigmoid of a multi-label model's label", async () => {
    const { toxicity, bias } = models();
    // Texts that fit one window, where the model's own probability is the whole answer.
    const tweets = spread(
      davidsonRows().filter((r) => r.split === "test" && toxicity.encode(r.text).length <= 128),
      20,
    );
    for (const { text } of tweets) {
      expect(Math.abs((await hate(app, text)).score - (toxicity.probabilities(text)[2] ?? 0))).toBeLessThan(
        6e-4,
      );
    }
    const sentences = spread(
      crowsRows().filter((r) => r.split === "test"),
      20,
    );
    for (const { text } of sentences) {
      const body = await screen(app, { data: text, biasTypes: ["RACE_ETHNICITY"] });
      const expected = bias.probabilities(text)[CROWS_TYPES.indexOf("race-color")] ?? 0;
      expect(Math.abs((body.biasResults?.[0]?.score ?? -1) - expected)).toBeLessThan(6e-4);
    }
  });

  it("adds up the probabilities of a single-label model's classes that name the same type", async () => {
    const { toxicity } = models();
    const dir = await modelDir(toxicity, { id2label: ["neither", "hateful", "hate_speech"] });
    const merged = await appWith({ toxicityModelDir: dir });
    for (const { text } of spread(
      davidsonRows().filter((r) => r.split === "test" && toxicity.encode(r.text).length <= 128),
      10,
    )) {
      const [, offensive = 0, hateSpeech = 0] = toxicity.probabilities(text);
      expect(Math.abs((await hate(merged, text)).score - (offensive + hateSpeech))).toBeLessThan(6e-4);
    }
  });

  it("answers PHYSICAL_SAFETY, which no mounted label names, with the built-in model", async () => {
    const builtIn = (await testModels()).toxicity;
    const data = "I will find where you live and hurt you.";
    const body = await screen(app, { data, toxicityTypes: ["HATE", "PHYSICAL_SAFETY"] });
    const expected = (await builtIn.score(data, ["PHYSICAL_SAFETY"])).get("PHYSICAL_SAFETY") ?? -1;
    expect(body.toxicityResults?.map((r) => r.toxicityType)).toEqual(["HATE", "PHYSICAL_SAFETY"]);
    expect(body.toxicityResults?.[1]?.score).toBe(Math.round(expected * 1000) / 1000);
  });

  it("reads labels renamed in config.json id2label, and opens no built-in model when every type is named", async () => {
    const { toxicity } = models();
    const renamed = await modelDir(toxicity, { id2label: ["Non-Toxic", "THREAT", "Identity Hate"] });
    const health = (await (
      await (await appWith({ toxicityModelDir: renamed })).request("/health")
    ).json()) as {
      toxicityModel: Record<string, unknown>;
      models: { name: string }[];
    };
    expect(health.toxicityModel).toMatchObject({
      types: { HATE: ["Identity Hate"], PHYSICAL_SAFETY: ["THREAT"] },
      negativeLabels: ["Non-Toxic"],
      ignoredLabels: [],
      builtInTypes: [],
    });
    expect(health.models.map((m) => m.name)).toEqual(["person-ner", "bias", "toxicity (mounted)"]);
  });
});

describe("texts longer than the mounted classifier's max_position_embeddings", () => {
  const MAX_POSITIONS = 24;
  let app: App;
  let dir: string;
  beforeAll(async () => {
    dir = await modelDir(models().toxicity, { maxPositions: MAX_POSITIONS, tokenTypeIds: true });
    app = await appWith({ toxicityModelDir: dir });
  }, 60_000);

  it("the graph itself fails a sequence longer than its positions, as a transformer does", async () => {
    const session = await ort.InferenceSession.create(join(dir, "onnx/model.onnx"));
    const tokens = MAX_POSITIONS + 1;
    const ids = () => new ort.Tensor("int64", new BigInt64Array(tokens).fill(1n), [1, tokens]);
    await expect(
      session.run({ input_ids: ids(), attention_mask: ids(), token_type_ids: ids() }),
    ).rejects.toThrow();
  });

  it("are cut into windows, and a hateful passage anywhere scores at least as high as on its own", async () => {
    const { toxicity } = models();
    // The held-out hate tweet of at most 10 tokens (12 with [CLS] and [SEP]) that the model scores
    // highest. Windows of 22 tokens overlap by 10, so one window always holds it whole.
    const [passage] = davidsonRows()
      .filter((r) => r.split === "test" && r.targets[2] === 1)
      .map((r) => r.text)
      .filter((t) => toxicity.encode(t).length <= 12)
      .sort((a, b) => (toxicity.probabilities(b)[2] ?? 0) - (toxicity.probabilities(a)[2] ?? 0));
    const alone = await hate(app, passage as string);
    expect(alone.level).not.toBe("LOW");
    const filler = (n: number) => `${FILLER} `.repeat(n);
    const quiet = await hate(app, filler(1));
    expect((await hate(app, filler(200))).score).toBe(quiet.score);
    for (const before of [0, 7, 30, 95, 150]) {
      const result = await hate(app, `${filler(before)}${passage} ${filler(160 - before)}`);
      // The window holding the passage has its logits exactly (filler weighs 0); 0.001 is rounding.
      expect(result.score, `${before} filler words before`).toBeGreaterThanOrEqual(alone.score - 0.001);
    }
  });
});

describe("start-up checks of SCREEN_TOXICITY_MODEL_DIR and SCREEN_BIAS_MODEL_DIR", () => {
  const load = (options: ModelOptions) => loadModels(DEFAULT_MODEL_DIR, "cpu", options);

  it("refuses a directory that does not exist", async () => {
    await expect(load({ biasModelDir: "/nonexistent/bias" })).rejects.toThrow(
      "SCREEN_BIAS_MODEL_DIR=/nonexistent/bias is not a directory; mount the exported model there or unset the variable to use the built-in bias model",
    );
  });

  it("names every missing file of an incomplete directory", async () => {
    const dir = await modelDir(models().bias, {
      without: ["config.json", "tokenizer.json", "onnx/model.onnx"],
    });
    await expect(load({ toxicityModelDir: dir })).rejects.toThrow(
      `SCREEN_TOXICITY_MODEL_DIR=${dir} is not a complete text-classification model: missing config.json (with id2label), tokenizer.json (or a BERT vocab.txt), model.onnx (or onnx/model.onnx)`,
    );
  });

  it("refuses a model none of whose labels names a type, naming its labels and the names it expects", async () => {
    const dir = await modelDir(models().toxicity, { id2label: ["non-toxic", "toxic", "LABEL_2"] });
    const refusal = load({ toxicityModelDir: dir });
    await expect(refusal).rejects.toThrow(
      "none of the labels (non-toxic, toxic, LABEL_2) names a toxicity type this appliance reports",
    );
    await expect(refusal).rejects.toThrow(
      /expected one of HATE: hate, hateful, .*identityhate.*; PHYSICAL_SAFETY: .*threat/,
    );
    await expect(refusal).rejects.toThrow(/rename them in config\.json id2label/);
  });

  it("refuses a graph without the standard input or output names", async () => {
    const inputs = await modelDir(models().bias, { inputName: "ids" });
    await expect(load({ biasModelDir: inputs })).rejects.toThrow(
      "has an input 'ids' this appliance cannot fill; a text-classification export takes input_ids, attention_mask, token_type_ids, position_ids",
    );
    const outputs = await modelDir(models().bias, { outputName: "probs" });
    await expect(load({ biasModelDir: outputs })).rejects.toThrow(
      "has no output 'logits' (outputs: probs); a text-classification export names its output logits",
    );
  });

  it("refuses a graph whose logits do not have one column per label of config.json", async () => {
    const dir = await modelDir(models().bias, { outputLabels: 4 });
    await expect(load({ biasModelDir: dir })).rejects.toThrow(
      "output 'logits' has shape [batch_size, 4], expected [batch, 9] for the 9 labels of config.json id2label",
    );
  });

  it("refuses a regression model, whose outputs are not probabilities", async () => {
    const dir = await modelDir(models().bias, { problemType: "regression" });
    await expect(load({ biasModelDir: dir })).rejects.toThrow('problem_type "regression" gives scores');
  });

  it("stops `npm run start:screen` with the reason instead of serving a classifier that cannot answer", async () => {
    const dir = await modelDir(models().toxicity, { id2label: ["neutral", "toxic", "insult"] });
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: join(import.meta.dirname, ".."),
      env: {
        ...process.env,
        PORT: "18098",
        SCREEN_EXECUTION_PROVIDER: "cpu",
        SCREEN_TOXICITY_MODEL_DIR: dir,
      },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `[screen] failed to start: ${join(dir, "config.json")}: none of the labels (neutral, toxic, insult) names a toxicity type`,
    );
  });
});
