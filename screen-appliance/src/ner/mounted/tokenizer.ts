/**
 * The mounted models' tokenizer (the name model here, and the bias and toxicity classifiers of
 * `classify/mounted/`): tokenizers.js (`@huggingface/tokenizers`, pure JavaScript, reads
 * `tokenizer.json` from memory, never from the network) plus what inference needs and the library
 * does not return: each token's character offsets, the special tokens that frame a sequence
 * (`[CLS] … [SEP]`, `<s> … </s>`), and the padding id.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { type Json, maxTokensOf, optionalJson, readJson } from "../../ml/hf-export.ts";
import { alignTokens, type SurfaceRules, surfaceRules, type TokenSpan, tokenSurfaces } from "./offsets.ts";
import { wordPieceFromVocab } from "./vocab-tokenizer.ts";

export interface EncodedText {
  ids: number[];
  spans: TokenSpan[];
  /** The tokenizer marks the token as the continuation of a word (WordPiece `##`). */
  subword: boolean[];
}

/** The token string of a `tokenizer_config.json`/`special_tokens_map.json` entry (string or AddedToken). */
function tokenContent(entry: unknown): string | undefined {
  if (typeof entry === "string") return entry;
  if (typeof entry === "object" && entry !== null && typeof (entry as Json).content === "string") {
    return (entry as Json).content as string;
  }
  return undefined;
}

export class HfTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly rules: SurfaceRules;
  /** Ids placed before and after every window, as the tokenizer's post-processor does. */
  readonly prefix: number[];
  readonly suffix: number[];
  readonly padId: number;
  /** The tokenizer model type: WordPiece, BPE, Unigram. */
  readonly kind: string;

  constructor(json: Json, files: { tokenizerConfig?: Json; specialTokensMap?: Json; config?: Json } = {}) {
    this.tokenizer = new Tokenizer(json, files.tokenizerConfig ?? {});
    this.rules = surfaceRules(json);
    this.kind = String((json.model as Json | undefined)?.type ?? "unknown");
    ({ prefix: this.prefix, suffix: this.suffix } = this.specialFrame());
    const padToken =
      tokenContent((json.padding as Json | null | undefined)?.pad_token) ??
      tokenContent(files.tokenizerConfig?.pad_token) ??
      tokenContent(files.specialTokensMap?.pad_token);
    const padId = padToken === undefined ? undefined : this.tokenizer.token_to_id(padToken);
    const configPad = files.config?.pad_token_id;
    this.padId = padId ?? (typeof configPad === "number" ? configPad : 0);
  }

  /** Token ids of `text` without special tokens (no offsets: for whole-text classifiers). */
  ids(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** Tokens of `text` without special tokens, with their offsets. */
  encode(text: string): EncodedText {
    const { ids, tokens } = this.tokenizer.encode(text, { add_special_tokens: false });
    const spans = alignTokens(text, tokenSurfaces(tokens, this.rules));
    const prefix = this.rules.subwordPrefix;
    const subword = tokens.map(
      (t) => prefix !== undefined && t.startsWith(prefix) && t.length > prefix.length,
    );
    return { ids, spans, subword };
  }

  /**
   * Finds the special tokens around a sequence by encoding a probe with and without them. A probe
   * must give at least one token, or the frame could not be told from the text.
   */
  private specialFrame(): { prefix: number[]; suffix: number[] } {
    for (const probe of ["a", "hello", "A", "1", "."]) {
      const inner = this.tokenizer.encode(probe, { add_special_tokens: false }).ids;
      if (inner.length === 0) continue;
      const framed = this.tokenizer.encode(probe, { add_special_tokens: true }).ids;
      for (let k = 0; k + inner.length <= framed.length; k++) {
        if (inner.every((id, i) => framed[k + i] === id)) {
          return { prefix: framed.slice(0, k), suffix: framed.slice(k + inner.length) };
        }
      }
    }
    return { prefix: [], suffix: [] };
  }
}

/**
 * The tokenizer of a model directory: `tokenizer.json` as it is, or one built from a BERT
 * `vocab.txt`, with `tokenizer_config.json` and `special_tokens_map.json` when present; and the
 * most tokens per sequence that `config.json` and the tokenizer files allow (special tokens
 * included). Throws naming the file when the tokenizer cannot be built.
 *
 * @example
 * const { tokenizer, maxTokens } = await loadTokenizer("/models/ner", "tokenizer.json", config);
 */
export async function loadTokenizer(
  directory: string,
  file: string,
  config: Json,
): Promise<{ tokenizer: HfTokenizer; maxTokens: number }> {
  const tokenizerConfig = await optionalJson(join(directory, "tokenizer_config.json"));
  const specialTokensMap = await optionalJson(join(directory, "special_tokens_map.json"));
  const path = join(directory, file);
  const json =
    file === "vocab.txt"
      ? wordPieceFromVocab(await readFile(path, "utf8"), tokenizerConfig ?? {}, path)
      : await readJson(path);
  try {
    const tokenizer = new HfTokenizer(json, {
      ...(tokenizerConfig ? { tokenizerConfig } : {}),
      ...(specialTokensMap ? { specialTokensMap } : {}),
      config,
    });
    return { tokenizer, maxTokens: maxTokensOf(config, tokenizerConfig, json) };
  } catch (err) {
    throw new Error(`${path} cannot be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
}
