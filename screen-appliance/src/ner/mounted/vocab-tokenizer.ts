/**
 * A `tokenizer.json` for model directories that ship only a BERT `vocab.txt` (older exports, and
 * `save_pretrained` with a slow tokenizer). It describes what BERT's tokenizer does (clean text, split
 * CJK characters, lowercase and strip accents unless `do_lower_case` is false, split on whitespace and
 * punctuation, WordPiece with `##`, `[CLS] … [SEP]` around a sequence), so the same pure-JS
 * tokenizer runs it as it runs a full `tokenizer.json`.
 */

type Json = Record<string, unknown>;

function tokenName(entry: unknown, fallback: string): string {
  if (typeof entry === "string") return entry;
  if (typeof entry === "object" && entry !== null && typeof (entry as Json).content === "string") {
    return (entry as Json).content as string;
  }
  return fallback;
}

/**
 * Builds the tokenizer from the lines of `vocab.txt` (the line number is the id) and the optional
 * `tokenizer_config.json`. Throws when the vocabulary lacks the unknown or framing tokens.
 *
 * @example
 * const json = wordPieceFromVocab(readFileSync("vocab.txt", "utf8"), { do_lower_case: false }, "vocab.txt");
 */
export function wordPieceFromVocab(vocabText: string, tokenizerConfig: Json, source: string): Json {
  const lines = vocabText.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  const vocab: Record<string, number> = {};
  lines.forEach((token, id) => {
    if (!(token in vocab)) vocab[token] = id;
  });
  const unk = tokenName(tokenizerConfig.unk_token, "[UNK]");
  const cls = tokenName(tokenizerConfig.cls_token, "[CLS]");
  const sep = tokenName(tokenizerConfig.sep_token, "[SEP]");
  const pad = tokenName(tokenizerConfig.pad_token, "[PAD]");
  const missing = [unk, cls, sep].filter((t) => vocab[t] === undefined);
  if (missing.length > 0) {
    throw new Error(`${source} has no ${missing.join(", ")} token; a BERT WordPiece vocabulary needs them`);
  }
  const special = [pad, unk, cls, sep, tokenName(tokenizerConfig.mask_token, "[MASK]")].filter(
    (t) => vocab[t] !== undefined,
  );
  const lowercase = tokenizerConfig.do_lower_case !== false;
  return {
    version: "1.0",
    truncation: null,
    padding: vocab[pad] === undefined ? null : { pad_token: pad, pad_id: vocab[pad] },
    added_tokens: [...new Set(special)].map((content) => ({
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
      handle_chinese_chars: tokenizerConfig.tokenize_chinese_chars !== false,
      strip_accents:
        typeof tokenizerConfig.strip_accents === "boolean" ? tokenizerConfig.strip_accents : null,
      lowercase,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: cls, type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: sep, type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: cls, type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: sep, type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: sep, type_id: 1 } },
      ],
      special_tokens: {
        [cls]: { id: cls, ids: [vocab[cls]], tokens: [cls] },
        [sep]: { id: sep, ids: [vocab[sep]], tokens: [sep] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: unk,
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}
