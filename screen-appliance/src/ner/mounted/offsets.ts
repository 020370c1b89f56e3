/**
 * Character offsets for the tokens of a Hugging Face tokenizer. Tokenizers.js (the pure-JS
 * tokenizer used here) returns token strings but no offsets, so each token is turned back into the
 * text it stands for (WordPiece's `##` prefix removed, byte-level BPE's `Ġ`-style bytes decoded,
 * SentencePiece's `▁` read as a space) and found in the input by a folded comparison that ignores
 * case, accents, compatibility forms and whitespace: what normalizers (lowercasing, accent
 * stripping, NFKC) change. Tokens are matched in order, each at or shortly after the end of the one
 * before, so the walk is linear. A token that cannot be matched (`[UNK]`, or a normalizer rewrite
 * this comparison does not model) gets the text between its matched neighbours.
 */

/** A token's place in the text, UTF-16 offsets, half-open; `start === end` for tokens with no text. */
export interface TokenSpan {
  start: number;
  end: number;
}

/** How a tokenizer writes text into its tokens, read from `tokenizer.json`. */
export interface SurfaceRules {
  /** GPT-2/RoBERTa byte-level BPE: every byte is written as one printable character. */
  byteLevel: boolean;
  /** WordPiece's continuation prefix (`##`). */
  subwordPrefix?: string;
  /** Some BPE vocabularies mark the end of a word (`</w>`). */
  wordSuffix?: string;
  /** SentencePiece's space character (`▁`). */
  metaspace?: string;
  /** The unknown token, whose text cannot be recovered from the token. */
  unknown?: string;
  /** Added tokens (special or not): the token is its own text. */
  added: ReadonlySet<string>;
}

type Json = Record<string, unknown>;

/** Every component object (`{type: ...}`) of a tokenizer.json section, Sequences unpacked. */
function components(section: unknown): Json[] {
  if (typeof section !== "object" || section === null) return [];
  if (Array.isArray(section)) return section.flatMap(components);
  const object = section as Json;
  const nested = ["pretokenizers", "decoders", "normalizers", "processors"].flatMap((k) =>
    components(object[k]),
  );
  return [object, ...nested];
}

export function surfaceRules(tokenizer: Json): SurfaceRules {
  const parts = [tokenizer.pre_tokenizer, tokenizer.decoder].flatMap(components);
  const model = (tokenizer.model ?? {}) as Json;
  const metaspace = parts.find((p) => p.type === "Metaspace");
  const string = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const added = Array.isArray(tokenizer.added_tokens)
    ? (tokenizer.added_tokens as Json[]).map((t) => t.content).filter((c) => typeof c === "string")
    : [];
  const subwordPrefix =
    string(model.continuing_subword_prefix) ?? (model.type === "WordPiece" ? "##" : undefined);
  const wordSuffix = string(model.end_of_word_suffix);
  const metaspaceChar = metaspace ? (string(metaspace.replacement) ?? "▁") : undefined;
  const unknown = string(model.unk_token);
  return {
    byteLevel: parts.some((p) => p.type === "ByteLevel"),
    ...(subwordPrefix ? { subwordPrefix } : {}),
    ...(wordSuffix ? { wordSuffix } : {}),
    ...(metaspaceChar ? { metaspace: metaspaceChar } : {}),
    ...(unknown ? { unknown } : {}),
    added: new Set(added as string[]),
  };
}

let byteOfChar: Map<string, number> | undefined;

/** The inverse of GPT-2's `bytes_to_unicode`: printable bytes stand for themselves, the rest are shifted past 255. */
function byteLevelAlphabet(): Map<string, number> {
  if (byteOfChar) return byteOfChar;
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  byteOfChar = new Map();
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    byteOfChar.set(String.fromCharCode(printable(b) ? b : 256 + shifted++), b);
  }
  return byteOfChar;
}

const BYTE_FALLBACK = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * The text each token stands for, or undefined where it cannot be known (the unknown token).
 * Bytes are decoded as one stream, so a character split over two byte-level tokens is given to
 * the token that completes it.
 */
export function tokenSurfaces(tokens: readonly string[], rules: SurfaceRules): (string | undefined)[] {
  const decoder = new TextDecoder("utf-8");
  const alphabet = rules.byteLevel ? byteLevelAlphabet() : undefined;
  return tokens.map((token) => {
    if (token === rules.unknown) return undefined;
    if (rules.added.has(token)) return token;
    const fallback = BYTE_FALLBACK.exec(token);
    if (fallback)
      return decoder.decode(Uint8Array.of(Number.parseInt(fallback[1] ?? "", 16)), { stream: true });
    let text = token;
    if (
      rules.subwordPrefix &&
      text.startsWith(rules.subwordPrefix) &&
      text.length > rules.subwordPrefix.length
    ) {
      text = text.slice(rules.subwordPrefix.length);
    }
    if (rules.wordSuffix && text.endsWith(rules.wordSuffix)) text = text.slice(0, -rules.wordSuffix.length);
    if (rules.metaspace) text = text.replaceAll(rules.metaspace, " ");
    if (alphabet) {
      const bytes = [...text].map((c) => alphabet.get(c));
      if (bytes.some((b) => b === undefined)) return text;
      return decoder.decode(Uint8Array.from(bytes as number[]), { stream: true });
    }
    return text;
  });
}

/** Case, accents, compatibility forms, whitespace and control characters do not count. */
function fold(text: string): string {
  return text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[\p{M}\s\p{Cc}\p{Cf}\uFFFD]/gu, "");
}

/** How far past the previous token a match may start: bounds the work and covers an `[UNK]` word. */
const MAX_SKIP = 128;

/** Offsets in `text` for tokens whose texts are `surfaces` (see `tokenSurfaces`). */
export function alignTokens(text: string, surfaces: readonly (string | undefined)[]): TokenSpan[] {
  let key = "";
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  for (const m of text.matchAll(/[\s\S]/gu)) {
    const folded = fold(m[0]);
    key += folded;
    for (let u = 0; u < folded.length; u++) {
      keyStart.push(m.index);
      keyEnd.push(m.index + m[0].length);
    }
  }

  const spans: (TokenSpan | undefined)[] = [];
  let p = 0;
  for (const surface of surfaces) {
    if (surface === undefined) {
      spans.push(undefined);
      continue;
    }
    const k = fold(surface);
    if (k === "") {
      const at = p > 0 ? (keyEnd[p - 1] ?? 0) : 0;
      spans.push({ start: at, end: at });
      continue;
    }
    const at = key.startsWith(k, p) ? p : key.indexOf(k, p);
    if (at < 0 || at - p > MAX_SKIP) {
      spans.push(undefined);
      continue;
    }
    spans.push({ start: keyStart[at] ?? 0, end: keyEnd[at + k.length - 1] ?? text.length });
    p = at + k.length;
  }
  return fillUnmatched(text, spans);
}

/**
 * Each run of unmatched tokens shares the text between the matched tokens around it, whitespace
 * trimmed; when that text has exactly one word per token, each token gets its word.
 */
function fillUnmatched(text: string, spans: (TokenSpan | undefined)[]): TokenSpan[] {
  const out: TokenSpan[] = [];
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i];
    if (span) {
      out.push(span);
      continue;
    }
    let j = i;
    while (j < spans.length && spans[j] === undefined) j++;
    let from = out.at(-1)?.end ?? 0;
    let to = spans[j]?.start ?? text.length;
    while (from < to && /\s/u.test(text[from] ?? "")) from++;
    while (to > from && /\s/u.test(text[to - 1] ?? "")) to--;
    const words = [...text.slice(from, to).matchAll(/\S+/gu)].map((m) => ({
      start: from + m.index,
      end: from + m.index + m[0].length,
    }));
    for (let t = 0; t < j - i; t++) {
      out.push(words.length === j - i ? (words[t] as TokenSpan) : { start: from, end: to });
    }
    i = j - 1;
  }
  return out;
}
