/**
 * `npm run eval:screen`: per-type precision, recall and F2 of PII detection on held-out templates,
 * then the bias and toxicity classifiers on their held-out rows.
 */
import { DEFAULT_MODEL_DIR, loadModels } from "../src/models.ts";
import { evaluateClassifier } from "./eval-classifiers.ts";
import { evaluatePii, printPii } from "./eval-pii.ts";
import { biasRows, toxicityRows } from "./lib/classifier-data.ts";

const models = await loadModels(process.env.SCREEN_MODEL_DIR ?? DEFAULT_MODEL_DIR, "cpu", {
  // A mounted Hugging Face name model is evaluated the same way as the built-in one.
  nerModelDir: process.env.SCREEN_NER_MODEL_DIR,
});
printPii(await evaluatePii(models.names));
printPii(await evaluatePii(models.names, "all"));
await evaluateClassifier("bias", models.bias, biasRows());
await evaluateClassifier("toxicity", models.toxicity, toxicityRows());
