/**
 * Writes a small but real Hugging Face token-classification model directory, laid out as
 * `optimum-cli export onnx --task token-classification` writes one: `config.json` with `id2label`,
 * a BERT WordPiece `tokenizer.json` (lowercasing, accent stripping, `[CLS] … [SEP]`) and
 * `onnx/model.onnx`. The graph is a token classifier in miniature:
 *
 *   logits[b, t] = emit[input_ids[b, t]] + cue[input_ids[b, t - 1]] + position[t] + segment[token_type_ids[b, t]]
 *   logits *= attention_mask
 *
 * `emit` tags known names (first names B-PER, surnames I-PER, "paris" B-LOC), `cue` lets "dr" make
 * the next word a name (a name is only found when its window carries the word before it), and the
 * position table has exactly `max_position_embeddings` rows, so ONNX Runtime fails the run if the
 * appliance ever feeds a longer sequence.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import onnxProto from "onnx-proto";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

export const LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"];
export const MAX_POSITIONS = 16;

export const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const WORDS = [
  ...SPECIAL,
  ...[",", ".", ":", "!", "(", ")"],
  ...["call", "at", "or", "and", "met", "in", "the", "dr", "with", "today", "said", "desk", "from"],
  ...["ana", "jose", "maria", "zoe", "li", "wei", "per", "##ez", "gar", "##cia", "paris", "is", "here"],
];
export const VOCAB: Record<string, number> = Object.fromEntries(WORDS.map((w, i) => [w, i]));

const [O, B_PER, I_PER, B_LOC] = [0, 1, 2, 3];

/** Logits per vocabulary entry: every word leans to O unless listed here. */
function emissions(): Float32Array {
  const table = new Float32Array(WORDS.length * LABELS.length);
  const set = (word: string, label: number, value: number) => {
    table[(VOCAB[word] as number) * LABELS.length + label] = value;
  };
  for (const word of WORDS) set(word, O, 4);
  for (const first of ["ana", "jose", "maria", "zoe"]) set(first, B_PER, 8);
  for (const last of ["li", "per", "##ez"]) set(last, I_PER, 8);
  // "García" is "gar" + "##cia": the second piece alone leans to O, the word's average is a name.
  set("gar", I_PER, 9);
  set("##cia", O, 2);
  set("##cia", I_PER, 1.5);
  set("paris", B_LOC, 8);
  return table;
}

/** Added to the logits of the token after this one. */
function cues(): Float32Array {
  const table = new Float32Array(WORDS.length * LABELS.length);
  table[(VOCAB.dr as number) * LABELS.length + B_PER] = 8;
  return table;
}

/**
 * A BERT `tokenizer.json` over `vocab` (which must hold `SPECIAL`): clean text, lowercase and
 * strip accents, split on whitespace and punctuation, WordPiece with `##`, `[CLS] … [SEP]`.
 */
export function bertTokenizerJson(vocab: Record<string, number>) {
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content) => ({
      id: vocab[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
      ],
      pair: [],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [vocab["[CLS]"]], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [vocab["[SEP]"]], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

export function floats(name: string, dims: number[], values: Float32Array) {
  const rawData = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData });
}

export function int64s(name: string, values: number[], dims = [values.length]) {
  return onnx.TensorProto.create({ name, dims, dataType: INT64, int64Data: values });
}

export function valueInfo(name: string, elemType: number, dims: (number | string)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) },
      },
    },
  });
}

export interface GraphOptions {
  /** Labels in the output (defaults to `LABELS.length`); a different count makes the directory inconsistent. */
  outputLabels?: number;
}

/** The ONNX token classifier described in the header, opset 13. */
export function tokenClassifierOnnx(options: GraphOptions = {}): Uint8Array {
  const labels = options.outputLabels ?? LABELS.length;
  const widen = (table: Float32Array, rows: number) => {
    const out = new Float32Array(rows * labels);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < Math.min(labels, LABELS.length); c++)
        out[r * labels + c] = table[r * LABELS.length + c] ?? 0;
    }
    return out;
  };
  const node = (opType: string, input: string[], output: string, attribute: object[] = []) =>
    onnx.NodeProto.create({ opType, input, output: [output], name: output, attribute });
  const graph = onnx.GraphProto.create({
    name: "tiny_token_classifier",
    node: [
      node("Gather", ["emit", "input_ids"], "emitted"),
      node("Gather", ["cue", "input_ids"], "cued"),
      node("Pad", ["cued", "shift_pads"], "cued_padded"),
      node("Slice", ["cued_padded", "zero", "minus_one", "one"], "cued_shifted"),
      node("Shape", ["input_ids"], "ids_shape"),
      node("Gather", ["ids_shape", "one_scalar"], "length"),
      node("Range", ["zero_scalar", "length", "one_scalar"], "positions"),
      node("Gather", ["position", "positions"], "positioned"),
      node("Gather", ["segment", "token_type_ids"], "segmented"),
      node("Add", ["emitted", "cued_shifted"], "sum_1"),
      node("Add", ["sum_1", "positioned"], "sum_2"),
      node("Add", ["sum_2", "segmented"], "sum_3"),
      node("Cast", ["attention_mask"], "mask_float", [{ name: "to", i: FLOAT, type: 2 }]),
      node("Unsqueeze", ["mask_float", "two"], "mask_3d"),
      node("Mul", ["sum_3", "mask_3d"], "logits"),
    ],
    initializer: [
      floats("emit", [WORDS.length, labels], widen(emissions(), WORDS.length)),
      floats("cue", [WORDS.length, labels], widen(cues(), WORDS.length)),
      floats("position", [MAX_POSITIONS, labels], new Float32Array(MAX_POSITIONS * labels)),
      floats("segment", [2, labels], new Float32Array(2 * labels)),
      int64s("shift_pads", [0, 1, 0, 0, 0, 0]),
      int64s("zero", [0]),
      int64s("minus_one", [-1]),
      int64s("one", [1]),
      int64s("two", [2]),
      int64s("one_scalar", [1], []),
      int64s("zero_scalar", [0], []),
    ],
    input: [
      valueInfo("input_ids", INT64, ["batch_size", "sequence_length"]),
      valueInfo("attention_mask", INT64, ["batch_size", "sequence_length"]),
      valueInfo("token_type_ids", INT64, ["batch_size", "sequence_length"]),
    ],
    output: [valueInfo("logits", FLOAT, ["batch_size", "sequence_length", labels])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    producerName: "lakesmith-screen-appliance-tests",
    opsetImport: [{ domain: "", version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

export interface ModelDirOptions extends GraphOptions {
  /** Leave these files out, to test the start-up checks. */
  without?: ("config.json" | "tokenizer.json" | "onnx/model.onnx")[];
  /** Write a BERT `vocab.txt` instead of `tokenizer.json`. */
  vocabOnly?: boolean;
  id2label?: Record<string, string>;
}

/** Writes the model directory into a fresh temporary folder and returns its path. */
export async function writeMountedModel(options: ModelDirOptions = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "screen-hf-ner-"));
  const skip = new Set(options.without ?? []);
  const config = {
    _name_or_path: "lakesmith/tiny-test-ner",
    architectures: ["BertForTokenClassification"],
    model_type: "bert",
    max_position_embeddings: MAX_POSITIONS,
    pad_token_id: 0,
    id2label: options.id2label ?? Object.fromEntries(LABELS.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(LABELS.map((l, i) => [l, i])),
  };
  if (!skip.has("config.json")) await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  if (options.vocabOnly) {
    await writeFile(join(dir, "vocab.txt"), `${WORDS.join("\n")}\n`);
    await writeFile(
      join(dir, "tokenizer_config.json"),
      JSON.stringify({ do_lower_case: true, model_max_length: 512 }),
    );
  } else if (!skip.has("tokenizer.json")) {
    await writeFile(join(dir, "tokenizer.json"), JSON.stringify(bertTokenizerJson(VOCAB)));
  }
  if (!skip.has("onnx/model.onnx")) {
    await mkdir(join(dir, "onnx"));
    await writeFile(join(dir, "onnx/model.onnx"), tokenClassifierOnnx(options));
  }
  return dir;
}
