import { describe, expect, it } from "vitest";
import { alignTokens, surfaceRules, tokenSurfaces } from "./offsets.ts";
import { HfTokenizer } from "./tokenizer.ts";

/** GPT-2's byte-to-character table, written out independently of the code under test. */
function gpt2Alphabet(): string[] {
  const printable = [...Array(256).keys()].filter(
    (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174,
  );
  let shifted = 0;
  return [...Array(256).keys()].map((b) => String.fromCharCode(printable.includes(b) ? b : 256 + shifted++));
}

/** A RoBERTa-style byte-level BPE tokenizer.json whose merges build a few whole words. */
function byteLevelTokenizer() {
  const alphabet = gpt2Alphabet();
  const bytes = (text: string) => [...new TextEncoder().encode(text)].map((b) => alphabet[b]).join("");
  const words = [" José", " Zoë", " Call"];
  const merges: string[] = [];
  const vocab: Record<string, number> = { "<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3 };
  for (const ch of alphabet) vocab[ch] = Object.keys(vocab).length;
  for (const word of words) {
    const chars = [...bytes(word)];
    let left = chars[0] ?? "";
    for (const right of chars.slice(1)) {
      merges.push(`${left} ${right}`);
      left += right;
      vocab[left] ??= Object.keys(vocab).length;
    }
  }
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: ["<s>", "<pad>", "</s>", "<unk>"].map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: "RobertaProcessing",
      sep: ["</s>", 2],
      cls: ["<s>", 0],
      trim_offsets: true,
      add_prefix_space: false,
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, vocab, merges },
  };
}

function pieces(text: string, spans: { start: number; end: number }[]) {
  return spans.map((s) => text.slice(s.start, s.end));
}

describe("character offsets of Hugging Face tokens", () => {
  it("finds byte-level BPE tokens in the text, a character split over bytes going to the byte that completes it", () => {
    const tokenizer = new HfTokenizer(byteLevelTokenizer());
    expect(tokenizer.prefix).toEqual([0]);
    expect(tokenizer.suffix).toEqual([2]);
    const text = "😀 José, Zoë Call";
    const { spans } = tokenizer.encode(text);
    const texts = pieces(text, spans).filter((p) => p !== "");
    expect(texts).toEqual(["😀", "José", ",", "Zoë", "Call"]);
    // The emoji's four byte tokens: three zero-width, the last covers both UTF-16 units.
    expect(spans.slice(0, 4)).toEqual([
      { start: 0, end: 0 },
      { start: 0, end: 0 },
      { start: 0, end: 0 },
      { start: 0, end: 2 },
    ]);
  });

  it("reads SentencePiece's ▁ as a space and matches tokens through lowercasing and accent stripping", () => {
    const rules = surfaceRules({
      model: { type: "Unigram", unk_token: "<unk>" },
      pre_tokenizer: { type: "Metaspace", replacement: "▁" },
    });
    const text = "Ｃall  ZOË Ｌi";
    const spans = alignTokens(text, tokenSurfaces(["▁call", "▁zoe", "▁l", "i"], rules));
    expect(pieces(text, spans)).toEqual(["Ｃall", "ZOË", "Ｌ", "i"]);
  });

  it("gives unknown tokens the words between their matched neighbours", () => {
    const rules = surfaceRules({ model: { type: "WordPiece", unk_token: "[UNK]" } });
    const text = "call Ωmega ψi now";
    const spans = alignTokens(text, tokenSurfaces(["call", "[UNK]", "[UNK]", "now"], rules));
    expect(pieces(text, spans)).toEqual(["call", "Ωmega", "ψi", "now"]);
    const uneven = alignTokens(text, tokenSurfaces(["call", "[UNK]", "now"], rules));
    expect(pieces(text, uneven)).toEqual(["call", "Ωmega ψi", "now"]);
  });
});
