/**
 * Real Hugging Face text-classification model directories for the mounted toxicity and bias tests,
 * trained here from `shared/datasets` (no pretrained model can be downloaded in this environment)
 * and laid out as `optimum-cli export onnx --task text-classification` writes them.
 *
 * - Toxicity: Davidson tweets, single-label (softmax) over `neither`, `offensive_language`,
 *   `hate_speech`; all hate and neither training rows and a seeded sample of offensive ones.
 * - Bias: CrowS-Pairs, multi-label (sigmoid), one label per CrowS bias type (`race-color`,
 *   `nationality`, ...): a pair's more-stereotyping sentence is a positive of the pair's type, the
 *   less-stereotyping one a negative of every type.
 * - Every fifth row (CrowS: pair) is held out, as in `scripts/lib/classifier-data.ts`.
 * - Model: bag-of-words logistic regression over a WordPiece vocabulary of whole words (words
 *   seen at least twice in training), trained by full-batch Adam for a fixed number of steps with
 *   class-balanced weights; deterministic. Exported, opset 13, as
 *     logits[b, l] = Σ_t mask[b, t] · (W[input_ids[b, t], l] + position[t, l] + segment[token_type_ids[b, t], l]) + bias[l]
 *   where `position` (exactly `max_position_embeddings` rows) and `segment` (only in graphs that
 *   take `token_type_ids`) are zero: `position` makes ONNX Runtime fail a sequence longer than the
 *   model allows, as a transformer does, and `segment` makes the graph read `token_type_ids`.
 * - `FILLER` is in the vocabulary but in no training row, so its weights stay exactly zero: text
 *   made longer with it keeps the logits of its other tokens (the windowing test).
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import onnxProto from "onnx-proto";
import { mulberry32 } from "../scripts/lib/bag-mlp.ts";
import { readCsv } from "../scripts/lib/datasets.ts";
import { bertTokenizerJson, floats, int64s, SPECIAL, valueInfo } from "./mounted-model.ts";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

export const FILLER = "lorem";
export const TOXICITY_LABELS = ["neither", "offensive_language", "hate_speech"];
export const CROWS_TYPES = [
  "race-color",
  "socioeconomic",
  "gender",
  "disability",
  "nationality",
  "sexual-orientation",
  "physical-appearance",
  "religion",
  "age",
];

export interface Row {
  text: string;
  /** One 0/1 per label (single-label tasks: one-hot). */
  targets: number[];
  split: "train" | "test";
}

const heldOut = (index: number): Row["split"] => (index % 5 === 0 ? "test" : "train");

/** Davidson rows: class 0 hate speech, 1 offensive language, 2 neither. */
export function davidsonRows(): Row[] {
  return readCsv("toxicity/davidson_labeled_data.csv").map((row, index) => {
    const label = { "2": 0, "1": 1, "0": 2 }[row.class ?? ""] ?? 0;
    return {
      text: row.tweet ?? "",
      targets: TOXICITY_LABELS.map((_, l) => (l === label ? 1 : 0)),
      split: heldOut(index),
    };
  });
}

/** CrowS-Pairs sentences, both of a pair in the pair's split. */
export function crowsRows(): Row[] {
  return readCsv("bias/crows_pairs_anonymized.csv").flatMap((row, index) => [
    {
      text: row.sent_more ?? "",
      targets: CROWS_TYPES.map((t) => (t === row.bias_type ? 1 : 0)),
      split: heldOut(index),
    },
    { text: row.sent_less ?? "", targets: CROWS_TYPES.map(() => 0), split: heldOut(index) },
  ]);
}

export interface TrainedClassifier {
  labels: string[];
  problemType: "single_label_classification" | "multi_label_classification";
  vocab: Record<string, number>;
  /** [vocab, labels] */
  weights: Float32Array;
  bias: Float32Array;
  /** The probabilities the model gives `text` in one window: softmax or sigmoid of its logits. */
  probabilities(text: string): number[];
  /** Token ids of `text` with `[CLS]` and `[SEP]`, as the exported tokenizer gives them. */
  encode(text: string): number[];
}

/** Lowercased, accent-free words and punctuation marks: the vocabulary's candidates. */
function words(text: string): string[] {
  const folded = text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
  return folded.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) ?? [];
}

function buildVocab(texts: string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) for (const w of words(text)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const kept = [...counts].filter(([w, c]) => c >= 2 && w !== FILLER).map(([w]) => w);
  kept.sort();
  return Object.fromEntries([...SPECIAL, FILLER, ...kept].map((w, i) => [w, i]));
}

/**
 * Trains the classifier on the rows' training split.
 * Softmax (single-label) or one sigmoid per label (multi-label), cross-entropy weighted so that
 * each class (each label's positives and negatives) weighs the same, L2 on W; Adam, `steps` steps.
 */
export function trainClassifier(
  rows: Row[],
  labels: string[],
  problemType: TrainedClassifier["problemType"],
  steps = 300,
): TrainedClassifier {
  const train = rows.filter((r) => r.split === "train");
  const vocab = buildVocab(train.map((r) => r.text));
  const tokenizer = new Tokenizer(bertTokenizerJson(vocab), {});
  const encode = (text: string) => tokenizer.encode(text, { add_special_tokens: true }).ids;
  const examples = train.map((r) => ({ ids: Int32Array.from(encode(r.text)), y: r.targets }));
  const L = labels.length;
  const V = Object.keys(vocab).length;
  const single = problemType === "single_label_classification";

  // Class-balanced weights, per example and label: each class (softmax) or each label's positives
  // and negatives (sigmoid) weigh the same in total.
  const n = examples.length;
  const positives = labels.map((_, l) => Math.max(1, examples.filter((e) => e.y[l] === 1).length));
  const weights = examples.map(({ y }) =>
    Float64Array.from(labels, (_, l) => {
      if (single) return n / (L * (positives[y.indexOf(1)] ?? 1));
      const p = positives[l] ?? 1;
      return y[l] === 1 ? n / (2 * p) : n / (2 * Math.max(1, n - p));
    }),
  );

  const params = new Float64Array(V * L + L); // W row-major [vocab, labels], then the bias
  const grad = new Float64Array(params.length);
  const m = new Float64Array(params.length);
  const v = new Float64Array(params.length);
  const lr = 0.05;
  const l2 = 1e-4;
  const z = new Float64Array(L);
  const p = new Float64Array(L);
  const g = new Float64Array(L);
  for (let step = 1; step <= steps; step++) {
    grad.fill(0);
    examples.forEach(({ ids, y }, e) => {
      for (let l = 0; l < L; l++) z[l] = params[V * L + l] as number;
      for (const id of ids)
        for (let l = 0; l < L; l++) z[l] = (z[l] as number) + (params[id * L + l] as number);
      activate(z, single, p);
      const w = weights[e] as Float64Array;
      for (let l = 0; l < L; l++) g[l] = ((w[l] as number) * ((p[l] as number) - (y[l] as number))) / n;
      for (const id of ids)
        for (let l = 0; l < L; l++) grad[id * L + l] = (grad[id * L + l] as number) + (g[l] as number);
      for (let l = 0; l < L; l++) grad[V * L + l] = (grad[V * L + l] as number) + (g[l] as number);
    });
    const c1 = 1 - 0.9 ** step;
    const c2 = 1 - 0.999 ** step;
    for (let i = 0; i < params.length; i++) {
      const gi = (grad[i] as number) + (i < V * L ? l2 * (params[i] as number) : 0);
      m[i] = 0.9 * (m[i] as number) + 0.1 * gi;
      v[i] = 0.999 * (v[i] as number) + 0.001 * gi * gi;
      params[i] =
        (params[i] as number) - (lr * ((m[i] as number) / c1)) / (Math.sqrt((v[i] as number) / c2) + 1e-8);
    }
  }
  const W = Float32Array.from(params.subarray(0, V * L));
  const b = Float32Array.from(params.subarray(V * L));
  return {
    labels,
    problemType,
    vocab,
    weights: W,
    bias: b,
    encode,
    probabilities(text: string) {
      const z = Float64Array.from(b);
      for (const id of encode(text)) for (let l = 0; l < L; l++) z[l] = (z[l] ?? 0) + (W[id * L + l] ?? 0);
      return Array.from(activate(z, single, new Float64Array(L)));
    },
  };
}

/** Softmax of `z`, or a sigmoid per entry, into `out`. */
function activate(z: Float64Array, softmax: boolean, out: Float64Array): Float64Array {
  if (!softmax) {
    for (let i = 0; i < z.length; i++) out[i] = 1 / (1 + Math.exp(-(z[i] as number)));
    return out;
  }
  let max = Number.NEGATIVE_INFINITY;
  for (const x of z) max = Math.max(max, x);
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    out[i] = Math.exp((z[i] as number) - max);
    sum += out[i] as number;
  }
  for (let i = 0; i < z.length; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** The toxicity classifier: Davidson, all hate and neither training rows, 3,000 offensive ones. */
export function trainToxicity(): TrainedClassifier {
  const next = mulberry32(7);
  const rows = davidsonRows().filter(
    (r) => r.split === "test" || r.targets[1] !== 1 || next() < 3000 / 15350,
  );
  return trainClassifier(rows, TOXICITY_LABELS, "single_label_classification");
}

export function trainBias(): TrainedClassifier {
  return trainClassifier(crowsRows(), CROWS_TYPES, "multi_label_classification");
}

export interface ExportOptions {
  maxPositions: number;
  /** Declare a `token_type_ids` input, as BERT exports do. */
  tokenTypeIds?: boolean;
  /** Graph input and output names, to test the start-up checks. */
  inputName?: string;
  outputName?: string;
  /** Labels in the output (defaults to the model's); a different count makes the directory inconsistent. */
  outputLabels?: number;
}

/** The ONNX graph described in the header. */
export function classifierOnnx(model: TrainedClassifier, options: ExportOptions): Uint8Array {
  const L = options.outputLabels ?? model.labels.length;
  const V = Object.keys(model.vocab).length;
  const weights = new Float32Array(V * L);
  for (let r = 0; r < V; r++)
    for (let l = 0; l < Math.min(L, model.labels.length); l++)
      weights[r * L + l] = model.weights[r * model.labels.length + l] ?? 0;
  const bias = Float32Array.from({ length: L }, (_, l) => model.bias[l] ?? 0);
  const ids = options.inputName ?? "input_ids";
  const node = (opType: string, input: string[], output: string, attribute: object[] = []) =>
    onnx.NodeProto.create({ opType, input, output: [output], name: output, attribute });
  const nodes = [
    node("Gather", ["weights", ids], "embedded"),
    node("Shape", [ids], "ids_shape"),
    node("Gather", ["ids_shape", "one_scalar"], "length"),
    node("Range", ["zero_scalar", "length", "one_scalar"], "positions"),
    node("Gather", ["position", "positions"], "positioned"),
    node("Add", ["embedded", "positioned"], "with_positions"),
    ...(options.tokenTypeIds
      ? [
          node("Gather", ["segment", "token_type_ids"], "segmented"),
          node("Add", ["with_positions", "segmented"], "token_logits"),
        ]
      : [node("Identity", ["with_positions"], "token_logits")]),
    node("Cast", ["attention_mask"], "mask_float", [{ name: "to", i: FLOAT, type: 2 }]),
    node("Unsqueeze", ["mask_float", "two"], "mask_3d"),
    node("Mul", ["token_logits", "mask_3d"], "masked"),
    node("ReduceSum", ["masked", "one"], "summed", [{ name: "keepdims", i: 0, type: 2 }]),
    node("Add", ["summed", "bias"], options.outputName ?? "logits"),
  ];
  const graph = onnx.GraphProto.create({
    name: "bag_of_words_text_classifier",
    node: nodes,
    initializer: [
      floats("weights", [V, L], weights),
      floats("bias", [L], bias),
      floats("position", [options.maxPositions, L], new Float32Array(options.maxPositions * L)),
      ...(options.tokenTypeIds ? [floats("segment", [2, L], new Float32Array(2 * L))] : []),
      int64s("one", [1]),
      int64s("two", [2]),
      int64s("one_scalar", [1], []),
      int64s("zero_scalar", [0], []),
    ],
    input: [
      valueInfo(ids, INT64, ["batch_size", "sequence_length"]),
      valueInfo("attention_mask", INT64, ["batch_size", "sequence_length"]),
      ...(options.tokenTypeIds
        ? [valueInfo("token_type_ids", INT64, ["batch_size", "sequence_length"])]
        : []),
    ],
    output: [valueInfo(options.outputName ?? "logits", FLOAT, ["batch_size", L])],
  });
  const onnxModel = onnx.ModelProto.create({
    irVersion: 7,
    producerName: "lakesmith-screen-appliance-tests",
    opsetImport: [{ domain: "", version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(onnxModel).finish();
}

export interface ClassifierDirOptions extends ExportOptions {
  name: string;
  /** Replaces the trained labels' names in config.json (same count). */
  id2label?: string[];
  problemType?: string;
  /** Leave these files out, to test the start-up checks. */
  without?: ("config.json" | "tokenizer.json" | "onnx/model.onnx")[];
}

/** Writes the model directory into a fresh temporary folder and returns its path. */
export async function writeClassifierDir(
  model: TrainedClassifier,
  options: ClassifierDirOptions,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "screen-hf-classifier-"));
  const skip = new Set(options.without ?? []);
  const labels = options.id2label ?? model.labels;
  const config = {
    _name_or_path: options.name,
    architectures: ["BertForSequenceClassification"],
    model_type: "bert",
    max_position_embeddings: options.maxPositions,
    pad_token_id: 0,
    problem_type: options.problemType ?? model.problemType,
    id2label: Object.fromEntries(labels.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
  };
  if (!skip.has("config.json")) await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  if (!skip.has("tokenizer.json")) {
    await writeFile(join(dir, "tokenizer.json"), JSON.stringify(bertTokenizerJson(model.vocab)));
  }
  if (!skip.has("onnx/model.onnx")) {
    await mkdir(join(dir, "onnx"));
    await writeFile(join(dir, "onnx/model.onnx"), classifierOnnx(model, options));
  }
  return dir;
}
