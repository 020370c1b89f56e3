/**
 * `npm run eval:screen`: per-type precision, recall and F2 of PII detection on held-out templates,
 * ordinary business text with no personal data (share of words kept), then the bias and toxicity
 * classifiers on held-out and templated data (ROC AUC, calibration, contrast pairs; see
 * eval-classifiers.ts). Mounted Hugging Face models
 * (`SCREEN_NER_MODEL_DIR`, `SCREEN_BIAS_MODEL_DIR`, `SCREEN_TOXICITY_MODEL_DIR`) are evaluated
 * in place of the built-in ones, on the same rows. `SCREEN_EVAL_PARTS=pii` (or `classifiers`) runs
 * only that half.
 */
import { parseConfig } from "../src/config.ts";
import { BIAS_TYPES, TOXICITY_TYPES } from "../src/detect/types.ts";
import { DEFAULT_MODEL_DIR, loadModels } from "../src/models.ts";
import { describeClassifier, evaluateClassifier } from "./eval-classifiers.ts";
import { evaluateOrdinaryText, printOrdinaryText } from "./eval-ordinary.ts";
import { evaluatePii, printPii } from "./eval-pii.ts";
import { biasRows, toxicityRows } from "./lib/classifier-data.ts";

const config = parseConfig(process.env);
// CPU unless a provider is asked for, so the published figures are reproducible anywhere; a
// mounted transformer can be evaluated on the GPU with SCREEN_EXECUTION_PROVIDER=cuda.
const provider = process.env.SCREEN_EXECUTION_PROVIDER ? config.SCREEN_EXECUTION_PROVIDER : "cpu";
const models = await loadModels(config.SCREEN_MODEL_DIR ?? DEFAULT_MODEL_DIR, provider, {
  nerModelDir: config.SCREEN_NER_MODEL_DIR,
  biasModelDir: config.SCREEN_BIAS_MODEL_DIR,
  toxicityModelDir: config.SCREEN_TOXICITY_MODEL_DIR,
});
const parts = new Set((process.env.SCREEN_EVAL_PARTS ?? "pii,classifiers").split(","));
for (const part of parts)
  if (part !== "pii" && part !== "classifiers")
    throw new Error(`SCREEN_EVAL_PARTS: unknown part "${part}" (pii, classifiers)`);
if (parts.has("pii")) {
  printPii(await evaluatePii(models.names));
  printPii(await evaluatePii(models.names, "all"));
  printOrdinaryText(await evaluateOrdinaryText(models.names));
}
if (parts.has("classifiers")) {
  const { biasModel, toxicityModel } = models.runtime;
  await evaluateClassifier("bias", models.bias, biasRows(), BIAS_TYPES, describeClassifier(biasModel));
  await evaluateClassifier(
    "toxicity",
    models.toxicity,
    toxicityRows(),
    TOXICITY_TYPES,
    describeClassifier(toxicityModel),
  );
}
